-- The dashboard connects banks with the browser flow's pages: like a
-- browser-flow session, a dashboard session remembers the connection whose
-- bank consent the person is giving (GoCardless) until they come back.
ALTER TABLE dashboard_sessions
    ADD COLUMN pending_connection_id BIGINT REFERENCES connections(id) ON DELETE SET NULL;

-- The dashboard signs in by e-mailed code too. Before sign-in there is no
-- session row to bind a code to, so a dashboard code is bound to the hash of
-- a random token in the browser's cookie instead.
ALTER TABLE sign_in_codes ADD COLUMN browser_hash TEXT;
CREATE INDEX sign_in_codes_browser ON sign_in_codes (browser_hash, id);
