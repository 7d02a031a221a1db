-- Each account's payment-failure hold as last announced (billing.account.hold_changed): when
-- it began (null: no hold) and a version that grows with each change.
CREATE TABLE account_holds (
    account_id uuid        PRIMARY KEY,
    since      timestamptz,
    version    bigint      NOT NULL CHECK (version >= 1),
    updated_at timestamptz NOT NULL
);
