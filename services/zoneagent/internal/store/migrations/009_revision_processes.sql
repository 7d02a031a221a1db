-- The process types a revision runs ([{"name", "command"}], web first) and each instance's
-- memory limit: an image's come with its start command; a source's are written once its tree
-- is planned (tori.json or the Procfile). A restarted agent starts each type from them.
ALTER TABLE revisions ADD COLUMN processes jsonb NOT NULL DEFAULT '[]';
ALTER TABLE revisions ADD COLUMN instance_memory_bytes bigint NOT NULL DEFAULT 0;
