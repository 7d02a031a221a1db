-- The logs service's own copy of the apps it stores lines for, fed by apps.app.created and
-- apps.app.deleted. A row may exist before its created event (a delete that overtook it);
-- account_id and slug are then filled from the delete.
CREATE TABLE apps (
    app_id     uuid PRIMARY KEY,
    account_id text NOT NULL,
    slug       text NOT NULL,
    created_at timestamptz,
    deleted_at timestamptz,
    -- Set once every entry of a deleted app is gone and the confirmation is in the outbox.
    cleaned_at timestamptz
);
CREATE INDEX apps_live_slug ON apps (account_id, slug) WHERE deleted_at IS NULL;
CREATE INDEX apps_cleanup_pending ON apps (deleted_at) WHERE deleted_at IS NOT NULL AND cleaned_at IS NULL;

-- The logs service's copy of each account's plan, fed by billing.account.plan_changed (or a
-- billing.rpc.account_plan answer); the highest version wins.
CREATE TABLE account_plans (
    account_id         text PRIMARY KEY,
    plan               text        NOT NULL,
    log_retention_days int         NOT NULL CHECK (log_retention_days > 0),
    version            bigint      NOT NULL,
    updated_at         timestamptz NOT NULL DEFAULT now()
);

-- Entry ids come from one sequence so they are unique across partitions; they only break
-- ties between entries of equal timestamp, so gaps and cross-session order do not matter.
CREATE SEQUENCE log_entry_ids AS bigint;

-- Log lines, one partition per UTC day: retention drops whole partitions instead of
-- deleting rows. Partitions are created ahead of time and on demand (internal/store).
CREATE TABLE log_entries (
    id         bigint      NOT NULL DEFAULT nextval('log_entry_ids'),
    ts         timestamptz NOT NULL,
    app_id     uuid        NOT NULL,
    deploy_id  uuid,
    redactions int         NOT NULL DEFAULT 0,
    stream     text        NOT NULL CHECK (stream IN ('stdout', 'stderr', 'build', 'release', 'system')),
    message    text        NOT NULL
) PARTITION BY RANGE (ts);
ALTER SEQUENCE log_entry_ids OWNED BY log_entries.id;

-- Serves the one read (an app's window, ordered by timestamp then id, resumed after a
-- cursor) and the per-app deletes of the cleanup.
CREATE INDEX log_entries_app_ts_id ON log_entries (app_id, ts, id);
