-- The instance that wrote each line (web.1, worker.2, cron.<job>.<run id>); '' for lines of no
-- instance and for every line stored before processes. A constant default adds the column
-- without rewriting a partition.
ALTER TABLE log_entries ADD COLUMN process text NOT NULL DEFAULT '';

-- Serves ?process= on the window and the stream: an app's lines of one process type in
-- (ts, id) order, the order both read in, so a filtered page still stops at its limit. The
-- process itself is the last key column so that an exact filter (worker.2) is checked in the
-- index, without visiting the rows of the type's other instances. Partial: lines of no process
-- (build, release, system, and everything before processes) are never filtered for, and the
-- index costs nothing for them.
CREATE INDEX log_entries_app_process ON log_entries (app_id, split_part(process, '.', 1), ts, id, process)
    WHERE process <> '';
