-- A deploy sent with clearCache: the agent empties the app's build cache before the build,
-- and again on a retry of the same deploy after a restart (the cache is a cache: a clean
-- build is always correct).
ALTER TABLE revisions ADD COLUMN clear_cache boolean NOT NULL DEFAULT false;
