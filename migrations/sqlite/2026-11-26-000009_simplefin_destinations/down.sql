DROP TABLE simplefin_destination_accounts;
DROP TABLE simplefin_destinations;
