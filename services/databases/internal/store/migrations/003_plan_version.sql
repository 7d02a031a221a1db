-- The version of the account's plan the limits came from (billing's answer at creation, then
-- billing.account.plan_changed): an older plan event never overwrites a newer one's limits.
ALTER TABLE databases ADD COLUMN plan_version bigint NOT NULL DEFAULT 0;
CREATE INDEX databases_account ON databases (account_id);
