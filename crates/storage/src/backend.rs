//! The one place for statements diesel's multi-backend connection cannot
//! express: upserts (`ON CONFLICT … RETURNING`), multi-row inserts and the
//! job claim. Each inner connection can, so the same query is type-checked
//! once per backend, by `with_backend!` or by a `match` where the SQL itself
//! differs (`FOR UPDATE SKIP LOCKED` on PostgreSQL only). A leaf: it imports
//! only the connection and the schema, and defines its own row types; the
//! repositories call it.

use crate::db::AnyConnection;
use crate::schema::{
    accounts, api_key_accounts, apps, balances, developer_apps, developers, institutions,
    investment_tombstones, securities, simplefin_destination_accounts, transaction_tombstones,
    transactions, users,
};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use diesel::upsert::excluded;
use tributary_domain::changes::ChangeSeq;
use tributary_domain::enrich;
use tributary_domain::ids::{
    AccountId, ApiKeyId, AppId, ConnectionId, DeveloperId, InstitutionId, SecurityId,
    SimpleFinDestinationId, SyncJobId, UserId,
};
use tributary_domain::snapshot::{Security, SnapshotInstitution, SnapshotTransaction};

/// Runs `$body` with `$c` bound to the concrete connection of either backend.
macro_rules! with_backend {
    ($conn:expr, $c:ident => $body:expr) => {
        match $conn {
            AnyConnection::Sqlite($c) => $body,
            AnyConnection::Postgresql($c) => $body,
        }
    };
}

/// Holds the app's row until the transaction ends, so that changes which
/// read before they write (an app's redirect URIs, counted) queue up:
/// PostgreSQL `FOR UPDATE`; on SQLite the write transaction
/// (`AnyConnection::atomically`) already excludes other writers. `false`
/// when there is no such app.
pub(crate) fn lock_app(conn: &mut AnyConnection, app_id: AppId) -> QueryResult<bool> {
    let app = apps::table.find(app_id.get()).select(apps::id);
    let found = match conn {
        AnyConnection::Postgresql(c) => app.for_update().first::<i64>(c).optional()?,
        AnyConnection::Sqlite(c) => app.first::<i64>(c).optional()?,
    };
    Ok(found.is_some())
}

/// Inserts or refreshes an institution; returns its id.
pub(crate) fn upsert_institution(
    conn: &mut AnyConnection,
    provider: &str,
    institution: &SnapshotInstitution,
) -> QueryResult<InstitutionId> {
    let row = (
        institutions::provider.eq(provider),
        institutions::provider_institution_id.eq(&institution.provider_institution_id),
        institutions::name.eq(&institution.name),
        institutions::logo_url.eq(&institution.logo_url),
    );
    with_backend!(conn, c => diesel::insert_into(institutions::table)
        .values(row)
        .on_conflict((institutions::provider, institutions::provider_institution_id))
        .do_update()
        .set((
            institutions::name.eq(excluded(institutions::name)),
            institutions::logo_url.eq(excluded(institutions::logo_url)),
        ))
        .returning(institutions::id)
        .get_result::<i64>(c))
    .map(InstitutionId::new)
}

/// The stored key of `owner`'s own row for `security`. Each user has their
/// own securities (migration 000033): a security's name, ticker and codes
/// are what that user's sources stated, never another user's.
pub(crate) fn owned_identity_key(owner: UserId, security: &Security) -> String {
    format!("user:{owner}:{}", security.identity_key())
}

