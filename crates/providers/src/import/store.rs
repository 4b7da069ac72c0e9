//! Storing read statements: choosing each one's account (the one it names,
//! one the person chose, a new one), checking continuity, and applying them
//! all in one transaction.

use super::statement::*;
use sha2::{Digest, Sha256};
use tributary_domain::ids::{AccountId, ConnectionId, UserId};
use tributary_domain::model::AccountKind;
use tributary_domain::money::Decimal;
use tributary_domain::snapshot::*;

/// What an import changed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ImportSummary {
    pub statements: usize,
    pub accounts: usize,
    pub added: usize,
    pub updated: usize,
    /// Transactions already stored exactly so (a re-import, an overlap).
    pub unchanged: usize,
    /// Investment activity (OFX `INVTRANLIST`) new, and stored before with
    /// other figures.
    pub activity: ActivityCount,
    /// What the readers had to decide or found wrong, per statement.
    pub notes: Vec<String>,
    /// The account the statements naming none went into, when the import
    /// had a target (a new account's id, once made).
    pub target_account: Option<AccountId>,
}

/// How many pieces of investment activity an import wrote.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ActivityCount {
    pub added: usize,
    pub updated: usize,
}

impl ActivityCount {
    pub fn is_none(&self) -> bool {
        self.added == 0 && self.updated == 0
    }
}

impl ImportSummary {
    /// The summary of an import of `statements` statements into
    /// `accounts` accounts that `applied` stored.
    pub(super) fn applied(
        (statements, accounts): (usize, usize),
        applied: &tributary_domain::reconcile::SyncSummary,
        notes: Vec<String>,
        target_account: Option<AccountId>,
    ) -> Self {
        ImportSummary {
            statements,
            accounts,
            added: applied.transactions_added,
            updated: applied.transactions_updated,
            unchanged: applied.transactions_unchanged,
            activity: ActivityCount {
                added: applied.investment_transactions_added,
                updated: applied.investment_transactions_updated,
            },
            notes,
            target_account,
        }
    }
}

/// Where the statements of an import that name no account go (a CSV
/// export without an account column, a camt file without `<Acct>`).
/// Statements that name their account always go to it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ImportTarget {
    /// To an account of their own per currency and source (a CSV header
    /// layout, a format), so two banks' exports never share one.
    #[default]
    Automatic,
    /// Into this one of the user's accounts of imported statements.
    Account(AccountId),
    /// Into a new account of imported statements with this name and
    /// currency (checked by [`ImportTarget::new_account`]).
    NewAccount { name: String, currency: String },
}

impl ImportTarget {
    /// A new account's target: a name of 1 to 100 characters without
    /// control or bidirectional formatting characters, and a three-letter
    /// currency code (upper-cased).
    pub fn new_account(name: &str, currency: &str) -> Result<ImportTarget, TargetError> {
        use tributary_domain::text::{MAX_NAME_CHARS, check_name};
        let name = check_name(name, MAX_NAME_CHARS).map_err(TargetError::Name)?;
        let code = currency.trim();
        if code.len() != 3 || !code.chars().all(|c| c.is_ascii_alphabetic()) {
            return Err(TargetError::Currency(currency.to_owned()));
        }
        Ok(ImportTarget::NewAccount {
            name: name.to_owned(),
            currency: code.to_ascii_uppercase(),
        })
    }
}

/// Which part of an import's choice of account a [`TargetError`] is
/// about; each surface names it its own way (`new_account_currency`,
/// `--currency`, the form's field).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetField {
    Account,
    NewAccountName,
    NewAccountCurrency,
}

/// Why the account chosen for an import's statements cannot take them.
/// `Display` is a sentence without the field's name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Missing, another user's, or not of the user's imported statements:
    /// one answer for all three.
    #[error(
        "there is no account {0} among your accounts of imported statements (the \"Imported statements\" connection's)"
    )]
    NotImported(AccountId),
    #[error("{0}")]
    Name(tributary_domain::text::NameError),
    #[error(
        "one of your accounts of imported statements is named \"{name}\" already (account {id}): import into it, or give another name"
    )]
    NameTaken { name: String, id: AccountId },
    #[error("`{0}` is not a currency: give its three-letter ISO 4217 code, such as EUR or USD")]
    Currency(String),
    /// The file states amounts in `file`, the account is in `account`.
    #[error(
        "the file's amounts are in {file}, but {target} is in {account}: nothing was imported; choose an account in {file}, or a new one"
    )]
    CurrencyMismatch {
        file: String,
        account: String,
        /// The account, as the sentence names it.
        target: String,
        field: TargetField,
    },
}

