ALTER INDEX transactions_merchant_text RESET (gin_pending_list_limit);
ALTER INDEX transactions_description_text RESET (gin_pending_list_limit);
