-- Investment activity in the change feed (GET /investment_transactions/sync,
-- docs/changes.md "Investment activity"). The same user change sequence
-- numbers it: a row has two places, where it was added (created_seq, id),
-- which never moves, and where it last changed (change_seq, id), as
-- transactions have. Rows written before this get their one number as both.
ALTER TABLE investment_transactions ADD COLUMN created_seq BIGINT NOT NULL DEFAULT 0;
UPDATE investment_transactions SET created_seq = change_seq;
CREATE INDEX investment_transactions_changes ON investment_transactions (account_id, change_seq, id);
CREATE INDEX investment_transactions_additions ON investment_transactions (account_id, created_seq, id);

-- A removed record (its connection or account removed) leaves a tombstone
-- numbered with the change that removed it, kept as long as the
-- transactions' tombstones and purged with them.
CREATE TABLE investment_tombstones (
    -- The removed record's id (ids are never reused).
    id BIGINT PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    -- No foreign key: the account may be gone with its connection.
    account_id BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    removed_at TIMESTAMP NOT NULL
);
CREATE INDEX investment_tombstones_feed ON investment_tombstones (user_id, seq, id);
CREATE INDEX investment_tombstones_age ON investment_tombstones (removed_at);
