DROP TRIGGER institutions_changed ON institutions;
DROP TRIGGER connections_changed ON connections;
