-- Set when the app itself was deleted: the database goes with it, and once the zone confirms
-- it gone the service tells the apps service its part of the app's cleanup is done.
ALTER TABLE databases ADD COLUMN app_deleted boolean NOT NULL DEFAULT false;
