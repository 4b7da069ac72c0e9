-- Limits on how hard all workers together press one provider
-- (storage::provider_limits, docs/operations.md "Provider limits").
-- A provider's gate row is locked by each admission, so admissions to
-- one provider happen one at a time across every worker process.
-- Held-back syncs are given the gate's next slot, one slot per share of
-- the provider's rate, so that a backlog wakes as fast as the provider can
-- take it, not all at once.
CREATE TABLE provider_gates (
    provider TEXT PRIMARY KEY,
    touched_at TIMESTAMP NOT NULL,
    next_slot TIMESTAMP
);
-- Each sync let through to its provider: counted while its job runs (the
-- concurrency cap) and for one period of the provider's rate. Not tied to
-- the job's row: a finished job purged by retention still counts for the
-- rest of the period.
CREATE TABLE provider_admissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    provider TEXT NOT NULL,
    job_id BIGINT NOT NULL,
    admitted_at TIMESTAMP NOT NULL
);
CREATE INDEX provider_admissions_recent ON provider_admissions (provider, admitted_at);
CREATE INDEX provider_admissions_job ON provider_admissions (job_id);