/// Inserts or refreshes `owner`'s security by its identity key; returns its
/// id.
pub(crate) fn upsert_security(
    conn: &mut AnyConnection,
    owner: UserId,
    security: &Security,
) -> QueryResult<SecurityId> {
    let row = (
        securities::identity_key.eq(owned_identity_key(owner, security)),
        securities::user_id.eq(owner.get()),
        securities::name.eq(&security.name),
        securities::currency.eq(&security.currency),
        securities::ticker.eq(&security.ticker),
        securities::figi.eq(&security.figi),
        securities::cusip.eq(&security.cusip),
        securities::isin.eq(&security.isin),
    );
    with_backend!(conn, c => diesel::insert_into(securities::table)
        .values(row)
        .on_conflict(securities::identity_key)
        .do_update()
        .set((
            securities::name.eq(excluded(securities::name)),
            securities::ticker.eq(excluded(securities::ticker)),
            securities::figi.eq(excluded(securities::figi)),
            securities::cusip.eq(excluded(securities::cusip)),
        ))
        .returning(securities::id)
        .get_result::<i64>(c))
    .map(SecurityId::new)
}

pub(crate) struct AccountUpsert<'a> {
    pub connection_id: ConnectionId,
    pub user_id: UserId,
    pub provider_account_id: &'a str,
    pub institution_id: InstitutionId,
    pub name: &'a str,
    pub kind: &'a str,
    pub currency: &'a str,
    pub mask: Option<&'a str>,
    pub now: NaiveDateTime,
}

/// Inserts or refreshes an account; returns its id.
pub(crate) fn upsert_account(
    conn: &mut AnyConnection,
    account: &AccountUpsert<'_>,
) -> QueryResult<AccountId> {
    let row = (
        accounts::connection_id.eq(account.connection_id.get()),
        accounts::user_id.eq(account.user_id.get()),
        accounts::provider_account_id.eq(account.provider_account_id),
        accounts::institution_id.eq(account.institution_id.get()),
        accounts::name.eq(account.name),
        accounts::kind.eq(account.kind),
        accounts::currency.eq(account.currency),
        accounts::mask.eq(account.mask),
        accounts::created_at.eq(account.now),
        accounts::updated_at.eq(account.now),
    );
    with_backend!(conn, c => diesel::insert_into(accounts::table)
        .values(row)
        .on_conflict((accounts::connection_id, accounts::provider_account_id))
        .do_update()
        .set((
            accounts::institution_id.eq(excluded(accounts::institution_id)),
            accounts::name.eq(excluded(accounts::name)),
            accounts::kind.eq(excluded(accounts::kind)),
            accounts::currency.eq(excluded(accounts::currency)),
            accounts::mask.eq(excluded(accounts::mask)),
            accounts::updated_at.eq(excluded(accounts::updated_at)),
        ))
        .returning(accounts::id)
        .get_result::<i64>(c))
    .map(AccountId::new)
}

/// Inserts new transactions of one account, in batches that stay under both
/// backends' limits on bound parameters.
pub(crate) fn insert_transactions(
    conn: &mut AnyConnection,
    (account_id, rules): (AccountId, &enrich::rules::Rules),
    records: &[impl std::borrow::Borrow<SnapshotTransaction>],
    seq: ChangeSeq,
    now: NaiveDateTime,
) -> QueryResult<()> {
    for batch in records.chunks(500) {
        let rows: Vec<_> = batch
            .iter()
            .map(|record| {
                let record = record.borrow();
                (
                    transactions::account_id.eq(account_id.get()),
                    transactions::created_at.eq(now),
                    transactions::created_seq.eq(seq.get()),
                    TransactionValues::new(record, (account_id, rules), seq, now),
                )
            })
            .collect();
        with_backend!(conn, c => diesel::insert_into(transactions::table).values(&rows).execute(c))?;
    }
    Ok(())
}

/// Tombstone rows, as `changes::bury` makes them.
pub(crate) type TombstoneRow = (
    diesel::dsl::Eq<transaction_tombstones::id, i64>,
    diesel::dsl::Eq<transaction_tombstones::user_id, i64>,
    diesel::dsl::Eq<transaction_tombstones::account_id, i64>,
    diesel::dsl::Eq<transaction_tombstones::seq, i64>,
    diesel::dsl::Eq<transaction_tombstones::removed_at, NaiveDateTime>,
);

