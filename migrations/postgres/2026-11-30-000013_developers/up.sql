-- Developers: the people who own Platform apps and manage them in the
-- developer dashboard (/developers on platform-api). An operator adds them
-- with `tributary developers add`, or, when TRIBUTARY_DEVELOPER_SIGNUP is
-- open, they sign themselves up with an e-mailed code.
CREATE TABLE developers (
    id BIGSERIAL PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    created_at TIMESTAMP NOT NULL,
    last_signed_in_at TIMESTAMP
);

-- Who owns an app. An app without a row here is the operator's (made with
-- `tributary apps create`, and every app made before developers existed).
-- A table of its own, not a column of apps: SQLite cannot drop a column
-- that references another table, and this keeps the migration reversible
-- without rebuilding apps.
CREATE TABLE developer_apps (
    app_id BIGINT PRIMARY KEY REFERENCES apps(id) ON DELETE CASCADE,
    developer_id BIGINT NOT NULL REFERENCES developers(id) ON DELETE CASCADE
);
CREATE INDEX developer_apps_developer ON developer_apps (developer_id);

-- Signed-in developer dashboard sessions, as the Personal dashboard's: only
-- the token's SHA-256 is kept; idle and absolute expiry.
CREATE TABLE developer_sessions (
    id BIGSERIAL PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    developer_id BIGINT NOT NULL REFERENCES developers(id) ON DELETE CASCADE,
    created_at TIMESTAMP NOT NULL,
    last_seen_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX developer_sessions_expiry ON developer_sessions (expires_at);
