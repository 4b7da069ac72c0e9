-- Nothing to do on SQLite: other processes' writes are seen through the
-- file's change counter (PRAGMA data_version), which needs no trigger.
-- The PostgreSQL migration of the same name adds the notifying triggers.
SELECT 1;
