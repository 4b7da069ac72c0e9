-- Notices mailed to people (docs/changes.md#notices): a consent about to
-- end, a webhook endpoint disabled. Written in the same transaction as what
-- they tell of, and sent by the workers, so a notice is never lost to a
-- crash between the two. The recipient's address is read when the notice is
-- sent: erasing the user or deleting the developer takes their notices
-- with them.
CREATE TABLE mail_notices (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    -- Exactly one recipient: a user, or a developer (for their app).
    user_id BIGINT REFERENCES users(id) ON DELETE CASCADE,
    developer_id BIGINT REFERENCES developers(id) ON DELETE CASCADE,
    -- What to tell, as JSON (tributary_domain::notice::Notice).
    notice TEXT NOT NULL,
    -- A notice that must be written once at most (a consent's reminder).
    once_key TEXT UNIQUE,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMP NOT NULL,
    -- A worker sending it holds it until then; after, another may.
    lease_until TIMESTAMP,
    last_error TEXT,
    -- Sent, or given up on: kept a while so its once_key still counts.
    done_at TIMESTAMP,
    created_at TIMESTAMP NOT NULL,
    CHECK ((user_id IS NULL) <> (developer_id IS NULL))
);
CREATE INDEX mail_notices_due ON mail_notices (done_at, next_attempt_at);
CREATE INDEX mail_notices_user ON mail_notices (user_id);
CREATE INDEX mail_notices_developer ON mail_notices (developer_id);
