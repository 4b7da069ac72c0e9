-- SimpleFIN destinations (docs/simplefin.md): an app that speaks SimpleFIN
-- reads one user's data with the Access URL it got by claiming a setup
-- token. Only SHA-256 hashes of the claim token and of the access password
-- are kept; the access username is a random, non-secret handle to find the
-- row by.
CREATE TABLE simplefin_destinations (
    id BIGSERIAL PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    -- As api_keys.is_restricted: true when only the accounts in
    -- simplefin_destination_accounts are readable.
    is_restricted BOOLEAN NOT NULL DEFAULT FALSE,
    claim_hash TEXT NOT NULL UNIQUE,
    claim_expires_at TIMESTAMP NOT NULL,
    claimed_at TIMESTAMP,
    access_username TEXT UNIQUE,
    access_hash TEXT,
    created_at TIMESTAMP NOT NULL,
    last_used_at TIMESTAMP,
    revoked_at TIMESTAMP,
    -- The daily request budget: requests counted on quota_day (UTC).
    quota_day DATE,
    quota_used INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX simplefin_destinations_user ON simplefin_destinations (user_id);

CREATE TABLE simplefin_destination_accounts (
    destination_id BIGINT NOT NULL REFERENCES simplefin_destinations(id) ON DELETE CASCADE,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    PRIMARY KEY (destination_id, account_id)
);