impl TargetError {
    pub fn field(&self) -> TargetField {
        match self {
            TargetError::NotImported(_) => TargetField::Account,
            TargetError::Name(_) | TargetError::NameTaken { .. } => TargetField::NewAccountName,
            TargetError::Currency(_) => TargetField::NewAccountCurrency,
            TargetError::CurrencyMismatch { field, .. } => *field,
        }
    }
}

/// Why an import stored nothing.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Storage(#[from] tributary_storage::StorageError),
    #[error(transparent)]
    Target(#[from] TargetError),
}

/// The account a statement goes to, as the snapshot names it.
#[derive(Debug, Clone)]
pub(super) struct TargetAccount {
    pub(super) key: String,
    name: String,
    kind: AccountKind,
    pub(super) currency: String,
}

impl From<&tributary_storage::read::ImportedAccount> for TargetAccount {
    fn from(account: &tributary_storage::read::ImportedAccount) -> Self {
        TargetAccount {
            key: account.provider_account_id.clone(),
            name: account.name.clone(),
            kind: account.kind,
            currency: account.currency.clone(),
        }
    }
}

/// The account `target` names among the user's `imported` accounts (or
/// the new one it describes), with the field a wrong currency is about;
/// `None` for [`ImportTarget::Automatic`].
fn target_account(
    imported: &[tributary_storage::read::ImportedAccount],
    target: &ImportTarget,
    kind: AccountKind,
) -> Result<Option<(TargetAccount, TargetField)>, TargetError> {
    Ok(match target {
        ImportTarget::Automatic => None,
        ImportTarget::Account(id) => {
            let account = imported
                .iter()
                .find(|a| a.id == *id)
                .ok_or(TargetError::NotImported(*id))?;
            Some((account.into(), TargetField::Account))
        }
        ImportTarget::NewAccount { name, currency } => {
            if let Some(taken) = imported.iter().find(|a| a.name == *name) {
                return Err(TargetError::NameTaken {
                    name: name.clone(),
                    id: taken.id,
                });
            }
            // A key of its own (the name is unique among the user's
            // imported accounts), and never one a file could name.
            let digest = Sha256::digest(name.as_bytes());
            let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
            Some((
                TargetAccount {
                    key: unnamed_account_id(currency, &format!("own-{hex}")),
                    name: name.clone(),
                    kind,
                    currency: currency.clone(),
                },
                TargetField::NewAccountCurrency,
            ))
        }
    })
}

/// Checks that `target` can take statements for the user (the account is
/// theirs and of imported statements; a new account's name is free),
/// before any file is read.
pub fn check_target(
    conn: &mut tributary_storage::AnyConnection,
    user_id: UserId,
    target: &ImportTarget,
) -> Result<(), StoreError> {
    let imported = tributary_storage::read::imported_accounts(conn, user_id)?;
    target_account(&imported, target, AccountKind::Checking)?;
    Ok(())
}

/// Stores a file's statements for a user, all or nothing, through the
/// reconciler: importing the same file twice changes nothing, and
/// overlapping statements never duplicate. Each statement's closing balance
/// becomes a balance snapshot at its date. Statements naming no account
/// go to accounts of their own ([`ImportTarget::Automatic`]).
pub fn store(
    conn: &mut tributary_storage::AnyConnection,
    user_id: UserId,
    statements: Vec<Statement>,
    now: chrono::NaiveDateTime,
) -> Result<ImportSummary, tributary_storage::StorageError> {
    store_into(conn, user_id, statements, &ImportTarget::Automatic, now).map_err(|err| match err {
        StoreError::Storage(err) => err,
        StoreError::Target(_) => unreachable!("the automatic target is never refused"),
    })
}

