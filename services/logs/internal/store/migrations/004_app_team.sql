-- Teams own apps (#39): apps.account_id now holds the owning team's id. A personal team's id
-- is its account's, so no row changes; the gate finds an app's team by its slug alone.
COMMENT ON COLUMN apps.account_id IS 'the owning team''s id (a personal team''s id is its account''s)';
CREATE INDEX apps_live_by_slug ON apps (slug) WHERE deleted_at IS NULL;