pub(crate) fn insert_tombstones(
    conn: &mut AnyConnection,
    rows: &[TombstoneRow],
) -> QueryResult<()> {
    if rows.is_empty() {
        return Ok(());
    }
    with_backend!(conn, c => diesel::insert_into(transaction_tombstones::table).values(rows).execute(c))?;
    Ok(())
}

/// Tombstone rows of investment activity, as `investment_feed` makes them.
pub(crate) type ActivityTombstoneRow = (
    diesel::dsl::Eq<investment_tombstones::id, i64>,
    diesel::dsl::Eq<investment_tombstones::user_id, i64>,
    diesel::dsl::Eq<investment_tombstones::account_id, i64>,
    diesel::dsl::Eq<investment_tombstones::seq, i64>,
    diesel::dsl::Eq<investment_tombstones::removed_at, NaiveDateTime>,
);

pub(crate) fn insert_activity_tombstones(
    conn: &mut AnyConnection,
    rows: &[ActivityTombstoneRow],
) -> QueryResult<()> {
    if rows.is_empty() {
        return Ok(());
    }
    with_backend!(conn, c => diesel::insert_into(investment_tombstones::table).values(rows).execute(c))?;
    Ok(())
}

/// Balance rows, as `sync_apply` keeps the past balances a provider states.
pub(crate) type BalanceRow = (
    diesel::dsl::Eq<balances::account_id, i64>,
    diesel::dsl::Eq<balances::amount, String>,
    diesel::dsl::Eq<balances::available, Option<String>>,
    diesel::dsl::Eq<balances::currency, String>,
    diesel::dsl::Eq<balances::as_of, NaiveDateTime>,
    diesel::dsl::Eq<balances::created_at, NaiveDateTime>,
    diesel::dsl::Eq<balances::change_seq, i64>,
);

pub(crate) fn insert_balances(conn: &mut AnyConnection, rows: &[BalanceRow]) -> QueryResult<()> {
    // In chunks: SQLite binds at most 32,766 parameters a statement.
    for chunk in rows.chunks(500) {
        with_backend!(conn, c => diesel::insert_into(balances::table).values(chunk).execute(c))?;
    }
    Ok(())
}

pub(crate) fn insert_api_key_scope(
    conn: &mut AnyConnection,
    key_id: ApiKeyId,
    account_ids: &[AccountId],
) -> QueryResult<()> {
    let rows: Vec<_> = account_ids
        .iter()
        .map(|account| {
            (
                api_key_accounts::api_key_id.eq(key_id.get()),
                api_key_accounts::account_id.eq(account.get()),
            )
        })
        .collect();
    with_backend!(conn, c => diesel::insert_into(api_key_accounts::table).values(&rows).execute(c))?;
    Ok(())
}

pub(crate) fn insert_simplefin_scope(
    conn: &mut AnyConnection,
    destination_id: SimpleFinDestinationId,
    account_ids: &[AccountId],
) -> QueryResult<()> {
    let rows: Vec<_> = account_ids
        .iter()
        .map(|account| {
            (
                simplefin_destination_accounts::destination_id.eq(destination_id.get()),
                simplefin_destination_accounts::account_id.eq(account.get()),
            )
        })
        .collect();
    with_backend!(conn, c => diesel::insert_into(simplefin_destination_accounts::table).values(&rows).execute(c))?;
    Ok(())
}

#[derive(diesel::QueryableByName)]
struct Leased {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    id: i64,
    #[diesel(sql_type = diesel::sql_types::Integer)]
    attempts: i32,
}

