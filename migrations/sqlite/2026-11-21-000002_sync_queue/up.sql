-- At most one queued or running job per connection: a connection is never
-- synced by two workers at once, and asking again for a sync that is
-- already queued returns the queued job instead of a second one.
CREATE UNIQUE INDEX sync_jobs_one_active ON sync_jobs (connection_id)
    WHERE status IN ('queued', 'running');
-- Claiming looks for due queued jobs and expired leases.
CREATE INDEX sync_jobs_lease ON sync_jobs (status, lease_expires_at);
