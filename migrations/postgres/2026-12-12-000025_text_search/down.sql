DROP INDEX transactions_merchant_text;
DROP INDEX transactions_description_text;
-- pg_trgm stays: other things in the database may use it.
