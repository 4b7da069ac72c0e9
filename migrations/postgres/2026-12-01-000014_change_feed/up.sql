-- The change feed (GET /transactions/sync, docs/changes.md). Every sync or
-- import a user's data goes through takes the next number of the user's
-- change sequence (users.change_seq, counted up under the user's row lock,
-- so one user's changes commit in the order of their numbers) and stamps
-- every transaction it inserts or updates, every balance it records and
-- every holding it writes with it. A removed transaction leaves a
-- tombstone with the number of the change that removed it. A feed reads
-- the rows and tombstones past a position (number, then id).
ALTER TABLE users ADD COLUMN change_seq BIGINT NOT NULL DEFAULT 0;
-- The newest number whose tombstones are purged: a cursor from before it
-- may have missed removals and must start again.
ALTER TABLE users ADD COLUMN tombstones_purged_seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE transactions ADD COLUMN change_seq BIGINT NOT NULL DEFAULT 0;
-- The number of the change that inserted the row. A row has two places in
-- the feed: where it was added (created_seq, id), which never moves, and
-- where it last changed (change_seq, id). A reader gets it as "added" at
-- the first and as "modified" at the second, so every reader meets each
-- row's addition exactly once, whenever it reads.
ALTER TABLE transactions ADD COLUMN created_seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE balances ADD COLUMN change_seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE holdings ADD COLUMN change_seq BIGINT NOT NULL DEFAULT 0;
CREATE INDEX transactions_changes ON transactions (account_id, change_seq, id);
CREATE INDEX transactions_additions ON transactions (account_id, created_seq, id);

CREATE TABLE transaction_tombstones (
    -- The removed transaction's id (ids are never reused).
    id BIGINT PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    -- No foreign key: the account may be gone with its connection.
    account_id BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    removed_at TIMESTAMP NOT NULL
);
CREATE INDEX transaction_tombstones_feed ON transaction_tombstones (user_id, seq, id);
CREATE INDEX transaction_tombstones_age ON transaction_tombstones (removed_at);
