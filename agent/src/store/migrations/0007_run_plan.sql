-- diskscope history, version 7: each run's steps as planned when it started (pauses,
-- lengths, spans), so that a live view's progress counts through every step and pause.
ALTER TABLE runs ADD COLUMN plan_json TEXT;
