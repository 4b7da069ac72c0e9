CREATE INDEX sign_in_codes_ip ON sign_in_codes (ip, created_at);
DROP INDEX sign_in_codes_ip_budget;
DROP INDEX sign_in_codes_address_budget;
ALTER TABLE sign_in_codes DROP COLUMN surface;
