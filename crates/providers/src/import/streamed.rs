//! Importing a statement file from disk in memory that does not grow with
//! the file: the reader's first pass gives the statements without their
//! transactions, and the second gives the transactions, which are written
//! a few thousand at a time, all in one database transaction and one
//! change, as [`super::store_into`] writes a file read whole. The outcome
//! is the same as reading the file whole and storing it (a test holds the
//! two side by side); OFX files are read so (docs/imports.md).

use super::ofx::{self, PassError, Source};
use super::statement::NO_CURRENCY;
use super::store::*;
use super::{Format, ImportError, Statement, legacy_account_id, nul};
use std::collections::{BTreeSet, HashSet};
use tributary_domain::ids::UserId;
use tributary_domain::snapshot::SnapshotTransaction;
use tributary_storage::StorageError;
use tributary_storage::sync_apply::ConnectionChange;

/// How many transactions are written at a time: large enough that a
/// write's fixed costs do not matter, small enough to stay a few MB.
const WRITTEN_AT_ONCE: usize = 2_000;

/// The most statements with transactions a file read in passes may hold:
/// the second pass reads the file once for each (in the file's order, as
/// a file read whole is stored), so a file of more is read whole.
const MAX_SECOND_PASSES: usize = 16;

/// Why a file from disk was not imported: it does not read (or changed
/// while it was read), or it could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum FileImportError {
    #[error(transparent)]
    Unreadable(#[from] ImportError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<StorageError> for FileImportError {
    fn from(err: StorageError) -> Self {
        FileImportError::Store(StoreError::Storage(err))
    }
}

fn unreadable(reason: super::ReadError) -> FileImportError {
    FileImportError::Unreadable(ImportError::Unreadable {
        format: Format::Ofx,
        reason,
    })
}

/// Where a stored statement's transactions come from, and what was
/// already done to it.
struct Plan {
    /// Its position in the survey.
    surveyed: usize,
    /// The account as the file names it (notes name it so).
    file_account: String,
    /// NUL characters already dropped from its header.
    nul_removed: usize,
    /// The currency its records that state "no currency" take, when it
    /// went to an account the person chose.
    sent_currency: Option<String>,
}

/// Imports the OFX file at `path` for the user, as [`store_into`] would
/// import it read whole, reading it twice and holding a few thousand of its
/// transactions at a time. A file that changes between the two readings
/// imports nothing and says so.
pub fn store_ofx_file(
    conn: &mut tributary_storage::AnyConnection,
    user_id: UserId,
    path: &std::path::Path,
    target: &ImportTarget,
    now: chrono::NaiveDateTime,
) -> Result<ImportSummary, FileImportError> {
    let source = Source::Path(path);
    let surveyed = ofx::survey(source).map_err(unreadable)?;
    // What reading a file whole does to its statements (`parse`), done to
    // the headers; the transactions are cleaned as they come.
    let mut headers: Vec<Statement> = Vec::new();
    let mut plans: Vec<Plan> = Vec::new();
    for (n, statement) in surveyed.statements.iter().enumerate() {
        let mut header = super::apart_by_format(statement.statement.clone(), "ofx");
        let nul_removed = nul::strip_statement(&mut header);
        if header.names_account() || !header.is_empty() || statement.has_records() {
            plans.push(Plan {
                surveyed: n,
                file_account: header.account_id.clone(),
                nul_removed,
                sent_currency: None,
            });
            headers.push(header);
        }
    }
    if headers.is_empty() {
        return Err(ImportError::NothingToImport.into());
    }
    let imported = tributary_storage::read::imported_accounts(conn, user_id)?;
    // Rows an import before files were kept apart may hold are looked up by
    // every id of a statement in that account's currency, whether or not
    // it names its account (`settle_with_legacy_accounts`): such a file
    // (only people who imported before then have such an account) is read
    // whole instead. So is a file of many statements with transactions,
    // as the second pass reads the file once for each.
    let legacy = headers.iter().zip(&plans).any(|(header, plan)| {
        let old = legacy_account_id(&header.currency);
        header.account_id != old
            && surveyed.statements[plan.surveyed].has_records()
            && imported.iter().any(|a| a.provider_account_id == old)
    });
    let passes = plans
        .iter()
        .filter(|plan| surveyed.statements[plan.surveyed].has_entries())
        .count();
    if legacy || passes > MAX_SECOND_PASSES {
        drop(surveyed);
        return read_whole(conn, user_id, path, target, now);
    }
    let stated: Vec<BTreeSet<String>> = headers
        .iter()
        .zip(&plans)
        .map(|(header, plan)| {
            let mut stated: BTreeSet<String> = header
                .stated_currencies()
                .into_iter()
                .map(str::to_owned)
                .collect();
            stated.extend(surveyed.statements[plan.surveyed].record_currencies());
            stated.remove(NO_CURRENCY);
            stated
        })
        .collect();
    let (chosen, extra_notes) =
        send_unnamed(&imported, target, &mut headers, &stated).map_err(StoreError::from)?;
    if let Some((account, _)) = &chosen {
        for (header, plan) in headers.iter().zip(&mut plans) {
            let named = surveyed.statements[plan.surveyed].statement.names_account();
            if header.account_id == account.key && !named {
                plan.sent_currency = Some(account.currency.clone());
            }
        }
    }
    // A statement that states nothing, of an account not stored yet, would
    // only make an empty account: it is not imported, and its notes are
    // said after the rest (as `settle_with_legacy_accounts` does).
    let mut extra_notes = extra_notes;
    let mut kept = 0;
    for n in 0..headers.len() {
        let header = &mut headers[n];
        let nothing = header.is_empty()
            && !surveyed.statements[plans[n].surveyed].has_records()
            && !imported
                .iter()
                .any(|a| a.provider_account_id == header.account_id);
        if nothing {
            extra_notes.append(&mut header.notes);
        } else {
            headers.swap(kept, n);
            plans.swap(kept, n);
            kept += 1;
        }
    }
    headers.truncate(kept);
    plans.truncate(kept);
    let connection = file_connection(conn, user_id, now)?;
    check_continuity(conn, connection.id, &imported, &mut headers)?;
    let accounts: HashSet<String> = headers.iter().map(|h| h.account_id.clone()).collect();
    let mut notes = Vec::new();
    let applied = conn.atomically_or(|conn| -> Result<_, FileImportError> {
        let mut change = ConnectionChange::begin(conn, connection.id, now)?;
        change.expect_many_parts();
        for (header, plan) in headers.iter().zip(&plans) {
            let nul_removed = if surveyed.statements[plan.surveyed].has_entries() {
                write_transactions(conn, &mut change, (&surveyed, source), header, plan)?
            } else {
                plan.nul_removed
            };
            change.write(conn, &header.clone().into_snapshot())?;
            notes.extend(header.notes.iter().cloned());
            if nul_removed > 0 {
                notes.push(nul::note(&plan.file_account, nul_removed));
            }
        }
        Ok(change.finish(conn)?)
    })?;
    notes.extend(extra_notes);
    let target_account = target_account_id(conn, user_id, chosen.as_ref(), &accounts)?;
    Ok(ImportSummary::applied(
        (headers.len(), accounts.len()),
        &applied,
        notes,
        target_account,
    ))
}

