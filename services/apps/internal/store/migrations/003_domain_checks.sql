-- Custom hostnames after the claim: a pending claim expires 7 days after it became pending
-- (its creation, or an active hostname's return to pending), an active hostname's record is
-- looked up again daily, and a miss is remembered from the first look-up that found the
-- record gone, so the owner is mailed once and the hostname unserved after the grace period.
ALTER TABLE domains ADD COLUMN pending_since timestamptz;
ALTER TABLE domains ADD COLUMN missing_since timestamptz;
-- When the checker looks the record up next; NULL means at the next round.
ALTER TABLE domains ADD COLUMN next_check_at timestamptz;
UPDATE domains SET pending_since = created_at WHERE status = 'pending';
ALTER TABLE domains ADD CONSTRAINT domains_pending_since
    CHECK ((status = 'pending') = (pending_since IS NOT NULL));
ALTER TABLE domains ADD CONSTRAINT domains_missing_only_active
    CHECK (missing_since IS NULL OR status = 'active');
DROP INDEX domains_due;
CREATE INDEX domains_next_check ON domains (next_check_at NULLS FIRST);
