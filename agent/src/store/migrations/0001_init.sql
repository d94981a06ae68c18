-- diskscope history, version 1.
-- Every table keeps the full wire JSON beside the columns worth querying directly.

CREATE TABLE runs (
    id               INTEGER PRIMARY KEY,
    name             TEXT,
    target           TEXT NOT NULL,
    preset           TEXT,
    state            TEXT NOT NULL CHECK (state IN ('running','completed','stopped','failed','interrupted')),
    created_ms       INTEGER NOT NULL,
    ended_ms         INTEGER,
    spec_json        TEXT NOT NULL,
    environment_json TEXT,
    summary_json     TEXT,
    error_json       TEXT,
    analysis_json    TEXT
);
CREATE INDEX runs_by_target ON runs (target, created_ms);
CREATE INDEX runs_by_state ON runs (state, created_ms);

CREATE TABLE samples (
    run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    start_ns    INTEGER NOT NULL,
    end_ns      INTEGER NOT NULL,
    read_bytes  INTEGER NOT NULL,
    read_mb_s   REAL NOT NULL,
    read_iops   REAL NOT NULL,
    read_p99_ns INTEGER NOT NULL,
    write_bytes INTEGER NOT NULL,
    write_mb_s  REAL NOT NULL,
    write_iops  REAL NOT NULL,
    write_p99_ns INTEGER NOT NULL,
    offset_lo   INTEGER,
    offset_hi   INTEGER,
    sample_json TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

CREATE TABLE histograms (
    run_id    INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    dump_json TEXT NOT NULL
);

CREATE TABLE device_snapshots (
    id            INTEGER PRIMARY KEY,
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    taken         TEXT NOT NULL CHECK (taken IN ('before','after')),
    taken_ms      INTEGER NOT NULL,
    snapshot_json TEXT NOT NULL
);
CREATE INDEX snapshots_by_run ON device_snapshots (run_id);
