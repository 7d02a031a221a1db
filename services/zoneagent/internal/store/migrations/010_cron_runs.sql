-- The cron runs the control plane asked this zone for, by run id: a redelivered command finds
-- its run and starts nothing new, and a run that was accepted or running when the agent
-- stopped is reported failed at its next start. Ended runs are pruned after a week (no
-- command is redelivered that late).
CREATE TABLE cron_runs (
    run_id      text PRIMARY KEY,
    app_id      text NOT NULL,
    deploy_id   text NOT NULL,
    job         text NOT NULL,
    status      text NOT NULL,        -- accepted, running, succeeded, failed, timed_out, cancelled
    exit_code   integer,
    created_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);
CREATE INDEX cron_runs_unfinished ON cron_runs (run_id) WHERE finished_at IS NULL;
CREATE INDEX cron_runs_finished_at ON cron_runs (finished_at) WHERE finished_at IS NOT NULL;
