-- Webhooks (docs/changes.md#webhooks): endpoints that users (Personal) or
-- apps (Platform) register, the events written to an outbox in the same
-- transaction as the change that caused them, and one delivery per event
-- and endpoint, which the workers claim, sign, send and retry.
CREATE TABLE webhook_endpoints (
    id BIGSERIAL PRIMARY KEY,
    -- Exactly one owner: a Personal user, or an app (for all its users).
    user_id BIGINT REFERENCES users(id) ON DELETE CASCADE,
    app_id BIGINT REFERENCES apps(id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    -- Space-separated event types.
    event_types TEXT NOT NULL,
    -- Sealed with the server's key: signing needs the secret itself.
    secret_sealed TEXT NOT NULL,
    -- After a rotation, the previous secret signs too until this time.
    previous_secret_sealed TEXT,
    previous_secret_until TIMESTAMP,
    enabled BOOLEAN NOT NULL DEFAULT FALSE,
    disabled_reason TEXT,
    -- The first failure since the last success (three days of failures
    -- disable the endpoint).
    failing_since TIMESTAMP,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    CHECK ((user_id IS NULL) <> (app_id IS NULL))
);
CREATE INDEX webhook_endpoints_user ON webhook_endpoints (user_id);
CREATE INDEX webhook_endpoints_app ON webhook_endpoints (app_id);

CREATE TABLE webhook_events (
    id BIGSERIAL PRIMARY KEY,
    -- The webhook-id every delivery of it carries, retries included.
    message_id TEXT NOT NULL UNIQUE,
    event_type TEXT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    payload TEXT NOT NULL,
    -- An event that must be written once at most (a consent's reminder).
    once_key TEXT UNIQUE,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE webhook_deliveries (
    id BIGSERIAL PRIMARY KEY,
    endpoint_id BIGINT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
    event_id BIGINT NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
    -- pending, delivered, failed (the schedule spent), cancelled (the
    -- endpoint was disabled).
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMP NOT NULL,
    -- A worker sending it holds it until then; after, another may.
    lease_until TIMESTAMP,
    last_status INTEGER,
    last_error TEXT,
    created_at TIMESTAMP NOT NULL,
    delivered_at TIMESTAMP,
    UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (endpoint_id, id);
