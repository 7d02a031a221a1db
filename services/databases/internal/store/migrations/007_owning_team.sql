-- Teams own apps (issue #39): account_id is now the id of the team owning the app. Every
-- account's personal team has the account's id, so no row changes.
COMMENT ON COLUMN databases.account_id IS 'the owning team''s id (a personal team''s id is its account''s)';
