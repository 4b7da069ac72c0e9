//! Applies a provider snapshot to a connection in one database transaction:
//! a failure anywhere leaves the previous state whole.

use crate::backend::{self, AccountUpsert, TransactionValues};
use crate::changes;
use crate::connections::{self, ConnectionRecord, upsert_institution};
use crate::db::AnyConnection;
use crate::read::TransactionRecord;
use crate::schema::{accounts, balances, holdings, transactions};
use crate::{StorageError, StorageResult};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use std::collections::{HashMap, HashSet};
use tributary_domain::access::Viewer;
use tributary_domain::changes::{ChangeSeq, Feed, FeedCursor, FeedPosition};
use tributary_domain::enrich::rules::Rules;
use tributary_domain::ids::{AccountId, ConnectionId, InstitutionId, TransactionId, UserId};
use tributary_domain::money::Decimal;
use tributary_domain::reconcile::{StoredTransaction, SyncSummary, reconcile};
use tributary_domain::snapshot::{
    ProviderSnapshot, SnapshotAccount, SnapshotBalance, SnapshotInstitution, SnapshotLiability,
    SnapshotTransaction,
};
use tributary_domain::status::AccountLimitExceeded;
use tributary_domain::webhook_event::{FeedUpdate, WebhookEvent};

/// Applies one provider snapshot to its connection.
pub fn apply_snapshot(
    conn: &mut AnyConnection,
    connection_id: ConnectionId,
    snapshot: &ProviderSnapshot,
    now: NaiveDateTime,
) -> StorageResult<SyncSummary> {
    apply_snapshots(conn, connection_id, std::slice::from_ref(snapshot), now)
}

/// Applies `snapshots`, in order, as one change of the connection (one
/// change number, one announcement, one status update): the statements of
/// one file are one import, however many the file holds.
fn apply_snapshots(
    conn: &mut AnyConnection,
    connection_id: ConnectionId,
    snapshots: &[ProviderSnapshot],
    now: NaiveDateTime,
) -> StorageResult<SyncSummary> {
    conn.atomically(|conn| {
        let mut change = ConnectionChange::begin(conn, connection_id, now)?;
        for snapshot in snapshots {
            change.write(conn, snapshot)?;
        }
        change.finish(conn)
    })
}

/// One change of a connection being written, snapshot by snapshot, inside
/// the caller's database transaction: what [`apply_all`] does for
/// snapshots in memory, for a caller that makes them as it goes (a
/// statement file too large to hold, written a few thousand transactions
/// at a time as it is read). Snapshots of one account may follow each
/// other; each writes what it carries (a snapshot that is not `complete`
/// removes nothing it does not list).
#[derive(Debug)]
pub struct ConnectionChange {
    connection: ConnectionRecord,
    seq: ChangeSeq,
    rules: Rules,
    now: NaiveDateTime,
    /// The connection's accounts, those this change made included.
    known_accounts: HashSet<String>,
    /// The accounts this change has written to, by the provider's id.
    seen_accounts: HashSet<String>,
    /// The accounts and securities this change has written.
    written: ChangeWritten,
    /// The accounts the person shares, once they have chosen.
    chosen: Option<std::collections::BTreeSet<String>>,
    /// The snapshots of one import name the same bank: it is written
    /// once, not once a statement.
    institution: Option<(SnapshotInstitution, InstitutionId)>,
    summary: SyncSummary,
    changed_accounts: Vec<i64>,
    notices: Vec<String>,
    /// How many rows this change writes before PostgreSQL's statistics are
    /// taken again ([`Self::expect_many_parts`]); `None`: never.
    analyze_at: Option<usize>,
}

/// The rows a change of many parts writes before the statistics are first
/// taken again ([`ConnectionChange::expect_many_parts`]).
const FIRST_ANALYZE: usize = 8_000;

