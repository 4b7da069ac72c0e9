DROP TABLE dashboard_sessions;
DROP TABLE dashboard_login_links;
