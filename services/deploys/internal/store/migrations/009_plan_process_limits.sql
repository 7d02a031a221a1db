-- The plan's process and cron limits (issue 38), copied from billing.account.plan_changed like
-- the others. 0 means billing has not announced the limit yet: the use cases read the smallest
-- plan's value then (usecase.Plan.WithProcessDefaults).
ALTER TABLE plans ADD COLUMN process_types bigint NOT NULL DEFAULT 0,
    ADD COLUMN instances_per_process bigint NOT NULL DEFAULT 0,
    ADD COLUMN instances_total bigint NOT NULL DEFAULT 0,
    ADD COLUMN cron_jobs bigint NOT NULL DEFAULT 0,
    ADD COLUMN cron_min_interval_minutes bigint NOT NULL DEFAULT 0,
    ADD COLUMN cron_timeout_seconds bigint NOT NULL DEFAULT 0,
    ADD COLUMN instance_memory_bytes bigint NOT NULL DEFAULT 0;
