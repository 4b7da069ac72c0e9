-- A security's description (name, ticker, FIGI, CUSIP) belongs to the user
-- whose sources stated it: with one shared row per ISIN, one user's
-- statement file could rename the security in another user's holdings.
-- Each user now has their own rows; `identity_key` carries the owner
-- ('user:<id>:' before the security's own key, storage::backend::
-- owned_identity_key), so its existing UNIQUE keeps one row per user and
-- security, and the rows go with the user.
ALTER TABLE securities ADD COLUMN user_id BIGINT REFERENCES users(id) ON DELETE CASCADE;

-- One copy per user of every shared row their holdings or activity use.
INSERT INTO securities (identity_key, name, currency, ticker, figi, cusip, isin, user_id)
SELECT DISTINCT 'user:' || used.user_id || ':' || s.identity_key,
       s.name, s.currency, s.ticker, s.figi, s.cusip, s.isin, used.user_id
FROM securities s
JOIN (
    SELECT h.security_id AS security_id, a.user_id AS user_id
    FROM holdings h JOIN accounts a ON a.id = h.account_id
    UNION
    SELECT t.security_id, a.user_id
    FROM investment_transactions t JOIN accounts a ON a.id = t.account_id
    WHERE t.security_id IS NOT NULL
) used ON used.security_id = s.id;

UPDATE holdings SET security_id = (
    SELECT mine.id
    FROM accounts a, securities shared, securities mine
    WHERE a.id = holdings.account_id
      AND shared.id = holdings.security_id
      AND mine.identity_key = 'user:' || a.user_id || ':' || shared.identity_key
);
UPDATE investment_transactions SET security_id = (
    SELECT mine.id
    FROM accounts a, securities shared, securities mine
    WHERE a.id = investment_transactions.account_id
      AND shared.id = investment_transactions.security_id
      AND mine.identity_key = 'user:' || a.user_id || ':' || shared.identity_key
)
WHERE security_id IS NOT NULL;

DELETE FROM securities WHERE user_id IS NULL;

-- A user's deletion finds their securities by this.
CREATE INDEX securities_owner ON securities (user_id);
