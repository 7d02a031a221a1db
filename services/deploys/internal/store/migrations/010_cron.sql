-- Cron jobs of service apps and their runs (#38). Every due tick leaves a run row; the
-- scheduler takes due jobs FOR UPDATE SKIP LOCKED, and the unique index on (job,
-- scheduled_for) makes a tick fire once however many replicas race for it.
CREATE TABLE cron_jobs (
    id                  uuid        PRIMARY KEY,
    app_id              text        NOT NULL REFERENCES apps (id),
    name                text        NOT NULL,
    schedule            text        NOT NULL,
    timezone            text        NOT NULL,
    command             text        NOT NULL,
    concurrency_policy  text        NOT NULL CHECK (concurrency_policy IN ('forbid', 'replace', 'allow')),
    timeout_seconds     bigint      NOT NULL CHECK (timeout_seconds > 0),
    enabled             boolean     NOT NULL,
    -- The next tick to fire, kept while the job is disabled (its ticks leave skipped runs);
    -- NULL once the schedule fires no more.
    next_run_at         timestamptz,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    UNIQUE (app_id, name)
);
CREATE INDEX cron_jobs_due ON cron_jobs (next_run_at) WHERE next_run_at IS NOT NULL;

CREATE TABLE cron_runs (
    id             uuid        PRIMARY KEY,
    job_id         uuid        NOT NULL REFERENCES cron_jobs (id) ON DELETE CASCADE,
    app_id         text        NOT NULL,
    trigger        text        NOT NULL CHECK (trigger IN ('scheduled', 'manual')),
    scheduled_for  timestamptz NOT NULL,
    status         text        NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'timed_out', 'cancelled', 'skipped')),
    skip_reason    text        CHECK (skip_reason IN ('overlap', 'missed', 'disabled', 'hold')),
    exit_code      integer,
    started_at     timestamptz,
    finished_at    timestamptz,
    -- The live deploy the run started from; no foreign key, as a deleted app's deploys go
    -- before its cron rows.
    deploy_id      uuid,
    message        text,
    created_at     timestamptz NOT NULL
);
CREATE UNIQUE INDEX cron_runs_one_per_tick ON cron_runs (job_id, scheduled_for) WHERE trigger = 'scheduled';
CREATE INDEX cron_runs_by_job ON cron_runs (job_id, scheduled_for DESC, id DESC);
CREATE INDEX cron_runs_open ON cron_runs (created_at) WHERE status IN ('pending', 'running');
