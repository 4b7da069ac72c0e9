-- Back to one shared row per security: each user's rows fold into the
-- lowest-numbered one of the same security, which loses its owner. (Every
-- row has an owner after up.sql; the index goes first.)
DROP INDEX securities_owner;
UPDATE holdings SET security_id = (
    SELECT MIN(other.id)
    FROM securities mine, securities other
    WHERE mine.id = holdings.security_id
      AND substr(other.identity_key, length('user:' || other.user_id || ':') + 1)
        = substr(mine.identity_key, length('user:' || mine.user_id || ':') + 1)
);
UPDATE investment_transactions SET security_id = (
    SELECT MIN(other.id)
    FROM securities mine, securities other
    WHERE mine.id = investment_transactions.security_id
      AND substr(other.identity_key, length('user:' || other.user_id || ':') + 1)
        = substr(mine.identity_key, length('user:' || mine.user_id || ':') + 1)
)
WHERE security_id IS NOT NULL;
DELETE FROM securities WHERE id NOT IN (
    SELECT MIN(id) FROM securities
    GROUP BY substr(identity_key, length('user:' || user_id || ':') + 1)
);
UPDATE securities SET identity_key = substr(identity_key, length('user:' || user_id || ':') + 1);
ALTER TABLE securities DROP COLUMN user_id;
