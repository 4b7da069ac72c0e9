//! Statement files: each format's reader turns a file into [`Statement`]s,
//! which become snapshots of a `file` connection and go through the same
//! reconciler as a sync. Readers never panic on any input; an error names
//! where in the file it is.

pub mod camt;
pub mod csv;
pub mod error;
#[cfg(any(test, feature = "testing"))]
pub mod hostile;
pub mod mt940;
mod nul;
pub mod ofx;
#[cfg(any(test, feature = "testing"))]
pub mod samples;
mod xml;

pub use error::{Place, ReadError, Reason};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use tributary_domain::ids::{AccountId, ConnectionId, UserId};
use tributary_domain::model::AccountKind;
use tributary_domain::money::Decimal;
use tributary_domain::snapshot::*;

/// How deep the elements of an XML (camt) or OFX file may nest. Real
/// statements nest about a dozen levels; the limit keeps a crafted file from
/// exhausting a thread's stack (trees are built iteratively, but dropped and
/// searched recursively) while leaving room for any real layout.
pub const MAX_NESTING: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// ISO 20022 camt.052 (intraday report), camt.053 (statement), camt.054
    /// (notification).
    Camt,
    /// SWIFT MT940 statements and MT942 interim reports.
    Mt940,
    /// OFX 1.x (SGML) and 2.x (XML), QFX: bank, credit card, investments.
    Ofx,
    /// CSV, read by a profile or a recognised header layout.
    Csv,
}

impl Format {
    pub fn parse_name(name: &str) -> Option<Format> {
        match name.to_ascii_lowercase().as_str() {
            "camt" | "camt052" | "camt053" | "camt054" | "iso20022" => Some(Format::Camt),
            "mt940" | "mt942" | "swift" | "sta" => Some(Format::Mt940),
            "ofx" | "qfx" => Some(Format::Ofx),
            "csv" => Some(Format::Csv),
            _ => None,
        }
    }
}

/// Which format `bytes` are, from their content.
pub fn detect(bytes: &[u8]) -> Option<Format> {
    // CSV: only when its header row is a layout Tributary knows.
    sniff(bytes).or_else(|| csv::parse(bytes, None).is_ok().then_some(Format::Csv))
}

/// camt, OFX or MT940, from the first 2,000 bytes; CSV has no mark.
fn sniff(bytes: &[u8]) -> Option<Format> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(2000)]).to_ascii_lowercase();
    if head.contains("urn:iso:std:iso:20022:tech:xsd:camt.") {
        return Some(Format::Camt);
    }
    // camt without its namespace: a <Document> holding one of the three
    // messages' containers (the namespace is the schema's, not the data's).
    if head.contains("<document")
        && [
            "<bktocstmrstmt",
            "<bktocstmracctrpt",
            "<bktocstmrdbtcdtntfctn",
        ]
        .iter()
        .any(|container| head.contains(container))
    {
        return Some(Format::Camt);
    }
    if head.contains("ofxheader") || head.contains("<ofx>") {
        return Some(Format::Ofx);
    }
    // MT940: a line starting with one of its field tags (possibly after a
    // SWIFT `{4:` block opener, or lines joined with `@@`); statement
    // snippets may lack `:20:`.
    let head = mt940::unjoin_lines(&head);
    let starts = |tag: &str| {
        head.lines().any(|line| {
            let line = line.trim_start_matches(|c: char| c.is_control() || c.is_whitespace());
            line.starts_with(tag) || line.contains(&format!("{{4:{tag}"))
        })
    };
    let mt940_tags = [
        ":20:", ":25:", ":28c:", ":60f:", ":60m:", ":61:", ":62f:", ":62m:", ":64:", ":86:",
    ];
    mt940_tags
        .iter()
        .any(|tag| starts(tag))
        .then_some(Format::Mt940)
}

