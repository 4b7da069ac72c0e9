DROP INDEX sign_in_codes_browser;
ALTER TABLE sign_in_codes DROP COLUMN browser_hash;
ALTER TABLE dashboard_sessions DROP COLUMN pending_connection_id;
