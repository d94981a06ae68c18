-- diskscope history, version 4: every 10 ms bucket of a run, in chunks of 4,096 buckets
-- (little-endian u64 bytes completed per bucket). `timelines` keeps the bounded view the
-- analyses used (merged buckets on runs longer than 10.9 minutes).
CREATE TABLE timeline_chunks (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    chunk  INTEGER NOT NULL,
    bytes  BLOB NOT NULL,
    PRIMARY KEY (run_id, chunk)
) WITHOUT ROWID;