/// Imports the file read whole (`store_into`), for the files the passes
/// leave to it.
fn read_whole(
    conn: &mut tributary_storage::AnyConnection,
    user_id: UserId,
    path: &std::path::Path,
    target: &ImportTarget,
    now: chrono::NaiveDateTime,
) -> Result<ImportSummary, FileImportError> {
    let bytes = std::fs::read(path).map_err(|err| {
        unreadable(super::ReadError::of_file(super::Reason::Unavailable(
            err.to_string(),
        )))
    })?;
    let statements = super::parse(&bytes, Some(Format::Ofx))?;
    drop(bytes);
    Ok(store_into(conn, user_id, statements, target, now)?)
}

/// Reads the statement's transactions again and writes them
/// [`WRITTEN_AT_ONCE`] at a time as snapshots of its account without
/// balance or holdings (its header, written after, carries those). The
/// NUL characters dropped from it in all.
fn write_transactions(
    conn: &mut tributary_storage::AnyConnection,
    change: &mut ConnectionChange,
    (surveyed, source): (&ofx::Surveyed, Source<'_>),
    header: &Statement,
    plan: &Plan,
) -> Result<usize, FileImportError> {
    let mut template = Statement {
        transactions: Vec::new(),
        balance: None,
        holdings: None,
        investment_transactions: Vec::new(),
        ..header.clone()
    }
    .into_snapshot();
    let mut chunk: Vec<SnapshotTransaction> = Vec::with_capacity(WRITTEN_AT_ONCE);
    let mut nul_removed = plan.nul_removed;
    let mut flush = |chunk: &mut Vec<SnapshotTransaction>,
                     conn: &mut tributary_storage::AnyConnection|
     -> Result<(), StorageError> {
        if chunk.is_empty() {
            return Ok(());
        }
        let account = &mut template.accounts[0];
        account.transactions = std::mem::take(chunk);
        change.write(conn, &template)?;
        // The buffer is used again.
        *chunk = std::mem::take(&mut template.accounts[0].transactions);
        chunk.clear();
        Ok(())
    };
    surveyed
        .entries(source, Some(plan.surveyed), &mut |_, mut transaction| {
            nul_removed += nul::strip_transaction(&mut transaction);
            if let Some(currency) = &plan.sent_currency
                && transaction.currency == NO_CURRENCY
            {
                transaction.currency = currency.clone();
            }
            chunk.push(transaction);
            if chunk.len() >= WRITTEN_AT_ONCE {
                flush(&mut chunk, conn)?;
            }
            Ok::<(), StorageError>(())
        })
        .map_err(|err| match err {
            PassError::Read(reason) => unreadable(reason),
            PassError::Stopped(err) => err.into(),
        })?;
    flush(&mut chunk, conn)?;
    Ok(nul_removed)
}
