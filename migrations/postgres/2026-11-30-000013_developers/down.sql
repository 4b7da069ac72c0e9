DROP TABLE developer_sessions;
DROP TABLE developer_apps;
DROP TABLE developers;
