ALTER TABLE transactions DROP COLUMN transfer_subcategory;
ALTER TABLE transactions DROP COLUMN transfer_account_id;
ALTER TABLE transactions DROP COLUMN transfer_transaction_id;
ALTER TABLE transactions DROP COLUMN enriched_version;
ALTER TABLE transactions DROP COLUMN category_hints;
ALTER TABLE transactions DROP COLUMN category_source;
ALTER TABLE transactions DROP COLUMN subcategory;
ALTER TABLE transactions DROP COLUMN clean_merchant;
