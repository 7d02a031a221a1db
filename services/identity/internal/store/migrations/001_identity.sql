-- Identity's tables. Every secret (session and API tokens, magic-link, device, user and
-- authorization codes) is kept only as the SHA-256 of the value handed out.

CREATE TABLE accounts (
    id             uuid PRIMARY KEY,
    default_region text        NOT NULL CHECK (default_region IN ('eu', 'us')),
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL
);

CREATE TABLE users (
    id         uuid PRIMARY KEY,
    account_id uuid        NOT NULL REFERENCES accounts (id),
    email      text        NOT NULL,
    name       text        NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT users_email_key UNIQUE (email)
);
CREATE INDEX users_account ON users (account_id);

-- Identity's copy of billing's plan, fed by billing.account.plan_changed. No foreign key:
-- the copy is keyed by billing's account id and may in principle arrive first.
CREATE TABLE account_plans (
    account_id           uuid PRIMARY KEY,
    plan                 text        NOT NULL,
    max_custom_domains   bigint      NOT NULL,
    database_connections bigint      NOT NULL,
    database_bytes       bigint      NOT NULL,
    version              bigint      NOT NULL,
    updated_at           timestamptz NOT NULL
);

CREATE TABLE magic_links (
    code_hash  bytea PRIMARY KEY,
    email      text        NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX magic_links_expires ON magic_links (expires_at);

CREATE TABLE sessions (
    id         uuid PRIMARY KEY,
    token_hash bytea       NOT NULL UNIQUE,
    account_id uuid        NOT NULL REFERENCES accounts (id),
    user_id    uuid        NOT NULL REFERENCES users (id),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
);
CREATE INDEX sessions_expires ON sessions (expires_at);

CREATE TABLE api_tokens (
    id           uuid PRIMARY KEY,
    token_hash   bytea       NOT NULL UNIQUE,
    account_id   uuid        NOT NULL REFERENCES accounts (id),
    user_id      uuid        NOT NULL REFERENCES users (id),
    name         text        NOT NULL,
    prefix       text        NOT NULL,
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_tokens_account ON api_tokens (account_id, created_at) WHERE revoked_at IS NULL;

CREATE TABLE device_grants (
    id               uuid PRIMARY KEY,
    device_code_hash bytea       NOT NULL UNIQUE,
    user_code_hash   bytea       NOT NULL UNIQUE,
    client_name      text        NOT NULL,
    status           text        NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'issued')),
    interval_ms      bigint      NOT NULL,
    created_at       timestamptz NOT NULL,
    expires_at       timestamptz NOT NULL,
    last_polled_at   timestamptz,
    account_id       uuid REFERENCES accounts (id),
    user_id          uuid REFERENCES users (id),
    decided_at       timestamptz,
    token_id         uuid
);
CREATE INDEX device_grants_expires ON device_grants (expires_at);

CREATE TABLE auth_codes (
    code_hash      bytea PRIMARY KEY,
    account_id     uuid        NOT NULL REFERENCES accounts (id),
    user_id        uuid        NOT NULL REFERENCES users (id),
    redirect_uri   text        NOT NULL,
    code_challenge text        NOT NULL,
    created_at     timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL,
    used_at        timestamptz
);
CREATE INDEX auth_codes_expires ON auth_codes (expires_at);
