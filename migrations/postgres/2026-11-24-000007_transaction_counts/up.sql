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

-- Once per statement, from its transition tables: a multi-row insert of
-- ten thousand rows updates each account once, not ten thousand times.
CREATE FUNCTION transactions_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE accounts a SET
            posted_transactions = a.posted_transactions + d.posted,
            pending_transactions = a.pending_transactions + d.pending,
            transactions_version = a.transactions_version + 1
        FROM (SELECT account_id,
                     count(*) FILTER (WHERE NOT is_pending) AS posted,
                     count(*) FILTER (WHERE is_pending) AS pending
              FROM new_rows GROUP BY account_id) d
        WHERE a.id = d.account_id;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE accounts a SET
            posted_transactions = a.posted_transactions - d.posted,
            pending_transactions = a.pending_transactions - d.pending,
            transactions_version = a.transactions_version + 1
        FROM (SELECT account_id,
                     count(*) FILTER (WHERE NOT is_pending) AS posted,
                     count(*) FILTER (WHERE is_pending) AS pending
              FROM old_rows GROUP BY account_id) d
        WHERE a.id = d.account_id;
    ELSE
        UPDATE accounts a SET
            posted_transactions = a.posted_transactions + d.posted,
            pending_transactions = a.pending_transactions + d.pending,
            transactions_version = a.transactions_version + 1
        FROM (SELECT account_id, sum(posted) AS posted, sum(pending) AS pending
              FROM (SELECT account_id,
                           CASE WHEN is_pending THEN 0 ELSE 1 END AS posted,
                           CASE WHEN is_pending THEN 1 ELSE 0 END AS pending
                    FROM new_rows
                    UNION ALL
                    SELECT account_id,
                           CASE WHEN is_pending THEN 0 ELSE -1 END,
                           CASE WHEN is_pending THEN -1 ELSE 0 END
                    FROM old_rows) changes
              GROUP BY account_id) d
        WHERE a.id = d.account_id;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER transactions_counted_on_insert AFTER INSERT ON transactions
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION transactions_counted();
CREATE TRIGGER transactions_counted_on_delete AFTER DELETE ON transactions
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION transactions_counted();
CREATE TRIGGER transactions_counted_on_update AFTER UPDATE ON transactions
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION transactions_counted();

-- A page's `total` with a date filter counts the range: with is_pending in
-- the listing index, that count can read the index alone.
DROP INDEX transactions_listing;
CREATE INDEX transactions_listing ON transactions (account_id, booked_on DESC, id DESC, is_pending);
