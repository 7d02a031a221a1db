-- The zone agent's record of the revisions it was asked to run and which one serves each
-- app. It survives a restart, so the agent loses no deploy and brings live revisions back.
CREATE TABLE revisions (
    deploy_id         text        PRIMARY KEY,
    app_id            text        NOT NULL,
    slug              text        NOT NULL,
    kind              text        NOT NULL,
    artifact_key      text        NOT NULL DEFAULT '',
    image             text        NOT NULL DEFAULT '',
    release           text[],
    release_given     boolean     NOT NULL DEFAULT false,
    -- The environment snapshot stays sealed at rest; it is opened in memory to start a process.
    env_sealed        bytea,
    env_key_id        text        NOT NULL DEFAULT '',
    env_deploy_id     text        NOT NULL DEFAULT '',
    build_minutes     bigint      NOT NULL DEFAULT 10,
    min_scale         bigint      NOT NULL DEFAULT 0,
    cpu               double precision NOT NULL DEFAULT 0,
    deadline          timestamptz,
    -- pending → preparing → ready → active → retired; or failed / discarded.
    state             text        NOT NULL DEFAULT 'pending',
    activate_wanted   boolean     NOT NULL DEFAULT false,
    discard_wanted    boolean     NOT NULL DEFAULT false,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX revisions_work ON revisions (created_at) WHERE state IN ('pending', 'preparing', 'ready');

-- Which revision serves each app; the edge's routing table.
CREATE TABLE live (
    app_id     text PRIMARY KEY,
    slug       text NOT NULL UNIQUE,
    deploy_id  text NOT NULL,
    kind       text NOT NULL
);

-- Deleted apps: a late command for one is dropped.
CREATE TABLE deleted_apps (
    app_id      text PRIMARY KEY,
    deleted_at  timestamptz NOT NULL DEFAULT now()
);

-- Release Jobs by name (release-<deployId>): a retry of the same deploy reuses the record and
-- does not run a Job that already succeeded again.
CREATE TABLE release_jobs (
    name        text PRIMARY KEY,
    deploy_id   text NOT NULL,
    state       text NOT NULL,
    started_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);
