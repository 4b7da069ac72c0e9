-- The Personal API keeps whole responses while no data has changed
-- (docs/architecture.md, "Caches"); the list of accounts shows each
-- account's connection (its provider and status) and institution (name
-- and logo), so a change to those, made in another process, must reach the
-- other processes' caches too, as a change to accounts does (migration
-- 000024). Only the columns a response shows notify: a sync moves a
-- connection's schedule on every run.

CREATE TRIGGER connections_changed
    AFTER UPDATE OF id, user_id, institution_id, provider, status OR DELETE OR TRUNCATE ON connections
    FOR EACH STATEMENT EXECUTE FUNCTION tributary_data_changed();
CREATE TRIGGER institutions_changed
    AFTER UPDATE OF id, name, logo_url OR DELETE OR TRUNCATE ON institutions
    FOR EACH STATEMENT EXECUTE FUNCTION tributary_data_changed();
