DROP TABLE investment_tombstones;
DROP INDEX investment_transactions_additions;
DROP INDEX investment_transactions_changes;
ALTER TABLE investment_transactions DROP COLUMN created_seq;
