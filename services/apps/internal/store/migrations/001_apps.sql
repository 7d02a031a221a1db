-- The apps service's schema: apps and their tombstones, the account facts copied from
-- identity and billing, sealed environment variables and custom hostnames.

-- The copy of other services' facts about an account. Every column but the id may be unknown
-- (NULL) until the owner's event, or billing's answer, arrives.
CREATE TABLE accounts (
    account_id     text PRIMARY KEY,
    default_region text,
    -- The time of the identity event the region came from: a late older event loses.
    region_at      timestamptz,
    plan           text,
    apps_limit     bigint,
    domains_limit  bigint,
    -- Billing's version of the plan: the highest seen wins.
    plan_version   bigint
);

CREATE TABLE apps (
    id                uuid PRIMARY KEY,
    account_id        text        NOT NULL,
    slug              text        NOT NULL,
    name              text        NOT NULL,
    region            text        NOT NULL CHECK (region IN ('eu', 'us')),
    zone              text        NOT NULL,
    status            text        NOT NULL CHECK (status IN ('running', 'napping', 'deploying', 'error')),
    framework         text        NOT NULL,
    kind              text        NOT NULL CHECK (kind IN ('static', 'service')),
    current_deploy_id text,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    -- Set on delete: the row becomes a tombstone, gone from every route.
    deleted_at        timestamptz,
    -- Set once every cleanup service has confirmed: the slug is free again.
    reclaimed_at      timestamptz,
    CHECK (reclaimed_at IS NULL OR deleted_at IS NOT NULL)
);
-- A slug belongs to at most one live app or unreclaimed tombstone, across all accounts; the
-- index is also what makes two concurrent creates of one slug end in one 409.
CREATE UNIQUE INDEX apps_slug_held ON apps (slug) WHERE reclaimed_at IS NULL;
CREATE INDEX apps_account_live ON apps (account_id, created_at) WHERE deleted_at IS NULL;

-- The services whose cleanup confirmation a tombstone still awaits.
CREATE TABLE app_cleanups (
    app_id  uuid NOT NULL REFERENCES apps (id),
    service text NOT NULL,
    PRIMARY KEY (app_id, service)
);

-- Environment variables, sealed: the value exists here only as ciphertext bound to
-- (app_id, key), with the id of the key that sealed it.
CREATE TABLE env_vars (
    app_id     uuid        NOT NULL REFERENCES apps (id),
    key        text        NOT NULL,
    ciphertext bytea       NOT NULL,
    key_id     text        NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, key)
);
CREATE INDEX env_vars_key_id ON env_vars (key_id);

CREATE TABLE domains (
    id              uuid PRIMARY KEY,
    app_id          uuid        NOT NULL REFERENCES apps (id),
    hostname        text        NOT NULL,
    status          text        NOT NULL CHECK (status IN ('pending', 'active')),
    -- The TXT value that proves control; public by nature (it is published in DNS).
    token           text        NOT NULL,
    created_at      timestamptz NOT NULL,
    activated_at    timestamptz,
    last_checked_at timestamptz,
    UNIQUE (app_id, hostname)
);
-- An active hostname belongs to one app across all accounts: the first to verify wins.
CREATE UNIQUE INDEX domains_active_hostname ON domains (hostname) WHERE status = 'active';
CREATE INDEX domains_due ON domains (last_checked_at NULLS FIRST) WHERE status = 'pending';