/// One statement of one account, as a file states it.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// IBAN or account number: how the account is found again.
    pub account_id: String,
    pub account_name: Option<String>,
    pub kind: AccountKind,
    pub currency: String,
    pub transactions: Vec<SnapshotTransaction>,
    pub opening_booked: Option<Decimal>,
    /// The date of the opening balance, where the file gives one.
    pub opening_date: Option<chrono::NaiveDate>,
    pub closing_booked: Option<Decimal>,
    /// The balance the statement ends on, as a snapshot at its date.
    pub balance: Option<SnapshotBalance>,
    pub holdings: Option<Vec<SnapshotHolding>>,
    /// The bank that keeps the account (name or BIC), where the file says.
    pub servicer: Option<String>,
    /// What the reader had to decide or found wrong (a date taken from the
    /// statement, a balance that does not add up): said to the user.
    pub notes: Vec<String>,
    /// Positions in `transactions` of the entries whose currency the file
    /// does not state (CSV rows without a currency column, symbol or unit):
    /// they carry `currency` as an assumption, said in a note; imported
    /// into an account the user chose, they take its currency instead.
    pub currency_assumed: Vec<usize>,
    /// The ids its entries had when every CSV row of a file went to one
    /// account (`unidentified-{currency}`), one per transaction, where they
    /// differ from today's (rows an account column now routes); empty
    /// otherwise. A re-import finds rows stored then by them.
    pub legacy_ids: Vec<String>,
}

#[cfg(test)]
impl Statement {
    /// The signed sum of its transactions, as text: the figure tests
    /// compare with what a bank or another parser says.
    pub(crate) fn signed_sum(&self) -> String {
        self.transactions
            .iter()
            .map(|t| t.amount)
            .sum::<Decimal>()
            .to_string()
    }
}

/// How the account id of a statement that names no account begins.
const UNIDENTIFIED: &str = "unidentified-";

/// The account id of a statement naming no account in `currency`, from a
/// file of `source` (a format, a CSV layout): files of different sources
/// or currencies never share an account unless the user says so.
pub(crate) fn unnamed_account_id(currency: &str, source: &str) -> String {
    format!("{UNIDENTIFIED}{currency}-{source}")
}

/// The account id every statement naming no account in `currency` had
/// before files were kept apart by source. Entry ids of such statements
/// are still made with it, so that a file imported then finds its rows
/// again (see [`store_into`]).
pub(crate) fn legacy_account_id(currency: &str) -> String {
    format!("{UNIDENTIFIED}{currency}")
}

/// The note on rows whose currency the file does not state.
pub(crate) fn assumed_currency_note(rows: usize) -> String {
    format!(
        "{rows} row(s) name no currency (no currency column, no symbol on the amount, no unit in the header): taken as {ASSUMED_CURRENCY}; a profile's \"currency\" names another, or import the file into an account of its currency"
    )
}

/// The currency of entries for which neither the file nor a CSV profile
/// names one (most CSV exports without one come from euro banks).
pub(crate) const ASSUMED_CURRENCY: &str = "EUR";

/// ISO 4217's code for "no currency", which a file naming none (an MT940
/// snippet) gets.
const NO_CURRENCY: &str = "XXX";

impl Statement {
    /// Whether the file names the account (IBAN, number) this statement is of.
    pub fn names_account(&self) -> bool {
        !self.account_id.starts_with(UNIDENTIFIED)
    }

    /// The currencies the file states for this statement's entries and
    /// balance (not those assumed, nor "no currency").
    fn stated_currencies(&self) -> std::collections::BTreeSet<&str> {
        let assumed = self.assumed_positions();
        self.transactions
            .iter()
            .enumerate()
            .filter(|(i, _)| !assumed.contains(i))
            .map(|(_, t)| t.currency.as_str())
            .chain(self.balance.iter().map(|b| b.currency.as_str()))
            .filter(|c| *c != NO_CURRENCY)
            .collect()
    }

    /// [`Statement::currency_assumed`], to look positions up in.
    fn assumed_positions(&self) -> std::collections::HashSet<usize> {
        self.currency_assumed.iter().copied().collect()
    }

