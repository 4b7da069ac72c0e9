-- Investment activity as such: buys, sells, income, fees, transfers and
-- splits of an investment account (storage::investments,
-- docs/api-reference.md "Investment transactions"). One row per account
-- and provider id; a record seen again replaces what it said, and none is
-- removed for not being seen again. Amounts are exact decimals as text,
-- like every other amount.
CREATE TABLE investment_transactions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    provider_id TEXT NOT NULL,
    traded_on DATE NOT NULL,
    kind TEXT NOT NULL,
    subtype TEXT,
    security_id BIGINT REFERENCES securities(id),
    quantity TEXT,
    price TEXT,
    amount TEXT NOT NULL,
    fees TEXT,
    currency TEXT NOT NULL,
    description TEXT,
    raw TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    change_seq BIGINT NOT NULL,
    UNIQUE (account_id, provider_id)
);
-- The listing: an account's activity, newest first.
CREATE INDEX investment_transactions_listing ON investment_transactions (account_id, traded_on DESC, id DESC);
