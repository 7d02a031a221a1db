-- The process and cron limits of the plan (issue 38), shown by GET /api/account. A copy kept
-- before them holds 0 in process_types (every plan allows at least one process type): identity
-- asks billing again when it reads such a copy (usecase planFor), and billing's answer then
-- replaces it even at the same version.
ALTER TABLE account_plans
    ADD COLUMN process_types             bigint NOT NULL DEFAULT 0,
    ADD COLUMN instances_per_process     bigint NOT NULL DEFAULT 0,
    ADD COLUMN instances_total           bigint NOT NULL DEFAULT 0,
    ADD COLUMN cron_jobs                 bigint NOT NULL DEFAULT 0,
    ADD COLUMN cron_min_interval_minutes bigint NOT NULL DEFAULT 0,
    ADD COLUMN cron_timeout_seconds      bigint NOT NULL DEFAULT 0,
    ADD COLUMN instance_memory_bytes     bigint NOT NULL DEFAULT 0;
