DROP INDEX sign_in_codes_browser;
ALTER TABLE sign_in_codes DROP COLUMN browser_hash;
-- SQLite cannot drop a column with a foreign key: the sessions table is
-- made again as it was (which signs everyone out of the dashboard).
DROP TABLE dashboard_sessions;
CREATE TABLE dashboard_sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    token_hash TEXT NOT NULL UNIQUE,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TIMESTAMP NOT NULL,
    last_seen_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
