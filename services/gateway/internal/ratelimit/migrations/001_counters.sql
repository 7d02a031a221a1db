-- Rate-limit counters: one row per bucket and fixed window. UNLOGGED because counters are
-- worth less than the write-ahead log they would cost on every request: after a crash the
-- table comes back empty, and the worst outcome is one fresh window.
CREATE UNLOGGED TABLE counters (
    bucket       text        NOT NULL,
    window_start timestamptz NOT NULL,
    window_end   timestamptz NOT NULL,
    n            bigint      NOT NULL,
    PRIMARY KEY (bucket, window_start)
);

-- Pruning finds windows that have ended.
CREATE INDEX counters_window_end ON counters (window_end);
