DROP TRIGGER accounts_changed ON accounts;
DROP TRIGGER oauth_tokens_changed ON oauth_tokens;
DROP TRIGGER users_changed ON users;
DROP TRIGGER api_key_accounts_changed ON api_key_accounts;
DROP TRIGGER api_keys_changed ON api_keys;
DROP FUNCTION tributary_data_changed();
DROP FUNCTION tributary_credentials_changed();
