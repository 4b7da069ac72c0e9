-- Per-account figures the read path needs on every page, kept by the
-- database itself in the same transaction as each change, whatever code
-- writes the rows: how many posted and pending transactions the account
-- holds (the `total` of a page without a date filter, read with the
-- account instead of counting its rows) and a version that changes with
-- every insert, update and delete of them (the ETag of a listing).
ALTER TABLE accounts ADD COLUMN posted_transactions BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN pending_transactions BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN transactions_version BIGINT NOT NULL DEFAULT 0;

UPDATE accounts SET
    posted_transactions = (SELECT count(*) FROM transactions t
                           WHERE t.account_id = accounts.id AND NOT t.is_pending),
    pending_transactions = (SELECT count(*) FROM transactions t
                            WHERE t.account_id = accounts.id AND t.is_pending);

CREATE TRIGGER transactions_counted_on_insert AFTER INSERT ON transactions
BEGIN
    UPDATE accounts SET
        posted_transactions = posted_transactions + (NOT NEW.is_pending),
        pending_transactions = pending_transactions + (NEW.is_pending != 0),
        transactions_version = transactions_version + 1
    WHERE id = NEW.account_id;
END;

CREATE TRIGGER transactions_counted_on_delete AFTER DELETE ON transactions
BEGIN
    UPDATE accounts SET
        posted_transactions = posted_transactions - (NOT OLD.is_pending),
        pending_transactions = pending_transactions - (OLD.is_pending != 0),
        transactions_version = transactions_version + 1
    WHERE id = OLD.account_id;
END;

CREATE TRIGGER transactions_counted_on_update AFTER UPDATE ON transactions
BEGIN
    UPDATE accounts SET
        posted_transactions = posted_transactions - (NOT OLD.is_pending),
        pending_transactions = pending_transactions - (OLD.is_pending != 0),
        transactions_version = transactions_version + 1
    WHERE id = OLD.account_id;
    UPDATE accounts SET
        posted_transactions = posted_transactions + (NOT NEW.is_pending),
        pending_transactions = pending_transactions + (NEW.is_pending != 0)
    WHERE id = NEW.account_id;
END;

-- A page's `total` with a date filter counts the range: with is_pending in
-- the listing index, that count reads the index alone.
DROP INDEX transactions_listing;
CREATE INDEX transactions_listing ON transactions (account_id, booked_on DESC, id DESC, is_pending);