/// [`store`], with the statements that name no account going to `target`.
/// A target account must be one of the user's accounts of imported
/// statements, and a file stating amounts in another currency than the
/// target's is refused; entries whose currency the file does not state
/// take the target's.
pub fn store_into(
    conn: &mut tributary_storage::AnyConnection,
    user_id: UserId,
    statements: Vec<Statement>,
    target: &ImportTarget,
    now: chrono::NaiveDateTime,
) -> Result<ImportSummary, StoreError> {
    let mut statements = statements;
    let imported = tributary_storage::read::imported_accounts(conn, user_id)?;
    let stated: Vec<std::collections::BTreeSet<String>> = statements
        .iter()
        .map(|s| {
            s.stated_currencies()
                .into_iter()
                .map(str::to_owned)
                .collect()
        })
        .collect();
    let (chosen, mut extra_notes) = send_unnamed(&imported, target, &mut statements, &stated)?;
    extra_notes.extend(settle_with_legacy_accounts(
        conn,
        &imported,
        &mut statements,
        chosen.is_none(),
    )?);
    let connection = file_connection(conn, user_id, now)?;
    check_continuity(conn, connection.id, &imported, &mut statements)?;
    let accounts: std::collections::HashSet<String> =
        statements.iter().map(|s| s.account_id.clone()).collect();
    let count = statements.len();
    let mut notes: Vec<String> = statements.iter().flat_map(|s| s.notes.clone()).collect();
    notes.extend(extra_notes);
    let snapshots: Vec<ProviderSnapshot> = statements
        .into_iter()
        .map(Statement::into_snapshot)
        .collect();
    let applied = tributary_storage::sync_apply::apply_all(conn, connection.id, &snapshots, now)?;
    let target_account = target_account_id(conn, user_id, chosen.as_ref(), &accounts)?;
    Ok(ImportSummary::applied(
        (count, accounts.len()),
        &applied,
        notes,
        target_account,
    ))
}

/// The user's connection of imported statements (made by their first
/// import).
pub(super) fn file_connection(
    conn: &mut tributary_storage::AnyConnection,
    user_id: UserId,
    now: chrono::NaiveDateTime,
) -> Result<tributary_storage::connections::ConnectionRecord, tributary_storage::StorageError> {
    use tributary_domain::model::Provider;
    use tributary_storage::connections::{self, NewConnection};
    connections::unscheduled_connection(
        conn,
        &NewConnection {
            user_id,
            provider: Provider::FILE,
            institution: &file_institution(),
            settings: &serde_json::json!({}),
            sealed_credentials: None,
            consent_expires_at: None,
            now,
        },
    )
}

/// The id of the account an import's unnamed statements went to, when it
/// had a target and some did.
pub(super) fn target_account_id(
    conn: &mut tributary_storage::AnyConnection,
    user_id: UserId,
    chosen: Option<&(TargetAccount, TargetField)>,
    accounts: &std::collections::HashSet<String>,
) -> Result<Option<AccountId>, tributary_storage::StorageError> {
    Ok(match chosen {
        Some((account, _)) if accounts.contains(&account.key) => {
            tributary_storage::read::imported_accounts(conn, user_id)?
                .into_iter()
                .find(|a| a.provider_account_id == account.key)
                .map(|a| a.id)
        }
        _ => None,
    })
}

