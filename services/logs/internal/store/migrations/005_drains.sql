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

-- The drain's backlog: every stored entry of a drained app (written by the COPY's own
-- transaction, store.CopyEntries), until its receiver acknowledges it. It is the durable position: a row leaves only after its batch got a 2xx (or the
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

-- The plan's number of drains per app; NULL for copies recorded before drains existed (then
-- billing is asked).
ALTER TABLE account_plans ADD COLUMN drains int;
