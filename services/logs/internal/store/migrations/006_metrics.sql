-- The customer's metrics (#40): the zones' per-minute rollups from zone.app.metrics, kept for
-- the plan's metricsRetentionDays. Both tables are range-partitioned by UTC day on minute, like
-- log_entries, so retention drops whole days (internal/store/metric_partitions.go). Independent
-- of every earlier migration but 001 (apps, whose rows they are read through).

-- One edge's counts of one app over (part of) one minute. A report_id is unique per report, so
-- a report delivered twice is kept once; minute is in the key because a partitioned table's
-- unique index must hold its partition key (a report is about one minute anyway).
CREATE TABLE metric_requests (
    app_id     uuid        NOT NULL,
    minute     timestamptz NOT NULL,
    report_id  uuid        NOT NULL,
    -- Requests by status class, 1xx..5xx (contract/appmetrics.StatusClasses).
    counts     bigint[]    NOT NULL,
    -- The latency histogram over contract/appmetrics.LatencyBoundsMillis plus the overflow bucket.
    buckets    bigint[]    NOT NULL,
    sum_millis double precision NOT NULL,
    UNIQUE (report_id, app_id, minute)
) PARTITION BY RANGE (minute);
-- The one read: an app's rows in a window.
CREATE INDEX metric_requests_app_minute ON metric_requests (app_id, minute);

-- One instance's use over one minute, sampled by a zone's runtime.
CREATE TABLE metric_usage (
    app_id      uuid             NOT NULL,
    minute      timestamptz      NOT NULL,
    report_id   uuid             NOT NULL,
    -- The instance as log entries name it (web.1, preview.<id>).
    instance    text             NOT NULL,
    cpu_cores   double precision NOT NULL,
    mem_bytes   bigint           NOT NULL,
    limit_bytes bigint           NOT NULL,
    UNIQUE (report_id, app_id, instance, minute)
) PARTITION BY RANGE (minute);
-- Reads of one app's window; a process filter is checked on the few instances of each minute.
CREATE INDEX metric_usage_app_minute ON metric_usage (app_id, minute);

-- The metrics' part of each account's plan, fed by billing.account.plan_changed on a queue of
-- its own (logs.metrics_plans) or billing's answer; the highest version wins, as account_plans.
CREATE TABLE metric_plans (
    account_id             text        PRIMARY KEY,
    retention_days         int         NOT NULL CHECK (retention_days > 0),
    -- The plan's instanceMemoryBytes: the memory chart's limit; 0 when the plan names none.
    instance_memory_bytes  bigint      NOT NULL DEFAULT 0,
    version                bigint      NOT NULL,
    updated_at             timestamptz NOT NULL DEFAULT now()
);
