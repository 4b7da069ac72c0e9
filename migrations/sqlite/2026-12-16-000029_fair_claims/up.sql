-- Claims fair between owners (docs/architecture.md, "How a sync flows"): a
-- scheduled job queued due gets a turn, its owner's next one (an app for
-- its users' connections, a person for their own), never below the turn
-- the queue has reached. Workers claim by turn, so an owner with 100,000
-- due connections and one with 10 take turns instead of queuing in line.
-- Jobs without a turn (asked for by a person, waiting for a retry or for
-- a provider's limit) go first once due, oldest first.
ALTER TABLE sync_jobs ADD COLUMN turn BIGINT;
CREATE TABLE sync_turns (
    owner TEXT PRIMARY KEY,
    last_turn BIGINT NOT NULL
);
-- Where the queue restarts when it has run dry: the furthest turn given.
CREATE INDEX sync_turns_last ON sync_turns (last_turn);
DROP INDEX sync_jobs_queued;
CREATE INDEX sync_jobs_queued ON sync_jobs (run_after, id) WHERE status = 'queued' AND turn IS NULL;
CREATE INDEX sync_jobs_turns ON sync_jobs (turn, id) WHERE status = 'queued' AND turn IS NOT NULL;
