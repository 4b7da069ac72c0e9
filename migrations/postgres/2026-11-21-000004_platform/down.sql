DROP TABLE portal_sessions;
DROP TABLE oauth_codes;
DROP TABLE oauth_tokens;
DROP INDEX users_public_id;
ALTER TABLE users DROP COLUMN public_id;
