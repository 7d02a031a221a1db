-- The plan version each revision was started with: a live service revision started under an
-- older plan version than the account's copy is redeployed with the new plan's resources.
CREATE TABLE revision_plans (
    deploy_id    uuid   PRIMARY KEY REFERENCES deploys (id) ON DELETE CASCADE,
    plan_version bigint NOT NULL
);
-- Revisions from before this table started under the plan copy they see now: nothing to redo.
INSERT INTO revision_plans (deploy_id, plan_version)
    SELECT d.id, p.version FROM deploys d JOIN plans p ON p.account_id = d.account_id
    WHERE d.status IN ('building', 'releasing', 'live');
