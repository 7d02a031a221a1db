-- Previews (#40): a revision of an app served at a host of its own until it expires, never
-- live. Its revisions are deploy rows marked with the preview's id, so they share the deploy
-- path (artifacts, concurrency, the zone's progress) and are left out of /deploys.

-- The plan's preview limits, copied from billing.account.plan_changed like the others; 0
-- means billing has not announced them yet (usecase.Plan.WithProcessDefaults).
ALTER TABLE plans ADD COLUMN previews bigint NOT NULL DEFAULT 0,
    ADD COLUMN preview_max_ttl_hours bigint NOT NULL DEFAULT 0;

CREATE TABLE previews (
    -- 6 base-36 characters (names.NewPreviewID), unique across all previews: it names the
    -- preview in its host.
    id                 text        PRIMARY KEY,
    app_id             text        NOT NULL REFERENCES apps (id),
    account_id         text        NOT NULL,
    name               text        NOT NULL,
    status             text        NOT NULL CHECK (status IN ('deploying', 'ready', 'failed', 'expired', 'deleted')),
    -- The current revision, and the one the zone was last told to serve (null before the
    -- first is ready). No foreign key: the preview row is written before its revision's.
    deploy_id          uuid        NOT NULL,
    serving_deploy_id  uuid,
    database           text        NOT NULL CHECK (database IN ('none', 'shared')),
    -- The overrides' names; their values live only in the revision's sealed snapshot.
    env_keys           text[]      NOT NULL DEFAULT '{}',
    ttl_seconds        bigint      NOT NULL CHECK (ttl_seconds > 0),
    expires_at         timestamptz NOT NULL,
    error              text,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL
);
-- A name names one preview of the app until it is gone: the same name again replaces it.
CREATE UNIQUE INDEX previews_one_name ON previews (app_id, name) WHERE status IN ('deploying', 'ready', 'failed');
CREATE INDEX previews_by_app ON previews (app_id, created_at DESC);
CREATE INDEX previews_due ON previews (expires_at) WHERE status IN ('deploying', 'ready', 'failed');

ALTER TABLE deploys ADD COLUMN preview_id text REFERENCES previews (id);
CREATE INDEX deploys_of_preview ON deploys (preview_id) WHERE preview_id IS NOT NULL;
-- A preview's revision that its zone serves finishes as previewing: never live.
ALTER TABLE deploys DROP CONSTRAINT deploys_status_check;
ALTER TABLE deploys ADD CONSTRAINT deploys_status_check
    CHECK (status IN ('building', 'releasing', 'live', 'failed', 'cancelled', 'superseded', 'previewing'));