    /// Sends the statement to `account`: its id, name and kind, and its
    /// currency for every entry whose currency the file does not state
    /// (the assumption's note goes).
    fn send_to(&mut self, account: &TargetAccount) {
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

    /// Whether it states no transaction, balance or holding.
    pub fn is_empty(&self) -> bool {
        self.transactions.is_empty() && self.balance.is_none() && self.holdings.is_none()
    }

    /// The statement as a snapshot of the `file` connection.
    pub fn into_snapshot(self) -> ProviderSnapshot {
        let digits: String = self
            .account_id
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect();
        // An account the file does not name has no number to show, and
        // neither has one known by a word (a CSV's `Account` of `Savings`).
        let mask = (self.names_account()
            && digits.len() >= 4
            && digits.chars().any(|c| c.is_ascii_digit()))
        .then(|| digits[digits.len() - 4..].to_owned());
        ProviderSnapshot {
            institution: file_institution(),
            accounts: vec![SnapshotAccount {
                institution: None,
                name: self.account_name.unwrap_or_else(|| {
                    let number = format!("Account …{}", mask.clone().unwrap_or_default());
                    match &self.servicer {
                        Some(bank) => format!("{number} at {bank}"),
                        None => number,
                    }
                }),
                provider_account_id: self.account_id,
                kind: self.kind,
                currency: self.currency,
                mask,
                balance: self.balance,
                transactions: self.transactions,
                holdings: self.holdings,
            }],
            notices: Vec::new(),
            pending_match: Some(tributary_domain::reconcile::PendingMatchRule::default()),
            complete: false,
        }
    }
}

pub fn file_institution() -> SnapshotInstitution {
    SnapshotInstitution {
        provider_institution_id: "statements".into(),
        name: "Imported statements".into(),
        logo_url: None,
    }
}

/// Why a file does not import. `Display` is the sentence the CLI and the
/// HTTP answer show (the HTTP answer puts the file's name before it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    #[error(
        "the format is not recognised (camt, MT940, OFX/QFX, and CSV with a header row of a known layout are)"
    )]
    UnknownFormat,
    /// The reader of `format` stopped: `reason` says where in the file
    /// (byte, line, statement, entry, row and column) and why.
    #[error("{reason}")]
    Unreadable { format: Format, reason: ReadError },
    /// A CSV file (named so, or unmarked) whose header is no known layout.
    #[error("{0}")]
    UnknownCsvLayout(String),
    #[error(
        "the file holds no transaction, balance or holding, and names no account: there is nothing to import"
    )]
    NothingToImport,
}

impl ImportError {
    /// Whether naming the format or describing a CSV layout could make the
    /// file read: each surface then says how its callers do that.
    pub fn wants_format_or_profile(&self) -> bool {
        matches!(
            self,
            ImportError::UnknownFormat | ImportError::UnknownCsvLayout(_)
        )
    }
}

/// Reads a file of `format` (detected when `None`); CSV files without a
/// profile must have a header row of a known layout.
pub fn parse(bytes: &[u8], format: Option<Format>) -> Result<Vec<Statement>, ImportError> {
    parse_with_profile(bytes, format, None)
}

/// As [`parse`], reading CSV by `profile` (a profile implies CSV).
pub fn parse_with_profile(
    bytes: &[u8],
    format: Option<Format>,
    profile: Option<&csv::CsvProfile>,
) -> Result<Vec<Statement>, ImportError> {
    // Unmarked content is read as CSV once (not detected, then read again):
    // an unknown header means an unknown format, a bad row is that row.
    let format = match (format, profile) {
        (Some(format), _) => Some(format),
        (None, Some(_)) => Some(Format::Csv),
        (None, None) => sniff(bytes),
    };
    let unreadable =
        |format: Format| move |reason: ReadError| ImportError::Unreadable { format, reason };
    let source = match format {
        Some(Format::Camt) => "camt",
        Some(Format::Mt940) => "mt940",
        Some(Format::Ofx) => "ofx",
        Some(Format::Csv) | None => "csv",
    };
    let statements = match format {
        Some(Format::Camt) => camt::parse(bytes).map_err(unreadable(Format::Camt)),
        Some(Format::Mt940) => mt940::parse(bytes).map_err(unreadable(Format::Mt940)),
        Some(Format::Ofx) => ofx::parse(bytes).map_err(unreadable(Format::Ofx)),
        Some(Format::Csv) | None => csv::read(bytes, profile).map_err(|err| match (err, format) {
            (csv::CsvError::UnknownLayout, None) => ImportError::UnknownFormat,
            (err @ csv::CsvError::UnknownLayout, Some(_)) => {
                ImportError::UnknownCsvLayout(err.to_string())
            }
            (csv::CsvError::Unreadable(reason), _) => ImportError::Unreadable {
                format: Format::Csv,
                reason,
            },
        }),
    }?;
    // A statement that states nothing about an account it does not name (a
    // CSV header with no rows, say) would only create an empty account.
    let statements: Vec<Statement> = statements
        .into_iter()
        .filter(|s| s.names_account() || !s.is_empty())
        .collect();
    if statements.is_empty() {
        return Err(ImportError::NothingToImport);
    }
    Ok(statements
        .into_iter()
        .map(|statement| apart_by_format(statement, source))
        .map(nul::without_nul)
        .map(check_arithmetic)
        .collect())
}