impl ConnectionChange {
    /// Begins the change. Call it inside a transaction, and
    /// [`Self::finish`] it in the same one.
    pub fn begin(
        conn: &mut AnyConnection,
        connection_id: ConnectionId,
        now: NaiveDateTime,
    ) -> StorageResult<ConnectionChange> {
        let connection = connections::get_connection(conn, connection_id)?;
        // First, before any other row is locked: the user's number, which
        // queues this sync behind another of the same user's (changes.rs).
        let seq = changes::next_seq(conn, connection.user_id)?;
        // Read after the number is taken: a change of rules committed
        // before it applies to every row this stores (rules.rs).
        let rules = crate::rules::load(conn, connection.user_id)?;
        let known_accounts = crate::read::provider_account_ids(conn, connection.id)?;
        let chosen = crate::account_choice::chosen(conn, connection.id)?;
        Ok(ConnectionChange {
            connection,
            seq,
            rules,
            now,
            known_accounts,
            seen_accounts: HashSet::new(),
            written: ChangeWritten::default(),
            chosen,
            institution: None,
            summary: SyncSummary::default(),
            changed_accounts: Vec::new(),
            notices: Vec::new(),
            analyze_at: None,
        })
    }

    /// Says that this change writes many snapshots (a large file, a part at
    /// a time) and may grow an account from nothing to millions of rows.
    /// Each part looks up the ids it carries among the account's rows
    /// (`stored_for`); on PostgreSQL that lookup walks the unique index
    /// only while the planner believes the account holds more rows than
    /// the lookup names ids, and its statistics do not count rows this
    /// transaction wrote. Without help, the later parts of a large file
    /// read every row the earlier ones wrote (measured: 100,000
    /// transactions took 53 s instead of 4). So the statistics of
    /// `transactions` are taken again (`ANALYZE`, which counts this
    /// transaction's own rows and makes cached plans be made again) each
    /// time the rows this change wrote reach four times what they were at
    /// the last, from 8,000: four times for a million. `ANALYZE` holds its
    /// lock on the table (which only keeps autovacuum and other `ANALYZE`s
    /// off it, never a reader or writer) until the change commits, and a
    /// change that rolls back leaves statistics that counted its rows
    /// until autovacuum takes them again.
    pub fn expect_many_parts(&mut self) {
        self.analyze_at = Some(FIRST_ANALYZE);
    }

    /// Writes one snapshot's accounts, transactions, balances and holdings.
    pub fn write(
        &mut self,
        conn: &mut AnyConnection,
        snapshot: &ProviderSnapshot,
    ) -> StorageResult<()> {
        let shared: Vec<&SnapshotAccount> = snapshot
            .accounts
            .iter()
            .filter(|a| {
                self.chosen
                    .as_ref()
                    .is_none_or(|c| c.contains(&a.provider_account_id))
            })
            .collect();
        let new_accounts = shared
            .iter()
            .map(|a| a.provider_account_id.as_str())
            .filter(|id| !self.known_accounts.contains(*id))
            .collect::<HashSet<&str>>()
            .len();
        let user_id = self.connection.user_id;
        if new_accounts > 0
            && let Some(limit) = crate::apps::account_limit(conn, user_id)?
        {
            // Counted as before the change began: the refusal says what
            // the person had and what the whole change would add.
            let stored: i64 = accounts::table
                .filter(accounts::user_id.eq(user_id.get()))
                .count()
                .get_result(conn)?;
            let made = self.summary.accounts_created;
            let existing = stored - made as i64;
            let adding = made + new_accounts;
            if existing + adding as i64 > i64::from(limit) {
                return Err(StorageError::AccountLimit(AccountLimitExceeded {
                    limit,
                    existing,
                    adding,
                }));
            }
        }
        let stamp = Stamp {
            seq: self.seq,
            now: self.now,
        };
        for account in shared {
            let institution_id = match &self.institution {
                Some((same, id)) if *same == snapshot.institution => *id,
                _ => {
                    let provider = self.connection.provider;
                    let id = upsert_institution(conn, provider, &snapshot.institution)?;
                    self.institution = Some((snapshot.institution.clone(), id));
                    id
                }
            };
            if self
                .seen_accounts
                .insert(account.provider_account_id.clone())
            {
                self.summary.accounts_seen += 1;
            }
            if self
                .known_accounts
                .insert(account.provider_account_id.clone())
            {
                self.summary.accounts_created += 1;
            }
            let before = transaction_changes(&self.summary);
            let account_id = apply_account(
                conn,
                &self.connection,
                &mut self.written,
                account,
                (snapshot, institution_id),
                &self.rules,
                stamp,
                &mut self.summary,
            )?;
            if transaction_changes(&self.summary) != before
                && !self.changed_accounts.contains(&account_id.get())
            {
                self.changed_accounts.push(account_id.get());
            }
        }
        self.notices.extend(snapshot.notices.iter().cloned());
        let written = self.summary.transactions_added + self.summary.transactions_updated;
        if let Some(at) = self.analyze_at
            && written >= at
        {
            self.analyze_at = Some(written.saturating_mul(4));
            if let AnyConnection::Postgresql(pg) = conn {
                diesel::sql_query("ANALYZE transactions").execute(pg)?;
            }
        }
        Ok(())
    }