/// Claims up to `limit` due rows of an outbox in one statement, leasing
/// each until `lease_until` and counting the attempt: (id, attempts).
/// `pick(lock)` is the statement, `$1` now, `$2` the lease's end, `$3` the
/// limit, with `lock` after its inner SELECT's LIMIT: PostgreSQL skips rows
/// other workers hold; SQLite has one writer at a time.
fn claim_leased(
    conn: &mut AnyConnection,
    pick: impl Fn(&str) -> String,
    pg_lock: &str,
    now: NaiveDateTime,
    lease_until: NaiveDateTime,
    limit: i64,
) -> QueryResult<Vec<(i64, i32)>> {
    use diesel::sql_types::{BigInt, Timestamp};
    let rows: Vec<Leased> = match conn {
        AnyConnection::Postgresql(c) => diesel::sql_query(pick(pg_lock))
            .bind::<Timestamp, _>(now)
            .bind::<Timestamp, _>(lease_until)
            .bind::<BigInt, _>(limit)
            .load(c)?,
        AnyConnection::Sqlite(c) => diesel::sql_query(pick("").replace('$', "?"))
            .bind::<Timestamp, _>(now)
            .bind::<Timestamp, _>(lease_until)
            .bind::<BigInt, _>(limit)
            .load(c)?,
    };
    Ok(rows.into_iter().map(|r| (r.id, r.attempts)).collect())
}

/// Claims up to `limit` due webhook deliveries of enabled endpoints (see
/// [`claim_leased`]).
pub(crate) fn claim_deliveries(
    conn: &mut AnyConnection,
    now: NaiveDateTime,
    lease_until: NaiveDateTime,
    limit: i64,
) -> QueryResult<Vec<(i64, i32)>> {
    let pick = |lock: &str| {
        format!(
            "UPDATE webhook_deliveries SET lease_until = $2, attempts = attempts + 1 \
             WHERE id IN (SELECT d.id FROM webhook_deliveries d \
                          JOIN webhook_endpoints e ON e.id = d.endpoint_id \
                          WHERE d.status = 'pending' AND d.next_attempt_at <= $1 \
                          AND (d.lease_until IS NULL OR d.lease_until < $1) AND e.enabled \
                          ORDER BY d.next_attempt_at, d.id LIMIT $3 {lock}) \
             RETURNING id, attempts"
        )
    };
    claim_leased(
        conn,
        pick,
        "FOR UPDATE OF d SKIP LOCKED",
        now,
        lease_until,
        limit,
    )
}

/// Claims up to `limit` due mail notices (see [`claim_leased`]).
pub(crate) fn claim_notices(
    conn: &mut AnyConnection,
    now: NaiveDateTime,
    lease_until: NaiveDateTime,
    limit: i64,
) -> QueryResult<Vec<(i64, i32)>> {
    let pick = |lock: &str| {
        format!(
            "UPDATE mail_notices SET lease_until = $2, attempts = attempts + 1 \
             WHERE id IN (SELECT id FROM mail_notices \
                          WHERE done_at IS NULL AND next_attempt_at <= $1 \
                          AND (lease_until IS NULL OR lease_until < $1) \
                          ORDER BY next_attempt_at, id LIMIT $3 {lock}) \
             RETURNING id, attempts"
        )
    };
    claim_leased(
        conn,
        pick,
        "FOR UPDATE SKIP LOCKED",
        now,
        lease_until,
        limit,
    )
}

#[derive(diesel::QueryableByName)]
pub(crate) struct ClaimedRow {
    #[diesel(sql_type = diesel::sql_types::BigInt, deserialize_as = i64)]
    pub(crate) id: SyncJobId,
    #[diesel(sql_type = diesel::sql_types::BigInt, deserialize_as = i64)]
    pub(crate) connection_id: ConnectionId,
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub(crate) kind: String,
    #[diesel(sql_type = diesel::sql_types::Integer)]
    pub(crate) attempts: i32,
}

