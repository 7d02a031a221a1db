-- An app's deletion marks every revision of its discarded (Tx.DeleteApp): without this index
-- that was a scan of every revision of the zone, which grows with every deploy of every app.
CREATE INDEX revisions_app ON revisions (app_id);
