-- diskscope history, version 8: the fio job file a run was started from (its text, as sent
-- through the API), so that its fio JSON export names the file's jobs, groups and options.
ALTER TABLE runs ADD COLUMN job_file TEXT;
