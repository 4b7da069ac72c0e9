DROP TABLE transaction_tombstones;
DROP INDEX transactions_additions;
DROP INDEX transactions_changes;
ALTER TABLE holdings DROP COLUMN change_seq;
ALTER TABLE balances DROP COLUMN change_seq;
ALTER TABLE transactions DROP COLUMN created_seq;
ALTER TABLE transactions DROP COLUMN change_seq;
ALTER TABLE users DROP COLUMN tombstones_purged_seq;
ALTER TABLE users DROP COLUMN change_seq;