/// The claim's statement ([`claim_job`]); `$1` worker, `$2` now, `$3` the
/// lease's end, `$4` the one job (with `only`). The bench explains it
/// (`queue_load::explain_claim`).
pub(crate) fn claim_sql(postgres: bool, only: bool) -> String {
    const CLAIM: &str = "UPDATE sync_jobs SET status = 'running', locked_by = $1, \
                         lease_expires_at = $3, started_at = $2, attempts = attempts + 1";
    const RETURNING: &str = "RETURNING id, connection_id, kind, attempts";
    let pick = |lock: &str| {
        if only {
            return format!(
                "{CLAIM} WHERE id = (SELECT id FROM sync_jobs WHERE id = $4 \
               AND (status = 'queued' OR (status = 'running' AND lease_expires_at < $2)) {lock}) \
             {RETURNING}"
            );
        }
        // Three candidates, each the first entry of its own index, and the
        // first of them taken: a due job without a turn (asked for by a
        // person, or back from a retry or a provider's limit) and an
        // expired lease, oldest first, go ahead of the scheduled jobs, which
        // are taken by turn (fair between owners; `enqueue`).
        format!(
            "WITH due AS (SELECT id, 0 AS class, 0 AS turn, run_after FROM sync_jobs \
                          WHERE status = 'queued' AND turn IS NULL AND run_after <= $2 \
                          ORDER BY run_after, id LIMIT 1 {lock}), \
                  expired AS (SELECT id, 0 AS class, 0 AS turn, run_after FROM sync_jobs \
                              WHERE status = 'running' AND lease_expires_at < $2 \
                              ORDER BY run_after, id LIMIT 1 {lock}), \
                  fair AS (SELECT id, 1 AS class, turn, run_after FROM sync_jobs \
                           WHERE status = 'queued' AND turn IS NOT NULL AND run_after <= $2 \
                           ORDER BY turn, id LIMIT 1 {lock}) \
             {CLAIM} WHERE id = (SELECT id FROM (SELECT id, class, turn, run_after FROM due \
                                                 UNION ALL SELECT id, class, turn, run_after FROM expired \
                                                 UNION ALL SELECT id, class, turn, run_after FROM fair) AS candidates \
                                 ORDER BY class, turn, run_after, id LIMIT 1) \
             {RETURNING}"
        )
    };
    if postgres {
        pick("FOR UPDATE SKIP LOCKED")
    } else {
        pick("").replace('$', "?")
    }
}

/// Claims one job in a single statement. Which job: `only` if given (when it
/// is queued, or running with an expired lease), else the first of three
/// candidates ([`claim_sql`]). PostgreSQL skips rows other workers have
/// locked; SQLite has one writer at a time, so the statement is atomic
/// there as is.
///
/// Each candidate is looked up apart, through its own index
/// (`sync_jobs_queued`, `sync_jobs_lease`, `sync_jobs_turns`), and the first
/// of them taken: one condition joining them with `OR` kept the planner
/// from walking an index in claim order, so each claim sorted every due job
/// (33 ms with 100,000 queued; docs/performance.md).
pub(crate) fn claim_job(
    conn: &mut AnyConnection,
    worker: &str,
    now: NaiveDateTime,
    lease_until: NaiveDateTime,
    only: Option<SyncJobId>,
) -> QueryResult<Option<ClaimedRow>> {
    use diesel::sql_types::{BigInt, Text, Timestamp};
    let postgres = matches!(conn, AnyConnection::Postgresql(_));
    let sql = claim_sql(postgres, only.is_some());
    // Bound in order: $1 worker, $2 now, $3 lease_until, $4 only (if any).
    macro_rules! claimed {
        ($c:expr) => {{
            let query = diesel::sql_query(sql)
                .bind::<Text, _>(worker)
                .bind::<Timestamp, _>(now)
                .bind::<Timestamp, _>(lease_until);
            match only {
                Some(job) => query.bind::<BigInt, _>(job.get()).get_result($c).optional(),
                None => query.get_result($c).optional(),
            }
        }};
    }
    match conn {
        AnyConnection::Postgresql(c) => claimed!(c),
        AnyConnection::Sqlite(c) => claimed!(c),
    }
}

