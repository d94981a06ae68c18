-- diskscope history, version 2: steps of preset runs, and the 10 ms timeline.
ALTER TABLE runs ADD COLUMN steps_json TEXT;

CREATE TABLE timelines (
    run_id        INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    timeline_json TEXT NOT NULL
);
