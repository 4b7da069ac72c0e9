-- Each account names its own institution (docs/providers.md#institutions):
-- an aggregator bridges several banks behind one connection (SimpleFIN's
-- org, Plaid's institution, SnapTrade's brokerage), so the bank an account
-- belongs to is the account's, not the connection's. Existing accounts take
-- their connection's; every sync writes it from then on.
ALTER TABLE accounts ADD COLUMN institution_id BIGINT REFERENCES institutions(id);
UPDATE accounts SET institution_id =
    (SELECT c.institution_id FROM connections c WHERE c.id = accounts.connection_id);
CREATE INDEX accounts_institution ON accounts (institution_id);
