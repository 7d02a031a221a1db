-- The deploys service's copy of each account's payment-failure hold, from billing's
-- billing.account.hold_changed: new deploys are refused from deploys_refused_from. The copy
-- with the highest version wins; an inactive hold has no dates.
CREATE TABLE billing_holds (
    account_id           text        PRIMARY KEY,
    active               boolean     NOT NULL,
    since                timestamptz,
    deploys_refused_from timestamptz,
    serving_stops_from   timestamptz,
    reclaimable_from     timestamptz,
    version              bigint      NOT NULL
);
