-- Nonces of signed state-changing requests, shared by every replica of the service, so a
-- captured request is served once across them (pkg/callerid/shared.go). A row is needed only
-- while its signature can verify (until); later claims of the same nonce may take it over,
-- and rows past their time are pruned now and then.
CREATE TABLE callerid_nonces (
    nonce  text        PRIMARY KEY,
    until  timestamptz NOT NULL
);
CREATE INDEX callerid_nonces_until ON callerid_nonces (until);
