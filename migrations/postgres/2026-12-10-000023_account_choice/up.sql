-- Which of a connection's accounts the person shares (docs/dashboard.md,
-- "Choosing accounts"): the provider's account ids as a JSON array, or
-- NULL for all of them. A sync stores only these.
ALTER TABLE connections ADD COLUMN chosen_accounts TEXT;
-- The accounts a sync found but could not store because they would pass
-- the account limit, as a JSON array of {id, name, mask, kind, currency}:
-- what the person chooses from. Cleared once they have chosen.
ALTER TABLE connections ADD COLUMN offered_accounts TEXT;
