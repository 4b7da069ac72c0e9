-- The Personal dashboard (docs/dashboard.md). A sign-in link works once and
-- for 15 minutes; a session ends after a while without use or at its
-- absolute expiry, whichever comes first. Only SHA-256 hashes of the link
-- and session tokens are kept.
CREATE TABLE dashboard_login_links (
    id BIGSERIAL PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    expires_at TIMESTAMP NOT NULL,
    used_at TIMESTAMP,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX dashboard_login_links_expiry ON dashboard_login_links (expires_at);

CREATE TABLE dashboard_sessions (
    id BIGSERIAL PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TIMESTAMP NOT NULL,
    last_seen_at TIMESTAMP NOT NULL,
    -- Absolute: the session ends then however busy it is.
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
