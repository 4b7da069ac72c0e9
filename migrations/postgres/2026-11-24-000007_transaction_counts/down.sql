DROP INDEX transactions_listing;
CREATE INDEX transactions_listing ON transactions (account_id, booked_on DESC, id DESC);
DROP TRIGGER transactions_counted_on_update ON transactions;
DROP TRIGGER transactions_counted_on_delete ON transactions;
DROP TRIGGER transactions_counted_on_insert ON transactions;
DROP FUNCTION transactions_counted();
ALTER TABLE accounts DROP COLUMN transactions_version;
ALTER TABLE accounts DROP COLUMN pending_transactions;
ALTER TABLE accounts DROP COLUMN posted_transactions;
