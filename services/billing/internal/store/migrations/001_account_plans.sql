-- Billing's record of each account's plan: the one source every other service's copy comes from.
CREATE TABLE account_plans (
    account_id uuid        PRIMARY KEY,
    -- From identity's account.created, so operators can name an account by address.
    email      text        NOT NULL DEFAULT '',
    plan       text        NOT NULL CHECK (plan IN ('nestling', 'songbird', 'flock')),
    -- Grows by one with each plan change; consumers keep the highest they have seen.
    version    bigint      NOT NULL CHECK (version >= 1),
    updated_at timestamptz NOT NULL
);
CREATE INDEX account_plans_email ON account_plans (lower(email));