/// Sends the statements that name no account to `target`'s account (none
/// for [`ImportTarget::Automatic`]), refusing a statement that states
/// (`stated`, one set per statement) another currency than the account's.
/// Returns the account and the notes to add.
#[allow(clippy::type_complexity)]
pub(super) fn send_unnamed(
    imported: &[tributary_storage::read::ImportedAccount],
    target: &ImportTarget,
    statements: &mut [Statement],
    stated: &[std::collections::BTreeSet<String>],
) -> Result<(Option<(TargetAccount, TargetField)>, Vec<String>), TargetError> {
    let unnamed_kind = statements
        .iter()
        .find(|s| !s.names_account())
        .map_or(AccountKind::Checking, |s| s.kind);
    let chosen = target_account(imported, target, unnamed_kind)?;
    let mut notes = Vec::new();
    if let Some((account, field)) = &chosen {
        for (statement, stated) in statements.iter_mut().zip(stated) {
            if statement.names_account() {
                continue;
            }
            if let Some(other) = stated.iter().find(|c| **c != account.currency) {
                return Err(TargetError::CurrencyMismatch {
                    file: other.clone(),
                    account: account.currency.clone(),
                    target: match target {
                        ImportTarget::NewAccount { name, .. } => {
                            format!("the new account \"{name}\"")
                        }
                        _ => format!("\"{}\"", account.name),
                    },
                    field: *field,
                });
            }
            statement.send_to(account);
        }
        if statements.iter().all(|s| s.account_id != account.key) {
            notes.push(format!(
                "the file names the account of each of its statements, so none went into \"{}\"",
                account.name
            ));
        }
    }
    Ok((chosen, notes))
}

/// Before files were kept apart by account and layout, every statement
/// naming no account went to one account per currency
/// (`unidentified-EUR`), every CSV row of a file with it. Rows that account
/// holds (found by the id they had then, [`Statement::legacy_ids`]) are
/// never stored a second time elsewhere:
///
/// - where the import may choose the account (`may_route`: no target was
///   given), a statement naming no account whose own account holds none of
///   its rows goes on into the old account, so a file imported then, or one
///   overlapping it, changes nothing;
/// - any other statement leaves those rows out, and they stay where they
///   are, whatever account the rest of its file now goes to.
///
/// Each says so in a note. A statement left with nothing for an account
/// not stored yet is not imported (no empty account is made); its notes are
/// returned.
pub(super) fn settle_with_legacy_accounts(
    conn: &mut tributary_storage::AnyConnection,
    imported: &[tributary_storage::read::ImportedAccount],
    statements: &mut Vec<Statement>,
    may_route: bool,
) -> Result<Vec<String>, tributary_storage::StorageError> {
    use tributary_storage::read::stored_transaction_ids;
    for statement in statements.iter_mut() {
        let legacy = legacy_account_id(&statement.currency);
        let Some(old) = imported.iter().find(|a| a.provider_account_id == legacy) else {
            continue;
        };
        if statement.account_id == legacy || statement.transactions.is_empty() {
            continue;
        }
        let then: Vec<String> = if statement.legacy_ids.is_empty() {
            statement
                .transactions
                .iter()
                .map(|t| t.provider_id.clone())
                .collect()
        } else {
            statement.legacy_ids.clone()
        };
        let asked: Vec<&str> = then.iter().map(String::as_str).collect();
        let stored = stored_transaction_ids(conn, old.id, &asked)?;
        if stored.is_empty() {
            continue;
        }
        if may_route && !statement.names_account() {
            let own = imported
                .iter()
                .find(|a| a.provider_account_id == statement.account_id);
            let ids: Vec<&str> = statement
                .transactions
                .iter()
                .map(|t| t.provider_id.as_str())
                .collect();
            let own_holds_none = match own {
                Some(own) => stored_transaction_ids(conn, own.id, &ids)?.is_empty(),
                None => true,
            };
            if own_holds_none {
                statement.account_id = old.provider_account_id.clone();
                statement.account_name = Some(old.name.clone());
                statement.kind = old.kind;
                statement.notes.push(format!(
                    "the rows went into \"{}\", which holds rows of this file from an earlier import",
                    old.name
                ));
                continue;
            }
        }
        let keep: Vec<bool> = then.iter().map(|id| !stored.contains(id)).collect();
        let mut position = 0;
        statement.transactions.retain(|_| {
            position += 1;
            keep[position - 1]
        });
        // Positions of rows whose currency was assumed, among those kept.
        statement.currency_assumed = statement
            .currency_assumed
            .iter()
            .filter(|p| keep.get(**p) == Some(&true))
            .map(|p| keep[..*p].iter().filter(|k| **k).count())
            .collect();
        statement.legacy_ids.clear();
        statement.notes.push(format!(
            "{} row(s) of this file were stored in \"{}\" by an import before files were kept apart by account and layout: they stay there and were not imported again",
            keep.iter().filter(|k| !**k).count(),
            old.name
        ));
    }
    let mut notes_of_dropped = Vec::new();
    statements.retain_mut(|statement| {
        let new_and_empty = statement.is_empty()
            && !imported
                .iter()
                .any(|a| a.provider_account_id == statement.account_id);
        if new_and_empty {
            notes_of_dropped.append(&mut statement.notes);
        }
        !new_and_empty
    });
    Ok(notes_of_dropped)
}

