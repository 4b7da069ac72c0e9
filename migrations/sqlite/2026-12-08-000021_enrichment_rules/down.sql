DROP TABLE enrichment_tables;
DROP TABLE enrichment_runs;
DROP TABLE enrichment_rules;
