DROP INDEX sync_jobs_turns;
DROP INDEX sync_jobs_queued;
CREATE INDEX sync_jobs_queued ON sync_jobs (run_after, id) WHERE status = 'queued';
DROP TABLE sync_turns;
ALTER TABLE sync_jobs DROP COLUMN turn;
