-- When the control plane told the zone to switch traffic to the deploy. The deploy stays
-- releasing until the zone reports that its edge serves it; only then is it live.
ALTER TABLE deploys ADD COLUMN activating_at timestamptz;
