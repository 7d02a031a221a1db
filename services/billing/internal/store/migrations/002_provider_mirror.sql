-- Tori's mirror of what the payment provider knows: fed by its webhook events and by sync.
-- Answers such as "already subscribed" come from here, never from the provider.

-- The account's customer at the provider, recorded when billing creates it, with the details
-- that decide its VAT.
CREATE TABLE customers (
    account_id   uuid        PRIMARY KEY,
    customer_id  text        NOT NULL UNIQUE,
    country      text        NOT NULL DEFAULT '',
    vat_id       text        NOT NULL DEFAULT '',
    business     boolean     NOT NULL DEFAULT false,
    vat_id_valid boolean     NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);

CREATE TABLE subscriptions (
    subscription_id      text        PRIMARY KEY,
    account_id           uuid        NOT NULL,
    customer_id          text        NOT NULL,
    plan                 text        NOT NULL CHECK (plan IN ('songbird', 'flock')),
    interval             text        NOT NULL CHECK (interval IN ('month', 'year')),
    status               text        NOT NULL,
    current_period_start timestamptz,
    current_period_end   timestamptz,
    cancel_at_period_end boolean     NOT NULL DEFAULT false,
    created_at           timestamptz NOT NULL,
    -- When the provider said this; a report observed earlier never overwrites a later one.
    observed_at          timestamptz NOT NULL
);
CREATE INDEX subscriptions_account ON subscriptions (account_id);

CREATE TABLE invoices (
    invoice_id      text        PRIMARY KEY,
    account_id      uuid        NOT NULL,
    subscription_id text        NOT NULL DEFAULT '',
    number          text        NOT NULL DEFAULT '',
    status          text        NOT NULL,
    total           bigint      NOT NULL,
    currency        text        NOT NULL,
    vat_rate        numeric(5,2) NOT NULL DEFAULT 0,
    reverse_charge  boolean     NOT NULL DEFAULT false,
    hosted_url      text        NOT NULL DEFAULT '',
    pdf_url         text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    -- The first failed payment attempt, as the provider dates it: the hold counts from it.
    first_failed_at timestamptz,
    observed_at     timestamptz NOT NULL
);
CREATE INDEX invoices_account ON invoices (account_id, created_at DESC);

CREATE TABLE credit_notes (
    credit_note_id text        PRIMARY KEY,
    invoice_id     text        NOT NULL,
    account_id     uuid        NOT NULL,
    number         text        NOT NULL DEFAULT '',
    total          bigint      NOT NULL,
    created_at     timestamptz NOT NULL
);
CREATE INDEX credit_notes_invoice ON credit_notes (invoice_id);

-- Provider events applied, by the provider's event id: each is applied once.
CREATE TABLE provider_events (
    event_id   text        PRIMARY KEY,
    type       text        NOT NULL,
    applied_at timestamptz NOT NULL
);