    /// Ends the change: transfers paired, the change announced once, the
    /// connection's sync recorded.
    pub fn finish(mut self, conn: &mut AnyConnection) -> StorageResult<SyncSummary> {
        let (user_id, seq, now) = (self.connection.user_id, self.seq, self.now);
        // Before the announcement: a transfer's other side, in another
        // account, changes with it (paired, or let go because this side
        // changed or went), and the event names that account too.
        if !self.changed_accounts.is_empty() {
            crate::transfers::pair_changed(conn, user_id, seq, now)?;
            for account in changes::accounts_written(conn, user_id, seq)? {
                if !self.changed_accounts.contains(&account) {
                    self.changed_accounts.push(account);
                }
            }
        }
        if !self.changed_accounts.is_empty() {
            announce_transactions(
                conn,
                user_id,
                seq,
                &self.changed_accounts,
                &self.summary,
                now,
            )?;
        }
        // Read back rather than tracked: a security renamed in one
        // account restates activity in others.
        if activity_changes(&self.summary) != (0, 0) {
            let accounts = crate::investment_feed::accounts_written(conn, user_id, seq)?;
            announce_activity(conn, user_id, seq, &accounts, &self.summary, now)?;
        }
        let notice = (!self.notices.is_empty()).then(|| self.notices.join("; "));
        connections::record_success(conn, self.connection.id, notice.as_deref(), now)?;
        Ok(self.summary)
    }
}

/// A provider sync appends its balance to the history (one row a sync). A
/// statement file (`complete == false`) states the balance at a date: the
/// history keeps one row per account and date, so importing a file again
/// adds none, and a statement imported later for the same date replaces
/// the earlier one's figures.
fn record_balance(
    conn: &mut AnyConnection,
    account_id: AccountId,
    balance: &SnapshotBalance,
    complete: bool,
    Stamp { seq, now }: Stamp,
    summary: &mut SyncSummary,
) -> StorageResult<()> {
    let values = (
        balances::amount.eq(balance.current.to_string()),
        balances::available.eq(balance.available.map(|a| a.to_string())),
        balances::currency.eq(&balance.currency),
        balances::change_seq.eq(seq.get()),
    );
    let as_of = balance.as_of.naive_utc();
    if !complete {
        let same_date = balances::table
            .filter(balances::account_id.eq(account_id.get()))
            .filter(balances::as_of.eq(as_of));
        let existing: Option<i64> = same_date.select(balances::id).first(conn).optional()?;
        if let Some(id) = existing {
            diesel::update(balances::table.find(id))
                .set(values)
                .execute(conn)?;
            return Ok(());
        }
    }
    diesel::insert_into(balances::table)
        .values((
            balances::account_id.eq(account_id.get()),
            values,
            balances::as_of.eq(as_of),
            balances::created_at.eq(now),
        ))
        .execute(conn)?;
    summary.balances_recorded += 1;
    Ok(())
}

