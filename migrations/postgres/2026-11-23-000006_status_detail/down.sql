ALTER TABLE connections DROP COLUMN status_detail;