/// Notes each statement that does not open on the closing balance before
/// it: the newest one stored for its account or given by another statement
/// of the file, dated no later than the opening balance and before the
/// statement's own closing (so a re-import never compares a statement with
/// itself). A difference usually means a statement between them is missing.
pub(super) fn check_continuity(
    conn: &mut tributary_storage::AnyConnection,
    connection_id: ConnectionId,
    imported: &[tributary_storage::read::ImportedAccount],
    statements: &mut [Statement],
) -> Result<(), tributary_storage::StorageError> {
    let closings: Vec<(String, chrono::NaiveDate, Decimal)> = statements
        .iter()
        .filter_map(|s| {
            let closing = s.closing_booked?;
            Some((
                s.account_id.clone(),
                s.balance.as_ref()?.as_of.date_naive(),
                closing,
            ))
        })
        .collect();
    // A first import into an account has nothing stored to compare with:
    // only the accounts stored already (`imported`, the connection's) are
    // asked about.
    for statement in statements.iter_mut() {
        let (Some(opening), Some(opened)) = (statement.opening_booked, statement.opening_date)
        else {
            continue;
        };
        let closed = statement
            .balance
            .as_ref()
            .map(|b| b.as_of.date_naive())
            .unwrap_or(opened + chrono::Days::new(1));
        let eligible = |day: chrono::NaiveDate| day <= opened && day < closed;
        let in_file = closings
            .iter()
            .filter(|(account, day, _)| *account == statement.account_id && eligible(*day))
            .map(|(_, day, amount)| (*day, *amount))
            .max_by_key(|(day, _)| *day);
        let stored = if imported
            .iter()
            .any(|a| a.provider_account_id == statement.account_id)
        {
            tributary_storage::read::stated_balance_before(
                conn,
                connection_id,
                &statement.account_id,
                opened,
                closed,
            )?
            .map(|b| (b.as_of.date(), b.amount))
        } else {
            None
        };
        // The file's own figure wins a tie: it is what this import stores.
        let previous = match (in_file, stored) {
            (Some(file), Some(db)) if db.0 > file.0 => Some(db),
            (Some(file), _) => Some(file),
            (None, db) => db,
        };
        if let Some((day, closing)) = previous
            && closing != opening
        {
            statement.notes.push(format!(
                "account {}: the statement opens at {opening} on {opened}, but the closing balance before it ({day}) is {closing} (a difference of {}): a statement between them may be missing",
                statement.account_id,
                opening - closing
            ));
        }
    }
    Ok(())
}

impl Statement {
    /// Sends the statement to `account`: its id, name and kind, and its
    /// currency for every entry whose currency the file does not state
    /// (the assumption's note goes).
    pub(super) fn send_to(&mut self, account: &TargetAccount) {
        self.account_id = account.key.clone();
        self.account_name = Some(account.name.clone());
        self.kind = account.kind;
        if !self.currency_assumed.is_empty() {
            let note = assumed_currency_note(self.currency_assumed.len());
            self.notes.retain(|n| *n != note);
        }
        let assumed = self.assumed_positions();
        for (i, transaction) in self.transactions.iter_mut().enumerate() {
            if assumed.contains(&i) || transaction.currency == NO_CURRENCY {
                transaction.currency = account.currency.clone();
            }
        }
        if let Some(balance) = &mut self.balance
            && balance.currency == NO_CURRENCY
        {
            balance.currency = account.currency.clone();
        }
        self.currency_assumed.clear();
        self.currency = account.currency.clone();
    }
}
