DROP TABLE provider_admissions;
DROP TABLE provider_gates;
