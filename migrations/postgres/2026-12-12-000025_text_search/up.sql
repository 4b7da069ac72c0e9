-- Searching an account's transactions by text (the dashboard's search, the
-- MCP get_transactions tool) finds the rows through an index instead of
-- reading the account from its newest row (docs/architecture.md, "Text
-- search"): trigram indexes on the lower-cased description and merchant,
-- which serve `lower(column) LIKE '%text%'` as the reads write it.
-- pg_trgm ships with PostgreSQL (contrib) and is a trusted extension: the
-- database's owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX transactions_description_text ON transactions USING gin (lower(description) gin_trgm_ops);
CREATE INDEX transactions_merchant_text ON transactions USING gin (lower(merchant) gin_trgm_ops);
