-- A GIN index takes new rows into a pending list first and folds it into
-- the index in bulk once it passes gin_pending_list_limit (4 MB by
-- default); every search reads the whole pending list row by row. At
-- 4 MB that is up to the last ~10,000 rows written, whatever the table's
-- size: a search for text on no row took 3.9 ms on a million rows with a
-- full list (0.14 ms with none), and on an account of 10,000 freshly
-- synced rows, all of them pending, the planner chose to read every row
-- instead (6 ms). 256 kB keeps that part of each search near 0.3 ms, at
-- about a fifth more time to insert (100,000 rows: 3.4 s against 2.9 s;
-- no pending list at all took 11.6 s). docs/architecture.md, "Text search".
ALTER INDEX transactions_description_text SET (gin_pending_list_limit = 256);
ALTER INDEX transactions_merchant_text SET (gin_pending_list_limit = 256);
