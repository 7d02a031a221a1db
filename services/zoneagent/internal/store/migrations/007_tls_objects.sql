-- The zone's TLS certificates, their keys, ACME accounts and challenge tokens (certmagic's
-- storage; store.CertStorage). One set per zone, shared by every edge of the zone, so each
-- certificate is ordered once. value is sealed with AES-GCM (the key is in the zone's secrets
-- file, ZONE_TLS_STORAGE_KEY), the object's key as associated data: a row copied to another key
-- does not open.
CREATE TABLE tls_objects (
    key       text PRIMARY KEY,
    value     bytea NOT NULL,
    modified  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tls_objects_prefix ON tls_objects (key text_pattern_ops);
