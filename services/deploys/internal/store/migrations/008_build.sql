-- How the zone builds and starts each source deploy, as it reports it once it has looked at
-- the tree (zone.deploy.progressed, DEPLOY_STEP_BUILD_DETECTED); null until then, and for
-- static and image deploys.
ALTER TABLE deploys ADD COLUMN build_detected text,
    ADD COLUMN build_command text,
    ADD COLUMN build_start text;
