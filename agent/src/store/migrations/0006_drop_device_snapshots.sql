-- diskscope history, version 6: `device_snapshots` was never written; a run's device state
-- before and after is in its report (`environment.device_before` / `device_after`).
DROP INDEX IF EXISTS snapshots_by_run;
DROP TABLE IF EXISTS device_snapshots;