/// A camt, MT940 or OFX statement naming no account goes to an account of
/// its currency and format (the CSV reader keeps its own apart by layout):
/// an OFX and a camt file that both name none are not one account.
fn apart_by_format(mut statement: Statement, format: &str) -> Statement {
    if format != "csv" && statement.account_id == legacy_account_id(&statement.currency) {
        statement.account_id = unnamed_account_id(&statement.currency, format);
        // The readers' own name for it says less: a name the file gives
        // (camt's `Acct/Nm`) stays.
        let readers_name = format!(
            "Imported {} account (the file names no account)",
            statement.currency
        );
        if statement.account_name.is_some() && statement.account_name != Some(readers_name) {
            return statement;
        }
        statement.account_name = Some(format!(
            "Imported {} account ({} file naming no account)",
            statement.currency,
            match format {
                "camt" => "a camt",
                "mt940" => "an MT940",
                _ => "an OFX",
            }
        ));
    }
    statement
}

/// Notes a statement whose entries do not take its opening balance to its
/// closing one. It still imports: the bank's file is the record, and the
/// user should know.
fn check_arithmetic(mut statement: Statement) -> Statement {
    if let (Some(opening), Some(closing)) = (statement.opening_booked, statement.closing_booked) {
        let booked: Decimal = statement
            .transactions
            .iter()
            .filter(|t| !t.is_pending)
            .map(|t| t.amount)
            .sum();
        if opening + booked != closing {
            statement.notes.push(format!(
                "account {}: opening balance {opening} + entries {booked} = {}, but the statement closes at {closing} (a difference of {})",
                statement.account_id,
                opening + booked,
                closing - opening - booked
            ));
        }
    }
    statement
}

/// What identifies one entry of a statement, for its provider id.
#[derive(Debug, Clone)]
pub(crate) struct EntryIdentity {
    /// A reference the format guarantees unique within the account for the
    /// account's life: camt's entry `AcctSvcrRef`, OFX's `FITID`, a CSV
    /// profile's bank id column. MT940 references are not (banks reuse
    /// them across statements), and neither are placeholders.
    pub reference: Option<String>,
    pub date: chrono::NaiveDate,
    pub amount: Decimal,
    /// Everything else the entry says: counterparty, texts, references
    /// that are not unique.
    pub text: String,
}

/// References that stand for "none" (SWIFT's `NONREF`, SEPA's
/// `NOTPROVIDED`, a bare `EREF` key): never an identity.
fn is_placeholder(reference: &str) -> bool {
    let reference = reference.trim();
    reference.is_empty()
        || reference.chars().all(|c| c == '0')
        || [
            "NONREF",
            "NOTPROVIDED",
            "NOT PROVIDED",
            "EREF",
            "NONE",
            "N/A",
        ]
        .iter()
        .any(|p| reference.eq_ignore_ascii_case(p))
}

