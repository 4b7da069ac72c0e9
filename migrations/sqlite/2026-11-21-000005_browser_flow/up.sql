-- The browser flow: sessions of the authorization and portal pages, e-mailed
-- sign-in codes, checkouts and the subscription a paying user holds. Session
-- tokens and sign-in codes are stored only as SHA-256.

CREATE TABLE web_sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    token_hash TEXT NOT NULL UNIQUE,
    -- 'authorize' (the OAuth flow) or 'portal' (a portal session link).
    purpose TEXT NOT NULL,
    app_id BIGINT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    -- Set once the person signed in (or, for the portal, from the link).
    user_id BIGINT REFERENCES users(id) ON DELETE CASCADE,
    -- The authorization request, kept for the consent step.
    redirect_uri TEXT,
    client_state TEXT,
    code_challenge TEXT,
    code_challenge_method TEXT,
    login_hint TEXT,
    -- A connection waiting for the person to come back from their bank.
    pending_connection_id BIGINT REFERENCES connections(id) ON DELETE SET NULL,
    -- Where an authorization session was started from: starts are limited
    -- per IP address.
    ip TEXT,
    expires_at TIMESTAMP NOT NULL,
    created_at TIMESTAMP NOT NULL
);
-- Ended sessions are purged as new ones start.
CREATE INDEX web_sessions_expiry ON web_sessions (expires_at);
CREATE INDEX web_sessions_ip ON web_sessions (ip, created_at);

CREATE TABLE sign_in_codes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    -- Kept (as NULL) when the session ends, so the send limits still count it.
    web_session_id BIGINT REFERENCES web_sessions(id) ON DELETE SET NULL,
    email TEXT NOT NULL,
    ip TEXT NOT NULL,
    code_hash TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    expires_at TIMESTAMP NOT NULL,
    used_at TIMESTAMP,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX sign_in_codes_session ON sign_in_codes (web_session_id, id);
CREATE INDEX sign_in_codes_email ON sign_in_codes (email, created_at);
CREATE INDEX sign_in_codes_ip ON sign_in_codes (ip, created_at);
-- Codes (with the address and IP they name) are purged after a day.
CREATE INDEX sign_in_codes_created ON sign_in_codes (created_at);

CREATE TABLE checkouts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    processor TEXT NOT NULL,
    -- The processor's id of the checkout (a Stripe Checkout Session id).
    external_id TEXT NOT NULL,
    -- 'open', 'paid' or 'declined'.
    status TEXT NOT NULL,
    subscription_reference TEXT,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    UNIQUE (processor, external_id)
);
CREATE INDEX checkouts_user ON checkouts (user_id, id);

-- A user of a "user pays" app may connect banks once this is set.
ALTER TABLE users ADD COLUMN subscription_processor TEXT;
ALTER TABLE users ADD COLUMN subscription_reference TEXT;
ALTER TABLE users ADD COLUMN subscribed_at TIMESTAMP;