/// Past balances a provider states (`SnapshotAccount::balance_history`):
/// one row per account and moment, written once; a later sync stating a
/// different figure for the same moment corrects it. One read per account
/// finds what is already kept, so an unchanged re-sync writes nothing.
fn record_stated_history(
    conn: &mut AnyConnection,
    account_id: AccountId,
    history: &[SnapshotBalance],
    Stamp { seq, now }: Stamp,
    summary: &mut SyncSummary,
) -> StorageResult<()> {
    let (Some(first), Some(last)) = (
        history.iter().map(|b| b.as_of).min(),
        history.iter().map(|b| b.as_of).max(),
    ) else {
        return Ok(());
    };
    let kept: Vec<(i64, NaiveDateTime, String, String)> = balances::table
        .filter(balances::account_id.eq(account_id.get()))
        .filter(balances::as_of.between(first.naive_utc(), last.naive_utc()))
        .select((
            balances::id,
            balances::as_of,
            balances::amount,
            balances::currency,
        ))
        .load(conn)?;
    let kept: HashMap<NaiveDateTime, (i64, String, String)> = kept
        .into_iter()
        .map(|(id, as_of, amount, currency)| (as_of, (id, amount, currency)))
        .collect();
    let mut new_rows: Vec<backend::BalanceRow> = Vec::new();
    for balance in history {
        let as_of = balance.as_of.naive_utc();
        let amount = balance.current.to_string();
        match kept.get(&as_of) {
            Some((_, kept_amount, kept_currency))
                if *kept_amount == amount && *kept_currency == balance.currency => {}
            Some((id, _, _)) => {
                diesel::update(balances::table.find(id))
                    .set((
                        balances::amount.eq(&amount),
                        balances::currency.eq(&balance.currency),
                        balances::change_seq.eq(seq.get()),
                    ))
                    .execute(conn)?;
            }
            None => new_rows.push((
                balances::account_id.eq(account_id.get()),
                balances::amount.eq(amount),
                balances::available.eq(balance.available.map(|a| a.to_string())),
                balances::currency.eq(balance.currency.clone()),
                balances::as_of.eq(as_of),
                balances::created_at.eq(now),
                balances::change_seq.eq(seq.get()),
            )),
        }
    }
    backend::insert_balances(conn, &new_rows)?;
    summary.balances_recorded += new_rows.len();
    Ok(())
}

/// Added, updated and removed transactions so far.
fn transaction_changes(summary: &SyncSummary) -> (usize, usize, usize) {
    (
        summary.transactions_added,
        summary.transactions_updated,
        summary.transactions_removed,
    )
}

/// Added and updated investment activity so far (none is removed by a
/// sync).
fn activity_changes(summary: &SyncSummary) -> (usize, usize) {
    (
        summary.investment_transactions_added,
        summary.investment_transactions_updated,
    )
}

/// What change `seq` did to `feed` in `account_ids`, with the cursor a
/// reader of every account of the user reads it from.
fn feed_update(
    feed: Feed,
    user_id: UserId,
    seq: ChangeSeq,
    account_ids: &[i64],
    (added, modified, removed): (usize, usize, usize),
) -> FeedUpdate {
    FeedUpdate {
        account_ids: account_ids.iter().copied().map(AccountId::new).collect(),
        cursor: FeedCursor {
            position: FeedPosition::new(ChangeSeq::new(seq.get() - 1), i64::MAX),
            fingerprint: FeedCursor::fingerprint_of(feed, &Viewer::whole_user(user_id), None),
        },
        added,
        modified,
        removed,
    }
}

/// `transactions.updated`.
pub(crate) fn announce_transactions(
    conn: &mut AnyConnection,
    user_id: UserId,
    seq: ChangeSeq,
    account_ids: &[i64],
    summary: &SyncSummary,
    now: NaiveDateTime,
) -> StorageResult<()> {
    let update = feed_update(
        Feed::Transactions,
        user_id,
        seq,
        account_ids,
        transaction_changes(summary),
    );
    let event = WebhookEvent::TransactionsUpdated(update);
    crate::webhooks::announce(conn, user_id, &event, None, now)?;
    Ok(())
}

