-- The zone that hosts each app, from apps.app.created: only that zone's agent may ship the
-- app's lines. NULL for an app known only from its delete, or recorded before this column.
ALTER TABLE apps ADD COLUMN zone text;
