ALTER TABLE accounts DROP COLUMN last_statement_balance;
ALTER TABLE accounts DROP COLUMN next_payment_due;
ALTER TABLE accounts DROP COLUMN minimum_payment;
ALTER TABLE accounts DROP COLUMN credit_limit;
