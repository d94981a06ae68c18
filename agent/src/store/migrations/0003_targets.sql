-- diskscope history, version 3: per-target summaries of multi-target runs.
ALTER TABLE runs ADD COLUMN targets_json TEXT;
