-- When the app's status and current deploy were last set by a deploy or zone event, by that
-- event's time: such events arrive in any order, and an older one must not win. NULL until
-- the first one, so no clock difference between services can make it look stale.
ALTER TABLE apps ADD COLUMN status_at timestamptz;
ALTER TABLE apps ADD COLUMN current_deploy_at timestamptz;
