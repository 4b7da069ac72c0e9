DROP INDEX accounts_institution;
ALTER TABLE accounts DROP COLUMN institution_id;
