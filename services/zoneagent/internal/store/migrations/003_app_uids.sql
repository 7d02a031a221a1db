-- Each app's own uid (and gid) on this zone's host: the sandbox starts its processes as it.
-- Unique, so two apps never share one; freed when the app is deleted.
CREATE TABLE app_uids (
    app_id  text PRIMARY KEY,
    uid     bigint NOT NULL UNIQUE
);