/// [`take_turn`]'s statement; `$1` (SQLite: `?1`) the owner. The bench
/// explains it (`queue_load::explain_turn`).
pub(crate) fn turn_sql(postgres: bool) -> String {
    // Where the queue is: its lowest turn, or, with none queued, the
    // furthest turn given.
    const FRONTIER: &str = "COALESCE(\
        (SELECT MIN(turn) FROM sync_jobs WHERE status = 'queued' AND turn IS NOT NULL), \
        (SELECT MAX(last_turn) FROM sync_turns), 0)";
    // One past the furthest turn queued: an owner whose earlier turns left
    // the queue unclaimed (retried, held back) is not sent further back.
    const CEILING: &str = "COALESCE(\
        (SELECT MAX(turn) FROM sync_jobs WHERE status = 'queued' AND turn IS NOT NULL) + 1, \
        excluded.last_turn)";
    let statement = |greatest: &str, least: &str, parameter: &str| {
        format!(
            "INSERT INTO sync_turns (owner, last_turn) VALUES ({parameter}, {FRONTIER}) \
             ON CONFLICT (owner) DO UPDATE \
             SET last_turn = {greatest}({least}(sync_turns.last_turn + 1, {CEILING}), \
                                         excluded.last_turn) \
             RETURNING last_turn"
        )
    };
    if postgres {
        statement("GREATEST", "LEAST", "$1")
    } else {
        statement("MAX", "MIN", "?1")
    }
}

#[derive(QueryableByName)]
struct Turn {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    last_turn: i64,
}

/// `owner`'s next turn among scheduled jobs: one past its last, never
/// below where the queue is (the lowest turn queued, or, with none queued,
/// the furthest turn given) and never beyond one past the furthest turn
/// queued, so an owner who queued a million jobs last week does not wait
/// behind everyone this week, nor an owner who had none go ahead of a
/// queue that moved on.
pub(crate) fn take_turn(conn: &mut AnyConnection, owner: &str) -> QueryResult<i64> {
    use diesel::sql_types::Text;
    let sql = turn_sql(matches!(conn, AnyConnection::Postgresql(_)));
    let turn: Turn = match conn {
        AnyConnection::Postgresql(c) => diesel::sql_query(sql)
            .bind::<Text, _>(owner)
            .get_result(c)?,
        AnyConnection::Sqlite(c) => diesel::sql_query(sql)
            .bind::<Text, _>(owner)
            .get_result(c)?,
    };
    Ok(turn.last_turn)
}

/// Locks `provider`'s gate row for the rest of the transaction (creating
/// it the first time): admissions to one provider then happen one at a
/// time across every worker (on SQLite the write also takes the file's
/// write lock, which orders them the same way).
pub(crate) fn lock_provider_gate(
    conn: &mut AnyConnection,
    provider: &str,
    now: NaiveDateTime,
) -> QueryResult<()> {
    use crate::schema::provider_gates::dsl as gates;
    let row = (gates::provider.eq(provider), gates::touched_at.eq(now));
    match conn {
        AnyConnection::Sqlite(c) => diesel::insert_into(gates::provider_gates)
            .values(row)
            .on_conflict(gates::provider)
            .do_update()
            .set(gates::touched_at.eq(excluded(gates::touched_at)))
            .execute(c),
        AnyConnection::Postgresql(c) => diesel::insert_into(gates::provider_gates)
            .values(row)
            .on_conflict(gates::provider)
            .do_update()
            .set(gates::touched_at.eq(excluded(gates::touched_at)))
            .execute(c),
    }
    .map(drop)
}

/// An app's user as inserted.
#[derive(Insertable, Clone, Copy)]
#[diesel(table_name = users)]
pub(crate) struct AppUserRow<'a> {
    #[diesel(serialize_as = i64)]
    pub(crate) app_id: AppId,
    pub(crate) email: &'a str,
    pub(crate) public_id: &'a str,
    pub(crate) external_user_id: Option<&'a str>,
    pub(crate) max_accounts: Option<i32>,
    pub(crate) created_at: NaiveDateTime,
    pub(crate) updated_at: NaiveDateTime,
}

