DROP TRIGGER transactions_text_changed;
DROP TRIGGER transactions_text_removed;
DROP TRIGGER transactions_text_added;
DROP TABLE transactions_text;
