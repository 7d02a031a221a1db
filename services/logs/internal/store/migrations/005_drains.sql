-- Log drains (#40): where an app's lines are also sent. secret is the HTTPS signing key
-- (never returned after the create); url is kept whole, masked when shown.
CREATE TABLE drains (
    id                   uuid        PRIMARY KEY,
    app_id               uuid        NOT NULL,
    account_id           text        NOT NULL,
    url                  text        NOT NULL,
    kind                 text        NOT NULL CHECK (kind IN ('https', 'syslog')),
    secret               text        NOT NULL DEFAULT '',
    status               text        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'failing')),
    failures             int         NOT NULL DEFAULT 0,
    created_at           timestamptz NOT NULL DEFAULT now(),
    last_delivery_at     timestamptz,
    last_error           text,
    -- The lease: one sender per drain across replicas. A replica holds a drain while
    -- lease_until is ahead; it renews before each batch, and another takes over once it lapses.
    lease_owner          text,
    lease_until          timestamptz NOT NULL DEFAULT '-infinity',
    -- The last entry acknowledged by the receiver (the drain's position, for humans).
    last_entry_id        bigint
);
CREATE INDEX drains_app ON drains (app_id);

-- The drain's backlog: every stored entry of a drained app, until its receiver acknowledges
-- it. It is the durable position: a row leaves only after its batch got a 2xx (or the
-- backlog overflowed), so a restarted or taking-over sender resends at most the batch in
-- flight. Rows name the entry; the line itself is read from log_entries when sent.
CREATE TABLE drain_backlog (
    drain_id uuid        NOT NULL REFERENCES drains (id) ON DELETE CASCADE,
    ts       timestamptz NOT NULL,
    entry_id bigint      NOT NULL,
    app_id   uuid        NOT NULL,
    PRIMARY KEY (drain_id, ts, entry_id)
);

-- Delivered and dropped lines per drain and hour: delivered24h and dropped24h are sums of the
-- last 24 rows.
CREATE TABLE drain_counts (
    drain_id  uuid        NOT NULL REFERENCES drains (id) ON DELETE CASCADE,
    hour      timestamptz NOT NULL,
    delivered bigint      NOT NULL DEFAULT 0,
    dropped   bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (drain_id, hour)
);

-- Every stored entry of an app with drains enters each drain's backlog in the transaction
-- that stores it, whichever path stores it (ingest's COPY, the drains' own system lines), so
-- nothing committed can be missed and nothing uncommitted sent. One statement per COPY: an
-- app without drains costs a join against an empty match.
CREATE FUNCTION enqueue_for_drains() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO drain_backlog (drain_id, ts, entry_id, app_id)
    SELECT d.id, n.ts, n.id, n.app_id FROM new_entries n JOIN drains d ON d.app_id = n.app_id
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER log_entries_to_drains AFTER INSERT ON log_entries
    REFERENCING NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION enqueue_for_drains();

-- The plan's number of drains per app; NULL for copies recorded before drains existed (then
-- billing is asked).
ALTER TABLE account_plans ADD COLUMN drains int;