/// Inserts an app's user unless one with the same (app, e-mail) exists;
/// `true` when this call inserted it. Concurrent identical calls insert one.
pub(crate) fn insert_user_unless_exists(
    conn: &mut AnyConnection,
    row: &AppUserRow<'_>,
) -> QueryResult<bool> {
    let inserted = match conn {
        AnyConnection::Sqlite(c) => diesel::insert_into(users::table)
            .values(*row)
            .on_conflict_do_nothing()
            .execute(c),
        AnyConnection::Postgresql(c) => diesel::insert_into(users::table)
            .values(*row)
            .on_conflict_do_nothing()
            .execute(c),
    }?;
    Ok(inserted == 1)
}

/// Inserts a developer unless one with `email` exists; `true` when this
/// call inserted it. Concurrent identical calls insert one.
pub(crate) fn insert_developer_unless_exists(
    conn: &mut AnyConnection,
    email: &str,
    now: NaiveDateTime,
) -> QueryResult<bool> {
    let row = (developers::email.eq(email), developers::created_at.eq(now));
    let inserted = with_backend!(conn, c => diesel::insert_into(developers::table)
        .values(row)
        .on_conflict_do_nothing()
        .execute(c))?;
    Ok(inserted == 1)
}

/// Makes `developer_id` the owner of `app_id`, replacing any owner.
pub(crate) fn upsert_app_owner(
    conn: &mut AnyConnection,
    app_id: AppId,
    developer_id: DeveloperId,
) -> QueryResult<()> {
    let row = (
        developer_apps::app_id.eq(app_id.get()),
        developer_apps::developer_id.eq(developer_id.get()),
    );
    with_backend!(conn, c => diesel::insert_into(developer_apps::table)
        .values(row)
        .on_conflict(developer_apps::app_id)
        .do_update()
        .set(developer_apps::developer_id.eq(developer_id.get()))
        .execute(c))?;
    Ok(())
}

/// A transaction's provider-given values as stored; the same for a new row
/// (with its account and creation time) and for an update.
#[derive(Insertable, AsChangeset)]
#[diesel(table_name = transactions, treat_none_as_null = true)]
pub(crate) struct TransactionValues<'a> {
    provider_transaction_id: &'a str,
    pending_provider_id: Option<&'a str>,
    is_pending: bool,
    booked_on: chrono::NaiveDate,
    amount: String,
    currency: &'a str,
    merchant: Option<&'a str>,
    description: Option<&'a str>,
    updated_at: NaiveDateTime,
    /// The change that wrote these values (the change feed's order).
    change_seq: i64,
    /// What enrichment made of the values, written with them.
    clean_merchant: Option<String>,
    subcategory: &'static str,
    category_source: &'static str,
    category_hints: Option<String>,
    enriched_version: i32,
}

impl<'a> TransactionValues<'a> {
    /// The values of `record`, stored in `account_id` of a person with
    /// `rules`, as change `seq` writes them.
    pub(crate) fn new(
        record: &'a SnapshotTransaction,
        (account_id, rules): (AccountId, &enrich::rules::Rules),
        seq: ChangeSeq,
        now: NaiveDateTime,
    ) -> Self {
        let raw = enrich::Raw {
            merchant: record.merchant.as_deref(),
            description: record.description.as_deref(),
            amount: record.amount,
            hints: &record.hints,
        };
        let enrichment = rules.apply(account_id.get(), &raw, enrich::enrich(&raw));
        TransactionValues {
            provider_transaction_id: &record.provider_id,
            pending_provider_id: record.pending_provider_id.as_deref(),
            is_pending: record.is_pending,
            booked_on: record.date,
            amount: record.amount.to_string(),
            currency: &record.currency,
            merchant: record.merchant.as_deref(),
            description: record.description.as_deref(),
            updated_at: now,
            change_seq: seq.get(),
            clean_merchant: enrichment.merchant,
            subcategory: enrichment.subcategory.id,
            category_source: enrichment.source.as_str(),
            category_hints: record.hints.to_text(),
            enriched_version: enrich::TABLES_VERSION,
        }
    }
}
