-- Assistants that connect to /mcp by URL (docs/mcp.md, "OAuth"): each
-- registers itself (RFC 7591) as a public client, kept as an app of kind
-- 'mcp' beside the Platform's apps ('platform'), which never see it.
ALTER TABLE apps ADD COLUMN kind TEXT NOT NULL DEFAULT 'platform';
-- Where a registration came from, for the registration limit; and when
-- the client last got a code or a token, for expiring unused ones.
ALTER TABLE apps ADD COLUMN registered_ip TEXT;
ALTER TABLE apps ADD COLUMN last_used_at TIMESTAMP;
CREATE INDEX apps_registrations ON apps (kind, registered_ip, created_at);

-- A person's consent to one assistant: the accounts it may read. Codes
-- and tokens issued under it carry its id; revoking it (the dashboard's
-- "Connected apps") revokes them.
CREATE TABLE mcp_grants (
    id BIGSERIAL PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    app_id BIGINT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    created_at TIMESTAMP NOT NULL,
    last_used_at TIMESTAMP,
    revoked_at TIMESTAMP
);
CREATE INDEX mcp_grants_user ON mcp_grants (user_id, id);

CREATE TABLE mcp_grant_accounts (
    grant_id BIGINT NOT NULL REFERENCES mcp_grants(id) ON DELETE CASCADE,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    PRIMARY KEY (grant_id, account_id)
);

ALTER TABLE oauth_codes ADD COLUMN grant_id BIGINT REFERENCES mcp_grants(id) ON DELETE CASCADE;
ALTER TABLE oauth_tokens ADD COLUMN grant_id BIGINT REFERENCES mcp_grants(id) ON DELETE CASCADE;
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);
