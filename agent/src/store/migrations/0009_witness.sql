-- diskscope history, version 9: the witness of flush checks (`diskscope flushcheck`): the
-- sessions other agents' writers opened here, and for each block the newest write a flush
-- made durable (written with synchronous=FULL before the writer is answered).
CREATE TABLE witness_sessions (
    id INTEGER PRIMARY KEY,
    created_ms INTEGER NOT NULL,
    target TEXT NOT NULL,
    host TEXT NOT NULL,
    bs INTEGER NOT NULL,
    start INTEGER NOT NULL,
    blocks INTEGER NOT NULL,
    nonce INTEGER NOT NULL,
    acked INTEGER NOT NULL DEFAULT 0,
    last_seq INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE witness_records (
    session_id INTEGER NOT NULL REFERENCES witness_sessions(id) ON DELETE CASCADE,
    offset INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (session_id, offset)
) WITHOUT ROWID;
