DROP INDEX sync_jobs_queued;
