-- A sync or import reads only the stored rows its reconcile can touch
-- (storage::sync_apply::stored_for): every pending row of the account, and
-- the posted rows that replaced a pending id. Both are few, and these
-- indexes find them without walking the account's history. The predicates
-- are the very terms the queries use, so both planners can prove them.
CREATE INDEX transactions_pending ON transactions (account_id) WHERE is_pending;
CREATE INDEX transactions_pending_link ON transactions (account_id, pending_provider_id)
    WHERE pending_provider_id IS NOT NULL;
