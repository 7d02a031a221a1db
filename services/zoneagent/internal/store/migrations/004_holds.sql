-- Whose app each app is (from the deploy command), and each account's payment-failure hold as
-- billing last said it: from serving_stops_from the edge answers every app of the account
-- with a "paused" page. Nothing is deleted.
CREATE TABLE app_accounts (
    app_id      text PRIMARY KEY,
    account_id  text NOT NULL
);
CREATE INDEX app_accounts_account ON app_accounts (account_id);

CREATE TABLE account_holds (
    account_id          text PRIMARY KEY,
    serving_stops_from  timestamptz,   -- NULL: no hold
    version             bigint NOT NULL
);
