ALTER TABLE connections DROP COLUMN quota_used;
ALTER TABLE connections DROP COLUMN quota_day;
