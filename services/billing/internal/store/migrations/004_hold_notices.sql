-- The notices (mails, written by identity) announced for each hold: each once per hold.
CREATE TABLE hold_notices (
    account_id uuid        NOT NULL,
    since      timestamptz NOT NULL,
    notice     text        NOT NULL CHECK (notice IN ('payment_failed', 'deploys_refused_soon', 'serving_stops_soon')),
    sent_at    timestamptz NOT NULL,
    PRIMARY KEY (account_id, since, notice)
);
