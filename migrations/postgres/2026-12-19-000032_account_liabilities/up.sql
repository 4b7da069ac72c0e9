-- A card's or loan's terms where its provider states them (the account
-- listing's optional `liability`): amounts as exact decimal text, like
-- every other amount; all NULL for accounts that owe nothing.
ALTER TABLE accounts ADD COLUMN credit_limit TEXT;
ALTER TABLE accounts ADD COLUMN minimum_payment TEXT;
ALTER TABLE accounts ADD COLUMN next_payment_due DATE;
ALTER TABLE accounts ADD COLUMN last_statement_balance TEXT;
