-- Teams own apps and pay for them (issue #39): account_id is now the id of the team whose plan
-- this is. Every account's personal team has the account's id, so no row changes; a team made
-- later (identity.team.created) gets a row of its own, personal false.
COMMENT ON COLUMN account_plans.account_id IS 'the owning team''s id (a personal team''s id is its account''s)';
ALTER TABLE account_plans
    -- A personal team's provider objects carry account_id as well as team_id; operators name
    -- a person's plan by email, so only personal rows answer an email.
    ADD COLUMN personal   boolean     NOT NULL DEFAULT true,
    -- A deleted team's row stays as a tombstone, so a late team.created cannot bring it back.
    ADD COLUMN deleted_at timestamptz;