/// `investment_transactions.updated`.
fn announce_activity(
    conn: &mut AnyConnection,
    user_id: UserId,
    seq: ChangeSeq,
    account_ids: &[i64],
    summary: &SyncSummary,
    now: NaiveDateTime,
) -> StorageResult<()> {
    let (added, modified) = activity_changes(summary);
    let update = feed_update(
        Feed::InvestmentTransactions,
        user_id,
        seq,
        account_ids,
        (added, modified, 0),
    );
    let event = WebhookEvent::InvestmentTransactionsUpdated(update);
    crate::webhooks::announce(conn, user_id, &event, None, now)?;
    Ok(())
}

/// What a change writes on every row it touches: its number in the user's
/// change sequence, and the time.
#[derive(Debug, Clone, Copy)]
struct Stamp {
    seq: ChangeSeq,
    now: NaiveDateTime,
}

/// What an account row says that a snapshot gives: its bank, name, kind,
/// currency and mask.
type AccountRow = (
    InstitutionId,
    String,
    tributary_domain::model::AccountKind,
    String,
    Option<String>,
);

/// What a change has written so far, across its snapshots.
#[derive(Debug, Default)]
struct ChangeWritten {
    /// The accounts, by the provider's id.
    accounts: HashMap<String, (AccountRow, AccountId)>,
    securities: crate::investments::SecuritiesWritten,
}

