-- A database's dumps (pg_dump's custom format in object storage at object_key): nightly and
-- taken on request; seven succeeded kept, a failed one listed and never counted.
CREATE TABLE dumps (
    id          uuid PRIMARY KEY,
    database_id uuid        NOT NULL REFERENCES databases (id) ON DELETE CASCADE,
    status      text        NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
    size_bytes  bigint      NOT NULL DEFAULT 0,
    object_key  text        NOT NULL,
    created_at  timestamptz NOT NULL,
    finished_at timestamptz
);
CREATE INDEX dumps_database ON dumps (database_id, created_at DESC);
