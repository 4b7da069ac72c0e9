-- Caches in other processes learn of a change as its transaction commits
-- (docs/architecture.md, "Caches"): statement-level triggers send a
-- notification, which PostgreSQL delivers at commit and only then (once per
-- channel and transaction, however many statements sent it).
--
-- tributary_credentials: the tables that decide whether a key or token
-- holds and what it may see (storage::freshness::CREDENTIAL_TABLES).
-- tributary_data: accounts, whose version every change of their
-- transactions moves.

CREATE FUNCTION tributary_credentials_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('tributary_credentials', '');
    RETURN NULL;
END;
$$;

CREATE FUNCTION tributary_data_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('tributary_data', '');
    RETURN NULL;
END;
$$;

-- Recording a key's last use (at most once a minute a key) changes nothing
-- a cache holds, so an update of last_used_at alone notifies no one.
CREATE TRIGGER api_keys_changed
    AFTER UPDATE OF id, user_id, key_hash, is_restricted, revoked_at OR DELETE OR TRUNCATE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION tributary_credentials_changed();
CREATE TRIGGER api_key_accounts_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON api_key_accounts
    FOR EACH STATEMENT EXECUTE FUNCTION tributary_credentials_changed();
-- Every sync moves its user's change_seq; only a user gone (erasure, an
-- app's user deleted) ends what the user's credentials may do.
CREATE TRIGGER users_changed AFTER DELETE OR TRUNCATE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION tributary_credentials_changed();
CREATE TRIGGER oauth_tokens_changed AFTER UPDATE OR DELETE OR TRUNCATE ON oauth_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION tributary_credentials_changed();
CREATE TRIGGER accounts_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON accounts
    FOR EACH STATEMENT EXECUTE FUNCTION tributary_data_changed();
