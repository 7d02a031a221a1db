-- The deploys service's own copy of the apps it deploys (fed by apps.app.*), of each
-- account's plan limits (fed by billing.account.plan_changed), and its deploys.
CREATE TABLE apps (
    id          text        PRIMARY KEY,
    account_id  text        NOT NULL,
    slug        text        NOT NULL,
    kind        text        NOT NULL,
    zone        text        NOT NULL,
    created_at  timestamptz NOT NULL,
    deleted_at  timestamptz,
    -- Set once the background cleanup after a delete has removed artifacts and rows.
    cleaned_at  timestamptz
);
CREATE INDEX apps_by_slug ON apps (account_id, slug) WHERE deleted_at IS NULL;
CREATE INDEX apps_to_clean ON apps (deleted_at) WHERE deleted_at IS NOT NULL AND cleaned_at IS NULL;

CREATE TABLE plans (
    account_id          text   PRIMARY KEY,
    plan                text   NOT NULL,
    concurrent_deploys  bigint NOT NULL,
    upload_bytes        bigint NOT NULL,
    build_minutes       bigint NOT NULL,
    min_scale           bigint NOT NULL,
    cpu                 double precision NOT NULL,
    -- billing's version; a late older event never overwrites a newer copy.
    version             bigint NOT NULL
);

CREATE TABLE deploys (
    id            uuid        PRIMARY KEY,
    app_id        text        NOT NULL REFERENCES apps (id),
    account_id    text        NOT NULL,
    kind          text        NOT NULL CHECK (kind IN ('static', 'image', 'source')),
    status        text        NOT NULL CHECK (status IN ('building', 'releasing', 'live', 'failed', 'cancelled', 'superseded')),
    image         text,
    release       text[],
    rollback_of   uuid        REFERENCES deploys (id) ON DELETE SET NULL,
    error         text,
    artifact_key  text,
    -- The environment snapshot, only ever as ciphertext.
    env_sealed    bytea,
    -- The key it was sealed with and the deploy it was sealed for: apps opens a snapshot
    -- only for that deploy, and a rollback reuses its target's.
    env_key_id    text,
    env_for       text,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    finished_at   timestamptz,
    live_at       timestamptz
);
CREATE INDEX deploys_by_app ON deploys (app_id, created_at DESC, id DESC);
CREATE INDEX deploys_open ON deploys (account_id) WHERE status IN ('building', 'releasing');
CREATE INDEX deploys_open_since ON deploys (created_at) WHERE status IN ('building', 'releasing');
CREATE INDEX deploys_artifact ON deploys (artifact_key) WHERE artifact_key IS NOT NULL;
CREATE UNIQUE INDEX deploys_one_live ON deploys (app_id) WHERE status = 'live';
