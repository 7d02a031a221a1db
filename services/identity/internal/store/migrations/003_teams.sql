-- Teams (issue 39). Every account has a personal team whose id is the account's id, so what
-- other services keyed by account (apps, plans, billing) is keyed by the owning team without
-- moving a value. Other teams get their own ids.
CREATE TABLE teams (
    id               uuid PRIMARY KEY,
    slug             text        NOT NULL,
    name             text        NOT NULL,
    personal         boolean     NOT NULL,
    -- the account that created the team (for a personal team, the team's own id)
    owner_account_id uuid        NOT NULL REFERENCES accounts (id),
    created_at       timestamptz NOT NULL,
    CONSTRAINT teams_slug_key UNIQUE (slug)
);
CREATE UNIQUE INDEX teams_one_personal ON teams (owner_account_id) WHERE personal;

CREATE TABLE memberships (
    team_id    uuid        NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    user_id    uuid        NOT NULL REFERENCES users (id),
    role       text        NOT NULL CHECK (role IN ('viewer', 'developer', 'admin', 'owner')),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX memberships_user ON memberships (user_id);

CREATE TABLE invitations (
    id          uuid PRIMARY KEY,
    team_id     uuid        NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    email       text        NOT NULL,
    role        text        NOT NULL CHECK (role IN ('viewer', 'developer', 'admin', 'owner')),
    code_hash   bytea       NOT NULL UNIQUE,
    invited_by  uuid        NOT NULL REFERENCES users (id),
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    accepted_at timestamptz,
    revoked_at  timestamptz
);
CREATE INDEX invitations_team ON invitations (team_id) WHERE accepted_at IS NULL AND revoked_at IS NULL;

-- Identity's copy of which team owns which app, fed by apps.app.created and apps.app.deleted:
-- a team with apps cannot be deleted, and a token can be pinned only to its team's apps.
CREATE TABLE team_apps (
    app_id  uuid PRIMARY KEY,
    team_id uuid NOT NULL,
    slug    text NOT NULL
);
CREATE INDEX team_apps_team ON team_apps (team_id, slug);

-- Scoped tokens: a team, a scope, optionally pinned apps, and an end. A full token (the seed's)
-- has none of them.
ALTER TABLE api_tokens
    ADD COLUMN team_id    uuid REFERENCES teams (id) ON DELETE CASCADE,
    ADD COLUMN scope      text CHECK (scope IN ('read', 'deploy', 'write', 'admin')),
    ADD COLUMN apps       text[],
    ADD COLUMN expires_at timestamptz,
    ADD CONSTRAINT api_tokens_scoped CHECK ((team_id IS NULL) = (scope IS NULL) AND (scope IS NULL OR expires_at IS NOT NULL));
CREATE INDEX api_tokens_team ON api_tokens (team_id, user_id) WHERE revoked_at IS NULL AND team_id IS NOT NULL;

-- The team's plan copy gains the limits teams brought.
ALTER TABLE account_plans
    ADD COLUMN members              bigint NOT NULL DEFAULT 0,
    ADD COLUMN audit_retention_days bigint NOT NULL DEFAULT 0;

-- The audit log: append only. Entries arrive from identity's own changes (in their
-- transaction) and from the other services' outboxes (<service>.audit.recorded), recorded
-- once by entry id. Only retention deletes, through prune_audit_entries.
CREATE TABLE audit_entries (
    id         uuid PRIMARY KEY,
    team_id    uuid        NOT NULL,
    at         timestamptz NOT NULL,
    actor_type text        NOT NULL CHECK (actor_type IN ('user', 'token', 'system')),
    user_id    uuid,
    email      text        NOT NULL DEFAULT '',
    token_id   uuid,
    action     text        NOT NULL,
    target     text        NOT NULL,
    app        text        NOT NULL DEFAULT '',
    ip         text        NOT NULL DEFAULT '',
    outcome    text        NOT NULL CHECK (outcome IN ('success', 'denied')),
    metadata   jsonb       NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_entries_team_at ON audit_entries (team_id, at DESC, id DESC);

CREATE FUNCTION audit_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('tori.audit_prune', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit_entries is append-only' USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER audit_entries_append_only BEFORE UPDATE OR DELETE ON audit_entries
    FOR EACH ROW EXECUTE FUNCTION audit_entries_append_only();

-- A personal team for every account made before teams: named after its person, its slug the
-- name's letters and digits (dashes between runs) with the id's first 8 hex characters, which
-- keeps it unique without a lookup.
INSERT INTO teams (id, slug, name, personal, owner_account_id, created_at)
SELECT a.id,
       coalesce(nullif(trim(both '-' from left(regexp_replace(lower(coalesce(u.name, '')), '[^a-z0-9]+', '-', 'g'), 40)), ''), 'team')
           || '-' || left(replace(a.id::text, '-', ''), 8),
       coalesce(u.name, 'Personal'), true, a.id, a.created_at
FROM accounts a
LEFT JOIN LATERAL (SELECT name FROM users WHERE users.account_id = a.id ORDER BY created_at LIMIT 1) u ON true;

INSERT INTO memberships (team_id, user_id, role, created_at)
SELECT u.account_id, u.id, 'owner', u.created_at FROM users u;