/// Provider ids for a statement's entries, unique within the account and
/// the same on every import of the same statement:
///
/// - an entry with a guaranteed-unique reference (given once in the
///   statement) is that reference with its date and amount, so a reference
///   that comes back with another date or amount is another transaction,
///   never an overwrite;
/// - any other entry is a hash of account, date, amount and text, numbered
///   by its position among identical twins (`#2`, `#3`…), so two real twins
///   stay two and a re-import finds both again.
pub(crate) fn entry_ids(account: &str, entries: &[EntryIdentity], prefix: &str) -> Vec<String> {
    fn usable(entry: &EntryIdentity) -> Option<&str> {
        entry.reference.as_deref().filter(|r| !is_placeholder(r))
    }
    let mut given: HashMap<&str, usize> = HashMap::new();
    for reference in entries.iter().filter_map(usable) {
        *given.entry(reference).or_default() += 1;
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    entries
        .iter()
        .map(|entry| {
            let base = match usable(entry) {
                Some(r) if given.get(r) == Some(&1) => {
                    format!("{prefix}{r}@{}/{}", entry.date, entry.amount)
                }
                _ => {
                    let content = format!(
                        "{account}\u{1f}{}\u{1f}{}\u{1f}{}",
                        entry.date, entry.amount, entry.text
                    );
                    let digest = Sha256::digest(content.as_bytes());
                    let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
                    format!("{prefix}h:{hex}")
                }
            };
            let n = seen.entry(base.clone()).or_default();
            *n += 1;
            if *n == 1 { base } else { format!("{base}#{n}") }
        })
        .collect()
}

/// The text part of an entry's identity: its parts that are present.
pub(crate) fn identity_text(parts: &[Option<&str>]) -> String {
    parts
        .iter()
        .map(|p| p.unwrap_or_default().trim())
        .collect::<Vec<_>>()
        .join("\u{1f}")
}

/// What an import changed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ImportSummary {
    pub statements: usize,
    pub accounts: usize,
    pub added: usize,
    pub updated: usize,
    /// Transactions already stored exactly so (a re-import, an overlap).
    pub unchanged: usize,
    /// What the readers had to decide or found wrong, per statement.
    pub notes: Vec<String>,
    /// The account the statements naming none went into, when the import
    /// had a target (a new account's id, once made).
    pub target_account: Option<AccountId>,
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
struct TargetAccount {
    key: String,
    name: String,
    kind: AccountKind,
    currency: String,
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
    use tributary_domain::model::Provider;
    use tributary_storage::connections::{self, NewConnection};
    let mut statements = statements;
    let imported = tributary_storage::read::imported_accounts(conn, user_id)?;
    let unnamed_kind = statements
        .iter()
        .find(|s| !s.names_account())
        .map_or(AccountKind::Checking, |s| s.kind);
    let chosen = target_account(&imported, target, unnamed_kind)?;
    let mut extra_notes = Vec::new();
    if let Some((account, field)) = &chosen {
        for statement in statements.iter_mut().filter(|s| !s.names_account()) {
            if let Some(other) = statement
                .stated_currencies()
                .into_iter()
                .find(|c| *c != account.currency)
            {
                return Err(TargetError::CurrencyMismatch {
                    file: other.to_owned(),
                    account: account.currency.clone(),
                    target: match target {
                        ImportTarget::NewAccount { name, .. } => {
                            format!("the new account \"{name}\"")
                        }
                        _ => format!("\"{}\"", account.name),
                    },
                    field: *field,
                }
                .into());
            }
            statement.send_to(account);
        }
        if statements.iter().all(|s| s.account_id != account.key) {
            extra_notes.push(format!(
                "the file names the account of each of its statements, so none went into \"{}\"",
                account.name
            ));
        }
    }
    extra_notes.extend(settle_with_legacy_accounts(
        conn,
        &imported,
        &mut statements,
        chosen.is_none(),
    )?);
    let connection = connections::unscheduled_connection(
        conn,
        &NewConnection {
            user_id,
            provider: Provider::File,
            institution: &file_institution(),
            settings: &serde_json::json!({}),
            sealed_credentials: None,
            consent_expires_at: None,
            now,
        },
    )?;
    check_continuity(conn, connection.id, &mut statements)?;
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
    let target_account = match &chosen {
        Some((account, _)) if accounts.contains(&account.key) => {
            tributary_storage::read::imported_accounts(conn, user_id)?
                .into_iter()
                .find(|a| a.provider_account_id == account.key)
                .map(|a| a.id)
        }
        _ => None,
    };
    Ok(ImportSummary {
        statements: count,
        accounts: accounts.len(),
        added: applied.transactions_added,
        updated: applied.transactions_updated,
        unchanged: applied.transactions_unchanged,
        notes,
        target_account,
    })
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
fn settle_with_legacy_accounts(
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
fn check_continuity(
    conn: &mut tributary_storage::AnyConnection,
    connection_id: ConnectionId,
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
        let stored = tributary_storage::read::stated_balance_before(
            conn,
            connection_id,
            &statement.account_id,
            opened,
            closed,
        )?
        .map(|b| (b.as_of.date(), b.amount));
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
