-- A database's pending credential rotation: while its row exists the old password works too.
-- rotated_at is when the zone had the new one in place (null until then); the deploys made
-- from then on, whose going live retires the old password, are in rotation_deploys.
CREATE TABLE rotations (
    database_id  uuid PRIMARY KEY REFERENCES databases (id) ON DELETE CASCADE,
    app_id       uuid        NOT NULL,
    requested_at timestamptz NOT NULL,
    rotated_at   timestamptz
);
CREATE INDEX rotations_app ON rotations (app_id);

CREATE TABLE rotation_deploys (
    deploy_id   uuid PRIMARY KEY,
    database_id uuid NOT NULL REFERENCES rotations (database_id) ON DELETE CASCADE
);
