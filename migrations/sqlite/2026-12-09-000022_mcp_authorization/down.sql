-- For development resets only: SQLite cannot drop a column that holds a
-- foreign key, so oauth_codes and oauth_tokens keep grant_id (null on every
-- row once the grants are gone), and running up.sql again fails on it.
UPDATE oauth_tokens SET grant_id = NULL;
UPDATE oauth_codes SET grant_id = NULL;
DROP INDEX oauth_tokens_grant;
DROP TABLE mcp_grant_accounts;
DROP TABLE mcp_grants;
DROP INDEX apps_registrations;
DELETE FROM apps WHERE kind = 'mcp';
ALTER TABLE apps DROP COLUMN last_used_at;
ALTER TABLE apps DROP COLUMN registered_ip;
ALTER TABLE apps DROP COLUMN kind;
