-- The processes an image deploy's body declared (a JSON list of {name, command}), sent to the
-- zone with the revision and again by its rollbacks; null when it declared none.
ALTER TABLE deploys ADD COLUMN processes jsonb;

-- The process types each service deploy runs, as its zone reported them when it was ready
-- (or copied from the deploy a rollback returns to): the formation's types once it is live.
CREATE TABLE deploy_processes (
    deploy_id uuid NOT NULL REFERENCES deploys (id) ON DELETE CASCADE,
    type      text NOT NULL,
    command   text NOT NULL,
    PRIMARY KEY (deploy_id, type)
);

-- Each service app's formation: the deploy whose declarations it follows (the one last told
-- to activate), the generation every change grows (ActivateRevision and ScaleFormation carry
-- it; the zone ignores an older one), and when its zone last reported what runs.
CREATE TABLE formations (
    app_id      text        PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
    deploy_id   uuid,
    generation  bigint      NOT NULL DEFAULT 0,
    status_at   timestamptz
);

-- How many instances of each process type should run (quantity) and do (running, from the
-- zone's zone.app.formation_changed).
CREATE TABLE formation_processes (
    app_id      text        NOT NULL REFERENCES formations (app_id) ON DELETE CASCADE,
    type        text        NOT NULL,
    command     text        NOT NULL,
    quantity    bigint      NOT NULL CHECK (quantity >= 0),
    running     bigint      NOT NULL DEFAULT 0,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (app_id, type)
);

-- Services live before formations run one web: that is their formation, at generation 0 (what
-- their zone runs), so they can be scaled before their next deploy.
INSERT INTO deploy_processes (deploy_id, type, command)
    SELECT d.id, 'web', coalesce(d.build_start, '') FROM deploys d JOIN apps a ON a.id = d.app_id AND a.kind = 'service'
    WHERE d.status = 'live';
INSERT INTO formations (app_id, deploy_id, generation)
    SELECT d.app_id, d.id, 0 FROM deploys d JOIN apps a ON a.id = d.app_id AND a.kind = 'service'
    WHERE d.status = 'live';
INSERT INTO formation_processes (app_id, type, command, quantity, running, updated_at)
    SELECT d.app_id, 'web', coalesce(d.build_start, ''), 1, 0, coalesce(d.live_at, d.updated_at)
    FROM deploys d JOIN apps a ON a.id = d.app_id AND a.kind = 'service'
    WHERE d.status = 'live';
