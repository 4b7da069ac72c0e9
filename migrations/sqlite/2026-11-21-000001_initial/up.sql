-- Tributary data model, SQLite flavour. Keep in step with
-- migrations/postgres (same migration names, same tables and columns).
--
-- Money, prices and quantities are TEXT holding canonical decimal text: never
-- REAL/NUMERIC, which would go through a float. Timestamps are UTC
-- `YYYY-MM-DD HH:MM:SS.ffffff` text, dates `YYYY-MM-DD`.
-- AUTOINCREMENT keeps ids from being reused after deletes: ids are handed to
-- clients and used as keyset cursors.

CREATE TABLE apps (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    client_secret_hash TEXT,
    is_public BOOLEAN NOT NULL DEFAULT 0,
    billing_model TEXT NOT NULL DEFAULT 'integrator',
    default_max_accounts INTEGER,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE app_redirect_uris (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    app_id BIGINT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    uri TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    UNIQUE (app_id, uri)
);

CREATE TABLE users (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    app_id BIGINT REFERENCES apps(id) ON DELETE CASCADE,
    email TEXT NOT NULL,
    external_user_id TEXT,
    max_accounts INTEGER,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
-- One user per e-mail among Personal users, and one per (app, e-mail) among
-- an app's users: the same address in two apps is two users.
CREATE UNIQUE INDEX users_personal_email ON users (email) WHERE app_id IS NULL;
CREATE UNIQUE INDEX users_app_email ON users (app_id, email) WHERE app_id IS NOT NULL;

CREATE TABLE api_keys (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    -- True when the key may read only the accounts in api_key_accounts. Kept
    -- apart from that table so deleting the last scoped account never widens
    -- the key to every account.
    is_restricted BOOLEAN NOT NULL DEFAULT 0,
    created_at TIMESTAMP NOT NULL,
    last_used_at TIMESTAMP,
    revoked_at TIMESTAMP
);
CREATE INDEX api_keys_user ON api_keys (user_id);

CREATE TABLE institutions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    provider TEXT NOT NULL,
    provider_institution_id TEXT NOT NULL,
    name TEXT NOT NULL,
    logo_url TEXT,
    UNIQUE (provider, provider_institution_id)
);

CREATE TABLE connections (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    institution_id BIGINT NOT NULL REFERENCES institutions(id),
    provider TEXT NOT NULL,
    status TEXT NOT NULL,
    status_reason TEXT,
    -- Non-secret provider settings (JSON), e.g. the sandbox username.
    settings TEXT NOT NULL DEFAULT '{}',
    -- Provider credentials, AEAD-encrypted; never plain text.
    credentials_encrypted BLOB,
    last_synced_at TIMESTAMP,
    next_sync_at TIMESTAMP,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    consent_expires_at TIMESTAMP,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX connections_user ON connections (user_id);
CREATE INDEX connections_next_sync ON connections (next_sync_at);

CREATE TABLE accounts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    connection_id BIGINT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
    -- Denormalised from the connection so every read is one indexed lookup.
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    provider_account_id TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    currency TEXT NOT NULL,
    mask TEXT,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    UNIQUE (connection_id, provider_account_id)
);
CREATE INDEX accounts_user ON accounts (user_id, id);

CREATE TABLE api_key_accounts (
    api_key_id BIGINT NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    PRIMARY KEY (api_key_id, account_id)
);

CREATE TABLE transactions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    provider_transaction_id TEXT NOT NULL,
    -- On a posted row that replaced a pending one: the pending provider id.
    pending_provider_id TEXT,
    is_pending BOOLEAN NOT NULL,
    booked_on DATE NOT NULL,
    amount TEXT NOT NULL,
    currency TEXT NOT NULL,
    merchant TEXT,
    description TEXT,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    UNIQUE (account_id, provider_transaction_id)
);
-- Serves the newest-first listing and its keyset cursor (date, id).
CREATE INDEX transactions_listing ON transactions (account_id, booked_on DESC, id DESC);

CREATE TABLE balances (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    amount TEXT NOT NULL,
    available TEXT,
    currency TEXT NOT NULL,
    as_of TIMESTAMP NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX balances_latest ON balances (account_id, as_of DESC, id DESC);

CREATE TABLE securities (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    identity_key TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    currency TEXT NOT NULL,
    ticker TEXT,
    figi TEXT,
    cusip TEXT,
    isin TEXT
);

CREATE TABLE holdings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    security_id BIGINT NOT NULL REFERENCES securities(id),
    quantity TEXT NOT NULL,
    price TEXT NOT NULL,
    value TEXT NOT NULL,
    -- The value in the account's currency, when the provider converts it;
    -- sums into the holdings response's totalValue.
    value_in_account_currency TEXT,
    cost_basis TEXT,
    currency TEXT NOT NULL,
    raw TEXT NOT NULL DEFAULT '{}',
    as_of TIMESTAMP NOT NULL
);
CREATE INDEX holdings_account ON holdings (account_id);

CREATE TABLE sync_jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    connection_id BIGINT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    run_after TIMESTAMP NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    locked_by TEXT,
    lease_expires_at TIMESTAMP,
    started_at TIMESTAMP,
    finished_at TIMESTAMP,
    error TEXT,
    summary TEXT,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX sync_jobs_due ON sync_jobs (status, run_after);
CREATE INDEX sync_jobs_connection ON sync_jobs (connection_id, id);
