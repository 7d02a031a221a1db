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

CREATE TABLE processed_messages (
    queue        text        NOT NULL,
    message_id   text        NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue, message_id)
);
CREATE INDEX processed_messages_at ON processed_messages (processed_at);
