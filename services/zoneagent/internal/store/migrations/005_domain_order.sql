-- Domain events can arrive out of order (a consumer's workers commit concurrently; a retried
-- event comes after those behind it). Each hostname keeps the apps service's time of the last
-- change applied to it, and an event older than that changes nothing. A hostname no longer
-- served stays as an inactive row, so that an older activation arriving after its removal
-- cannot bring it back.
ALTER TABLE domains
    ADD COLUMN active     boolean     NOT NULL DEFAULT true,
    ADD COLUMN changed_at timestamptz NOT NULL DEFAULT '-infinity';
