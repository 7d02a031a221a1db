-- One managed database per app (decisions.md, "Managed database"). The record keeps no
-- credential: the zone holds the role's password and hands it, sealed, to the apps service.
CREATE TABLE databases (
    id                uuid PRIMARY KEY,
    app_id            uuid        NOT NULL,
    account_id        text        NOT NULL,
    zone              text        NOT NULL,
    -- The database's and its role's name on the zone's cluster.
    name              text        NOT NULL UNIQUE,
    status            text        NOT NULL CHECK (status IN ('provisioning', 'ready', 'read_only', 'deleting', 'failed')),
    message           text,
    connection_limit  int         NOT NULL CHECK (connection_limit > 0),
    max_bytes         bigint      NOT NULL CHECK (max_bytes > 0),
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL
);
-- An app has at most one: a second create is 409 database_exists.
CREATE UNIQUE INDEX databases_one_per_app ON databases (app_id);
