//! Statement files: each format's reader turns a file into [`Statement`]s,
//! which become snapshots of a `file` connection and go through the same
//! reconciler as a sync. Readers never panic on any input; an error names
//! where in the file it is.

pub mod camt;
pub mod csv;
pub mod error;
mod files;
#[cfg(any(test, feature = "testing"))]
pub mod hostile;
mod identity;
pub mod mt940;
mod nul;
pub mod ofx;
#[cfg(any(test, feature = "testing"))]
pub mod samples;
mod statement;
mod store;
mod streamed;
pub(crate) mod xml;

pub use files::{Reading, StatementFile, UnreadableFile, read_files};
pub use statement::{Statement, file_institution};
pub(crate) use statement::{legacy_account_id, unnamed_account_id};
pub use store::*;
pub use streamed::{FileImportError, store_ofx_file};

pub use error::{MAX_NESTING, Place, ReadError, Reason};
use tributary_domain::money::Decimal;

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

/// camt, OFX or MT940, from the first 2,000 bytes (all of them that
/// are looked at); CSV has no mark.
pub fn sniff(bytes: &[u8]) -> Option<Format> {
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
pub(crate) fn apart_by_format(mut statement: Statement, format: &str) -> Statement {
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
