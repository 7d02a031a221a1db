-- Restores of a database's dumps, each into a database of its own on the zone (named after
-- the restore). One at a time per database: a second while one exists is 409 restore_exists.
CREATE TABLE restores (
    id          uuid PRIMARY KEY,
    database_id uuid        NOT NULL REFERENCES databases (id) ON DELETE CASCADE,
    dump_id     uuid        NOT NULL,
    name        text        NOT NULL UNIQUE,
    status      text        NOT NULL CHECK (status IN ('restoring', 'ready', 'failed', 'deleting')),
    message     text,
    created_at  timestamptz NOT NULL
);
CREATE UNIQUE INDEX restores_one_per_database ON restores (database_id);
