-- A freed uid waits here until nothing of its last owner is left on the host: no process
-- runs as it and no file of it remains (runner.Local.SweepUIDs checks, then releases it).
-- Until then no app is given it, so no new tenant inherits a process or a file of the last.
CREATE TABLE app_uid_quarantine (
    uid       bigint PRIMARY KEY,
    last_app  text NOT NULL,
    freed_at  timestamptz NOT NULL DEFAULT now()
);
