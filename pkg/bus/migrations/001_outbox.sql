-- The bus's tables, created in each service's own schema before the service's migrations.
CREATE TABLE outbox (
    seq         bigserial PRIMARY KEY,
    id          uuid        NOT NULL UNIQUE,
    routing_key text        NOT NULL,
    type        text        NOT NULL,
    body        bytea       NOT NULL,
    headers     jsonb       NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now(),
    sent_at     timestamptz
);
CREATE INDEX outbox_unsent ON outbox (seq) WHERE sent_at IS NULL;
CREATE INDEX outbox_sent_at ON outbox (sent_at) WHERE sent_at IS NOT NULL;

-- Wakes the relay when a transaction that wrote outbox rows commits (NOTIFY is delivered only
-- on commit, and once per transaction for equal payloads). The channel is named after the
-- table's schema, not the session's search_path, so a relay always hears its own outbox;
-- left(…, 63) because longer channel names are an error. bus.Relay listens on the same name.
CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(left('outbox_' || TG_TABLE_SCHEMA, 63), '');
    RETURN NULL;
END
$$;
CREATE TRIGGER outbox_notify AFTER INSERT ON outbox
    FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();

CREATE TABLE processed_messages (
    queue        text        NOT NULL,
    message_id   text        NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue, message_id)
);
CREATE INDEX processed_messages_at ON processed_messages (processed_at);
