-- diskscope history, version 5: the envelope of a run's throughput (the first chart of any
-- history, `GET .../samples?max_points`) scans seq and rate only; this covering index lets
-- it read ~40 bytes per sample instead of each row with its JSON.
CREATE INDEX samples_rate ON samples (run_id, seq, read_mb_s, write_mb_s);
