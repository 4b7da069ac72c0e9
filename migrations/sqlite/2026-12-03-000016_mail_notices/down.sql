DROP TABLE mail_notices;