#[allow(clippy::too_many_arguments)]
fn apply_account(
    conn: &mut AnyConnection,
    connection: &ConnectionRecord,
    written: &mut ChangeWritten,
    account: &SnapshotAccount,
    (snapshot, snapshot_institution): (&ProviderSnapshot, InstitutionId),
    rules: &Rules,
    stamp: Stamp,
    summary: &mut SyncSummary,
) -> StorageResult<AccountId> {
    let Stamp { seq, now } = stamp;
    let (pending_match, complete) = (snapshot.pending_match.as_ref(), snapshot.complete);
    // The bank the account is at: its own where the provider bridges
    // several banks, else the snapshot's.
    let institution_id = match &account.institution {
        Some(own) => upsert_institution(conn, connection.provider, own)?,
        None => snapshot_institution,
    };
    // Written once a change while it says the same: a file's statement
    // written in parts names its account in each.
    let row: AccountRow = (
        institution_id,
        account.name.clone(),
        account.kind,
        account.currency.clone(),
        account.mask.clone(),
    );
    let account_id = match written.accounts.get(&account.provider_account_id) {
        Some((same, id)) if *same == row => *id,
        _ => {
            let id = backend::upsert_account(
                conn,
                &AccountUpsert {
                    connection_id: connection.id,
                    user_id: connection.user_id,
                    provider_account_id: &account.provider_account_id,
                    institution_id,
                    name: &account.name,
                    kind: account.kind.as_str(),
                    currency: &account.currency,
                    mask: account.mask.as_deref(),
                    now,
                },
            )?;
            written
                .accounts
                .insert(account.provider_account_id.clone(), (row, id));
            id
        }
    };

    let stored = stored_for(conn, account_id, &account.transactions)?;
    let changes = reconcile(&stored, &account.transactions, pending_match, complete);
    summary.absorb(&changes);

    if !changes.delete.is_empty() {
        crate::transfers::release(conn, &changes.delete, seq, now)?;
        changes::bury(conn, connection.user_id, seq, &changes.delete, now)?;
        diesel::delete(
            transactions::table
                .filter(transactions::id.eq_any(changes.delete.iter().map(|id| id.get()))),
        )
        .execute(conn)?;
    }
    for (id, record) in &changes.update {
        diesel::update(transactions::table.find(id.get()))
            .set(TransactionValues::new(
                record,
                (account_id, rules),
                seq,
                now,
            ))
            .execute(conn)?;
    }
    backend::insert_transactions(conn, (account_id, rules), &changes.insert, seq, now)?;

    record_stated_history(conn, account_id, &account.balance_history, stamp, summary)?;
    if let Some(balance) = &account.balance {
        record_balance(conn, account_id, balance, complete, stamp, summary)?;
    }

    // Which connectors may report holdings is the sync engine's check
    // (providers::catalog::reports_holdings); statement formats are known
    // here.
    if let Some(positions) = &account.holdings {
        let provider = connection.provider;
        if provider.statement_holdings() == Some(false) {
            return Err(StorageError::InvalidReference(format!(
                "a {provider} statement carries no holdings"
            )));
        }
        diesel::delete(holdings::table.filter(holdings::account_id.eq(account_id.get())))
            .execute(conn)?;
        for position in positions {
            // A restated name reaches the activity naming the security.
            let (security_id, restated) = crate::investments::security_id(
                conn,
                connection.user_id,
                &mut written.securities,
                &position.security,
                (seq, now),
            )?;
            summary.investment_transactions_updated += restated;
            diesel::insert_into(holdings::table)
                .values((
                    holdings::account_id.eq(account_id.get()),
                    holdings::security_id.eq(security_id.get()),
                    holdings::quantity.eq(position.quantity.to_string()),
                    holdings::price.eq(position.price.to_string()),
                    holdings::value.eq(position.value.to_string()),
                    holdings::value_in_account_currency
                        .eq(position.value_in_account_currency.map(|v| v.to_string())),
                    holdings::cost_basis.eq(position.cost_basis.map(|c| c.to_string())),
                    holdings::currency.eq(&position.currency),
                    holdings::raw.eq(position.raw.to_string()),
                    holdings::as_of.eq(now),
                    holdings::change_seq.eq(seq.get()),
                ))
                .execute(conn)?;
        }
        summary.holdings_replaced += positions.len();
    }
    if let Some(liability) = &account.liability {
        record_liability(conn, account_id, liability)?;
    }
    if !account.investment_transactions.is_empty() {
        let activity = crate::investments::write(
            conn,
            (connection.user_id, account_id),
            &account.investment_transactions,
            (seq, now),
            &mut written.securities,
        )?;
        summary.investment_transactions_added += activity.added;
        summary.investment_transactions_updated += activity.updated;
    }
    Ok(account_id)
}

/// Keeps what the provider states of a card's or loan's terms, writing the
/// account's row only when they changed.
fn record_liability(
    conn: &mut AnyConnection,
    account_id: AccountId,
    liability: &SnapshotLiability,
) -> StorageResult<()> {
    let text = |amount: Option<Decimal>| amount.map(|a| a.to_string());
    let values = (
        text(liability.credit_limit),
        text(liability.minimum_payment),
        liability.next_payment_due,
        text(liability.last_statement_balance),
    );
    let stored: (
        Option<String>,
        Option<String>,
        Option<chrono::NaiveDate>,
        Option<String>,
    ) = accounts::table
        .find(account_id.get())
        .select((
            accounts::credit_limit,
            accounts::minimum_payment,
            accounts::next_payment_due,
            accounts::last_statement_balance,
        ))
        .first(conn)?;
    if stored != values {
        diesel::update(accounts::table.find(account_id.get()))
            .set((
                accounts::credit_limit.eq(values.0),
                accounts::minimum_payment.eq(values.1),
                accounts::next_payment_due.eq(values.2),
                accounts::last_statement_balance.eq(values.3),
            ))
            .execute(conn)?;
    }
    Ok(())
}

/// How many ids one `IN (…)` lists: well under both backends' limits on
/// bound parameters.
const IDS_PER_QUERY: usize = 500;

