ALTER TABLE users DROP COLUMN subscribed_at;
ALTER TABLE users DROP COLUMN subscription_reference;
ALTER TABLE users DROP COLUMN subscription_processor;
DROP TABLE checkouts;
DROP TABLE sign_in_codes;
DROP TABLE web_sessions;
