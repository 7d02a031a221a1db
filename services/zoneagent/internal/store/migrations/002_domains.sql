-- Active custom hostnames (apps.domain.activated / removed): the edge serves each for its app.
CREATE TABLE domains (
    hostname  text PRIMARY KEY,
    app_id    text NOT NULL
);
CREATE INDEX domains_by_app ON domains (app_id);
