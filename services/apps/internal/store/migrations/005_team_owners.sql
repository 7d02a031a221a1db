-- Teams own apps (#39). Every account has a personal team whose id is the account's id, so
-- the columns keyed by account_id already name the owning team; nothing is rewritten. New
-- teams get ids of their own, and their apps and plan copies are keyed by those.
COMMENT ON COLUMN apps.account_id IS 'the owning team''s id (a personal team''s id is its account''s)';
COMMENT ON COLUMN accounts.account_id IS 'a team''s id: its plan and default region (a personal team''s id is its account''s)';
