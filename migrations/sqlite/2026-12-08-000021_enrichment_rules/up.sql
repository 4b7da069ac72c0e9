-- A person's own enrichment rules (docs/enrichment.md, "Rules"), tried
-- oldest first (by id). Each condition and each action may be absent; the
-- code keeps at least one of each.
CREATE TABLE enrichment_rules (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    match_text TEXT,
    match_merchant TEXT,
    -- Decimal text, as amounts are stored everywhere.
    amount_min TEXT,
    amount_max TEXT,
    -- A rule of one account goes with the account.
    account_id BIGINT REFERENCES accounts(id) ON DELETE CASCADE,
    set_merchant TEXT,
    -- A subcategory id of the taxonomy.
    set_subcategory TEXT,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX enrichment_rules_user ON enrichment_rules (user_id, id);

-- Enriching a person's stored transactions again, after their rules or
-- the tables changed: the workers walk the person's accounts in id order
-- and each account newest first (along transactions_listing), a batch at
-- a time. A change of rules while a run is under way starts it again.
CREATE TABLE enrichment_runs (
    user_id BIGINT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    -- Where it stands: in this account (0: not started), after this row.
    account_id BIGINT NOT NULL DEFAULT 0,
    after_date DATE,
    after_id BIGINT,
    -- Progress: rows read, rows there were when it (re)started, rows whose
    -- merchant or category changed.
    checked BIGINT NOT NULL DEFAULT 0,
    total BIGINT NOT NULL,
    changed BIGINT NOT NULL DEFAULT 0,
    requested_at TIMESTAMP NOT NULL,
    -- When a worker last advanced it: the least recently advanced goes
    -- next, so one person's long history does not hold up another's.
    advanced_at TIMESTAMP NOT NULL,
    finished_at TIMESTAMP
);
CREATE INDEX enrichment_runs_next ON enrichment_runs (finished_at, advanced_at);

-- The version of the tables (domain::enrich::TABLES_VERSION) every user's
-- rows were last enriched under, or are being: a worker that finds an
-- older one starts a run for every user. 0: rows stored before enrichment.
CREATE TABLE enrichment_tables (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO enrichment_tables (id, version) VALUES (1, 0);