/// The stored rows that reconciling `incoming` can touch, and no others:
/// every pending row (a posted record may take one over, and a whole view
/// removes those it no longer lists), the rows whose provider ids the
/// incoming records carry or link to, and the posted rows that replaced a
/// pending id an incoming (stale) record still lists. The rest of the
/// account's history cannot change the outcome, so a sync of the last 90
/// days reads as much in an account of ten years as in one of ten days.
pub(crate) fn stored_for(
    conn: &mut AnyConnection,
    account_id: AccountId,
    incoming: &[SnapshotTransaction],
) -> StorageResult<Vec<StoredTransaction>> {
    let of_account = || {
        transactions::table
            .filter(transactions::account_id.eq(account_id.get()))
            .select(TransactionRecord::as_select())
            .into_boxed::<crate::db::MultiBackend>()
    };
    // The bare column (not `= true`) is the partial index's own predicate.
    let mut records: Vec<TransactionRecord> =
        of_account().filter(transactions::is_pending).load(conn)?;
    let mut seen: HashSet<TransactionId> = records.iter().map(|r| r.id).collect();

    let named: Vec<&str> = incoming
        .iter()
        .flat_map(|t| std::iter::once(&t.provider_id).chain(&t.pending_provider_id))
        .map(String::as_str)
        .collect();
    for ids in named.chunks(IDS_PER_QUERY) {
        let rows = of_account()
            .filter(transactions::provider_transaction_id.eq_any(ids))
            .load(conn)?;
        records.extend(rows.into_iter().filter(|r| seen.insert(r.id)));
    }
    let pending: Vec<&str> = incoming
        .iter()
        .filter(|t| t.is_pending)
        .map(|t| t.provider_id.as_str())
        .collect();
    for ids in pending.chunks(IDS_PER_QUERY) {
        let rows = of_account()
            .filter(transactions::pending_provider_id.is_not_null())
            .filter(transactions::pending_provider_id.eq_any(ids))
            .load(conn)?;
        records.extend(rows.into_iter().filter(|r| seen.insert(r.id)));
    }
    Ok(records.into_iter().map(stored_from_record).collect())
}

fn stored_from_record(record: TransactionRecord) -> StoredTransaction {
    StoredTransaction {
        id: record.id,
        provider_id: record.provider_transaction_id,
        pending_provider_id: record.pending_provider_id,
        is_pending: record.is_pending,
        date: record.date,
        amount: record.amount,
        currency: record.currency,
        merchant: record.merchant,
        description: record.description,
    }
}

/// Stores a claimed job's snapshot: in one transaction, checks the worker
/// still holds the job (renewing its lease), applies the snapshot, sets the
/// connection's next sync, and marks the job succeeded. `None` when the
/// lease was lost to another worker: nothing is stored.
pub fn apply_for_job(
    conn: &mut AnyConnection,
    job: &crate::sync_jobs::ClaimedJob,
    snapshot: &ProviderSnapshot,
    now: NaiveDateTime,
    lease_until: NaiveDateTime,
    next_sync_at: NaiveDateTime,
) -> StorageResult<Option<SyncSummary>> {
    use crate::sync_jobs;
    conn.atomically(|conn| {
        if !sync_jobs::renew_lease(conn, job, lease_until)? {
            return Ok(None);
        }
        let summary = apply_snapshot(conn, job.connection_id, snapshot, now)?;
        connections::set_next_sync(conn, job.connection_id, next_sync_at)?;
        let summary_json = serde_json::to_string(&summary).ok();
        sync_jobs::finish(
            conn,
            job,
            tributary_domain::model::SyncJobStatus::Succeeded,
            summary_json.as_deref(),
            None,
            now,
        )?;
        Ok(Some(summary))
    })
}

/// Applies several snapshots of one connection in one transaction (a
/// statement file's statements, in order), as one change; all or nothing.
pub fn apply_all(
    conn: &mut AnyConnection,
    connection_id: ConnectionId,
    snapshots: &[ProviderSnapshot],
    now: NaiveDateTime,
) -> StorageResult<SyncSummary> {
    apply_snapshots(conn, connection_id, snapshots, now)
}
