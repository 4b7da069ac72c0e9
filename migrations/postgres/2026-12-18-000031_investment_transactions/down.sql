DROP TABLE investment_transactions;
