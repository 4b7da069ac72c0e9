ALTER TABLE connections DROP COLUMN offered_accounts;
ALTER TABLE connections DROP COLUMN chosen_accounts;
