-- The formation each revision runs once live: how many instances of each process type, from
-- its activation and every later scaling. The newest generation wins (commands may arrive
-- out of order); an agent restart brings a live revision's workers back from it.
CREATE TABLE formations (
    deploy_id   text        PRIMARY KEY,
    app_id      text        NOT NULL,
    quantities  jsonb       NOT NULL DEFAULT '{}',
    generation  bigint      NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX formations_app ON formations (app_id);
