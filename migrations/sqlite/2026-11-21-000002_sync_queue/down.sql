DROP INDEX sync_jobs_lease;
DROP INDEX sync_jobs_one_active;
