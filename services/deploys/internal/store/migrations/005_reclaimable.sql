-- When a deploy's artifact became eligible for reclamation: its account's payment-failure hold
-- reached day 30 (reclaimable_from). Nothing is reclaimed; the mark says what could be, and
-- goes when the hold ends.
ALTER TABLE deploys ADD COLUMN reclaimable_since timestamptz;
CREATE INDEX deploys_reclaimable ON deploys (account_id) WHERE reclaimable_since IS NOT NULL;
