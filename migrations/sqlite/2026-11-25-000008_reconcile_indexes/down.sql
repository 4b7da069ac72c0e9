DROP INDEX transactions_pending_link;
DROP INDEX transactions_pending;
