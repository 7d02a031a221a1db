-- Uploads under way: a deploy upload holds one of its plan's concurrent deploys from its first
-- byte, not only once its row is inserted after the body, so parallel uploads of up to an
-- hour each are bounded too. A row goes when the deploy is inserted or the upload is refused;
-- one left by a process that died counts only until `until`.
CREATE TABLE uploads (
    id          uuid        PRIMARY KEY,
    account_id  text        NOT NULL,
    until       timestamptz NOT NULL
);
CREATE INDEX uploads_by_account ON uploads (account_id, until);
