-- Previews (docs/previews.md, "At the edge"): a revision may belong to a preview, served
-- only at the preview's host; the preview's row names the revision its host serves, and
-- stays as a tombstone once removed so the host answers 410 (also after a restart).
ALTER TABLE revisions ADD COLUMN preview_id text NOT NULL DEFAULT '';
ALTER TABLE revisions ADD COLUMN built_from_deploy_id text NOT NULL DEFAULT '';
CREATE INDEX revisions_preview ON revisions (preview_id) WHERE preview_id <> '';

CREATE TABLE previews (
    preview_id  text        PRIMARY KEY,
    app_id      text        NOT NULL,
    slug        text        NOT NULL DEFAULT '',
    deploy_id   text        NOT NULL DEFAULT '',
    kind        text        NOT NULL DEFAULT '',
    removed_at  timestamptz,
    reason      text        NOT NULL DEFAULT '',
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX previews_app ON previews (app_id);
