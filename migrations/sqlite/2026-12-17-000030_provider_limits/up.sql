-- Limits on how hard all workers together press one provider
-- (storage::provider_limits, docs/operations.md "Provider limits").
-- A provider's gate row is locked by each admission, so admissions to
-- one provider happen one at a time across every worker process.
CREATE TABLE provider_gates (
    provider TEXT PRIMARY KEY,
    touched_at TIMESTAMP NOT NULL
);
-- Each sync let through to its provider: counted while its job runs (the
-- concurrency cap) and for one period of the provider's rate.
CREATE TABLE provider_admissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    provider TEXT NOT NULL,
    job_id BIGINT NOT NULL REFERENCES sync_jobs(id) ON DELETE CASCADE,
    admitted_at TIMESTAMP NOT NULL
);
CREATE INDEX provider_admissions_recent ON provider_admissions (provider, admitted_at);
CREATE INDEX provider_admissions_job ON provider_admissions (job_id);
