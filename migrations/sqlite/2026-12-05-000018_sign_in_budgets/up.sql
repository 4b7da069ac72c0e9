-- Sign-in code budgets are kept per surface (the Platform's authorization
-- pages, the Personal dashboard, the developer dashboard) and per the
-- client's IP address, so that sends through one surface, or from a
-- stranger's address, never use up a person's own (docs/platform.md,
-- "Sign-in codes"). Codes sent before this counted for everyone; the ones
-- bound to a browser were the dashboards', and count as the Personal
-- dashboard's for the hour they still count.
ALTER TABLE sign_in_codes ADD COLUMN surface TEXT NOT NULL DEFAULT 'authorize';
UPDATE sign_in_codes SET surface = 'dashboard' WHERE browser_hash IS NOT NULL;
CREATE INDEX sign_in_codes_address_budget ON sign_in_codes (surface, email, ip, created_at);
CREATE INDEX sign_in_codes_ip_budget ON sign_in_codes (surface, ip, created_at);
DROP INDEX sign_in_codes_ip;
