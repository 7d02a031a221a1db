-- Idempotency keys: one row per (scope, key), identified only by a SHA-256 of both, so the
-- table never holds a customer's key. A row is 'running' while its first request is in
-- flight (lease_until is renewed meanwhile, so a gateway that died frees the key once it
-- lapses) and 'done' once the answer is kept. Rows older than 24 hours are pruned.
CREATE TABLE idempotency_keys (
    key_hash      bytea       PRIMARY KEY,
    owner         bytea       NOT NULL,
    state         text        NOT NULL CHECK (state IN ('running', 'done')),
    lease_until   timestamptz NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    request_hash  bytea,
    status        int,
    content_type  text,
    body          bytea,
    too_large     boolean     NOT NULL DEFAULT false
);

-- Pruning finds keys past their 24 hours.
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);
