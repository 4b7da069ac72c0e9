-- A worker claims the oldest due queued job, by (run_after, id)
-- (storage::backend::claim_job). With this index that is the first entry
-- past the skipped ones, however many jobs wait; (status, run_after) alone
-- left every job of one schedule tick (they share a run_after) to be
-- sorted by id on each claim: 33 ms a claim with 100,000 queued
-- (docs/performance.md, "Workers").
CREATE INDEX sync_jobs_queued ON sync_jobs (run_after, id) WHERE status = 'queued';
