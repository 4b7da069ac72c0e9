-- Enrichment (docs/enrichment.md): what the tables of domain::enrich made
-- of each transaction, written with the transaction itself. The raw
-- merchant and description stay as the provider sent them.
ALTER TABLE transactions ADD COLUMN clean_merchant TEXT;
-- A subcategory id of the taxonomy; its category follows from it.
ALTER TABLE transactions ADD COLUMN subcategory TEXT;
-- rule, transfer, provider, merchant, keyword or none.
ALTER TABLE transactions ADD COLUMN category_source TEXT;
-- The provider's codes of the transaction's kind, kept so that enriching
-- again needs nothing from the provider.
ALTER TABLE transactions ADD COLUMN category_hints TEXT;
-- The version of the tables the row was enriched under (enrich::
-- TABLES_VERSION); 0 for a row stored before enrichment. No index: each
-- index costs every insert, and enriching old rows again can walk the
-- primary key in batches instead.
ALTER TABLE transactions ADD COLUMN enriched_version INTEGER NOT NULL DEFAULT 0;
-- The other side of a transfer between the person's own accounts, and
-- what kind of transfer it is (enrich::transfers); both sides point at
-- each other.
ALTER TABLE transactions ADD COLUMN transfer_transaction_id BIGINT;
ALTER TABLE transactions ADD COLUMN transfer_account_id BIGINT;
ALTER TABLE transactions ADD COLUMN transfer_subcategory TEXT;
