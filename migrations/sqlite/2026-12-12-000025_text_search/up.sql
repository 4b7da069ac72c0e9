-- Searching an account's transactions by text (the dashboard's search, the
-- MCP get_transactions tool) finds the rows through an index instead of
-- reading the account from its newest row (docs/architecture.md, "Text
-- search"). An FTS5 table with the trigram tokenizer indexes every three
-- characters of the description and merchant, case folded; it holds no
-- copy of the text (external content: it reads `transactions`), and
-- triggers keep it in step with every insert, update and delete, whatever
-- code writes the rows.
CREATE VIRTUAL TABLE transactions_text USING fts5(
    description,
    merchant,
    content = 'transactions',
    content_rowid = 'id',
    tokenize = 'trigram'
);

-- A deleted row's text leaves the index at once, not at the next merge: a
-- removed connection or an erased person leaves nothing of their text.
INSERT INTO transactions_text (transactions_text, rank) VALUES ('secure-delete', 1);

CREATE TRIGGER transactions_text_added AFTER INSERT ON transactions BEGIN
    INSERT INTO transactions_text (rowid, description, merchant)
        VALUES (new.id, new.description, new.merchant);
END;

CREATE TRIGGER transactions_text_removed AFTER DELETE ON transactions BEGIN
    INSERT INTO transactions_text (transactions_text, rowid, description, merchant)
        VALUES ('delete', old.id, old.description, old.merchant);
END;

CREATE TRIGGER transactions_text_changed AFTER UPDATE OF description, merchant ON transactions BEGIN
    INSERT INTO transactions_text (transactions_text, rowid, description, merchant)
        VALUES ('delete', old.id, old.description, old.merchant);
    INSERT INTO transactions_text (rowid, description, merchant)
        VALUES (new.id, new.description, new.merchant);
END;

INSERT INTO transactions_text (transactions_text) VALUES ('rebuild');
