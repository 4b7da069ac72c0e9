-- Providers with a daily call quota per connection (GoCardless Bank Account
-- Data allows 4 calls a day per account and scope): syncs counted per UTC day.
ALTER TABLE connections ADD COLUMN quota_day DATE;
ALTER TABLE connections ADD COLUMN quota_used INTEGER NOT NULL DEFAULT 0;
