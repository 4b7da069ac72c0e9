//! CSV statements: a [`CsvProfile`] says which column holds what, how dates
//! and amounts are written, and the file's encoding. Without a profile, a
//! header row in one of a few common layouts (English, German, Dutch, French
//! bank exports) is recognised and the date format and decimal separator
//! are detected from the values. An error names the row and column.

use super::error::{Place, ReadError, Reason};
use super::identity::{EntryIdentity, entry_ids, identity_text};
use super::statement::{
    ASSUMED_CURRENCY, Statement, assumed_currency_note, legacy_account_id, unnamed_account_id,
};
use chrono::{Datelike, NaiveDate};
use serde::Deserialize;
use tributary_domain::model::AccountKind;
use tributary_domain::money::{Decimal, parse_decimal};
use tributary_domain::snapshot::SnapshotTransaction;

/// A column, by header name (case-insensitive) or 0-based position.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Column {
    Index(usize),
    Name(String),
}

/// How to read one bank's CSV export; also the JSON of `--profile FILE`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CsvProfile {
    /// `,` `;` or `\t`; detected from the first line when absent.
    #[serde(default)]
    pub delimiter: Option<char>,
    #[serde(default = "yes")]
    pub has_header: bool,
    pub date: Column,
    /// chrono format, e.g. `%d.%m.%Y`; detected when absent.
    #[serde(default)]
    pub date_format: Option<String>,
    /// One signed amount column…
    #[serde(default)]
    pub amount: Option<Column>,
    /// …or separate money-out and money-in columns (unsigned).
    #[serde(default)]
    pub debit: Option<Column>,
    #[serde(default)]
    pub credit: Option<Column>,
    #[serde(default)]
    pub description: Option<Column>,
    #[serde(default)]
    pub payee: Option<Column>,
    /// A column with the bank's own transaction id.
    #[serde(default)]
    pub id: Option<Column>,
    /// `1,50` rather than `1.50`; detected when absent.
    #[serde(default)]
    pub decimal_comma: Option<bool>,
    /// The file writes money out as positive numbers.
    #[serde(default)]
    pub money_out_positive: bool,
    /// `utf-8`, `windows-1252`, `iso-8859-1`…; UTF-8 (else Windows-1252)
    /// when absent.
    #[serde(default)]
    pub encoding: Option<String>,
    /// The account's IBAN or number, since CSV files rarely say.
    #[serde(default)]
    pub account: Option<String>,
    /// A column with each row's account (IBAN or number): the rows go to
    /// one account per value (`account` takes the rows where it is empty).
    #[serde(default)]
    pub account_column: Option<Column>,
    /// The currency of rows that state none (no currency column, no
    /// symbol, no `Amount (USD)` header). Without it such rows are taken
    /// as EUR, and the import says so in a note.
    #[serde(default)]
    pub currency: Option<String>,
    /// A column with each row's currency code.
    #[serde(default)]
    pub currency_column: Option<Column>,
    /// A column saying `debit` or `credit` (`DR`/`CR`, `Soll`/`Haben`…):
    /// the amount is then unsigned and takes its sign from it.
    #[serde(default)]
    pub debit_credit: Option<Column>,
    /// The `debit_credit` column's value that means money out, for values
    /// Tributary does not know (`"debit_value": "A"`); any other value
    /// then means money in.
    #[serde(default)]
    pub debit_value: Option<String>,
    /// Lines before the header (a bank's preamble); blank lines are not
    /// counted. Detected when absent.
    #[serde(default)]
    pub skip_rows: Option<usize>,
}

fn yes() -> bool {
    true
}

/// Header names of common layouts, lower-cased.
/// (English, German, Dutch, French, Spanish, Italian exports.)
const DATE_NAMES: &[&str] = &[
    "date",
    "transaction date",
    "posted date",
    "posting date",
    "booking date",
    "value date",
    "buchungstag",
    "buchungsdatum",
    "valutadatum",
    "wertstellung",
    "datum",
    "boekdatum",
    "transactiedatum",
    "date opération",
    "date operation",
    "date de comptabilisation",
    "date de valeur",
    "fecha",
    "fecha operación",
    "fecha valor",
    "data",
    "data operazione",
    "data contabile",
    "data valuta",
];
const AMOUNT_NAMES: &[&str] = &[
    "amount",
    "transaction amount",
    "betrag",
    "umsatz",
    "bedrag",
    "montant",
    "importe",
    "importo",
];
const DEBIT_NAMES: &[&str] = &[
    "debit",
    "debit amount",
    "withdrawal",
    "withdrawals",
    "paid out",
    "money out",
    "soll",
    "lastschrift",
    "af",
    "débit",
    "cargo",
    "cargos",
    "dare",
    "uscite",
];
const CREDIT_NAMES: &[&str] = &[
    "credit",
    "credit amount",
    "deposit",
    "deposits",
    "paid in",
    "money in",
    "haben",
    "gutschrift",
    "bij",
    "crédit",
    "abono",
    "abonos",
    "avere",
    "entrate",
];
const CURRENCY_NAMES: &[&str] = &[
    "currency", "ccy", "währung", "waehrung", "valuta", "munt", "devise", "monnaie", "monn.",
    "moneda", "divisa",
];
const DEBIT_CREDIT_NAMES: &[&str] = &[
    "transaction type",
    "debit/credit",
    "credit/debit",
    "debit credit indicator",
    "credit debit indicator",
    "cdtdbtind",
    "creditdebet",
    "credit/debet",
    "debet/credit",
    "af bij",
    "af/bij",
    "bij/af",
    "soll/haben",
    "s/h",
    "d/c",
    "c/d",
    "cd",
    "dc",
    "dr/cr",
    "cr/dr",
];
const DESCRIPTION_NAMES: &[&str] = &[
    "description",
    "description 1",
    "payment reference",
    "memo",
    "concepto",
    "descripción",
    "causale",
    "descrizione",
    "verwendungszweck",
    "omschrijving",
    "libellé",
    "libelle",
    "details",
    "reference",
];
const PAYEE_NAMES: &[&str] = &[
    "payee",
    "name",
    "merchant",
    "merchant name",
    "partner name",
    "counterparty",
    "beguenstigter/zahlungspflichtiger",
    "empfänger",
    "naam / omschrijving",
    "tegenpartij",
];
/// Header names of a column holding the account a row is of (its IBAN or
/// number), most specific first. Exact names only, so the other party's
/// account (`Tegenrekening`, `IBAN Zahlungsbeteiligter`, `Gegenkonto`,
/// `Kontonummer/IBAN`, `Rekeningnummer tegenpartij`) is never one.
const ACCOUNT_NAMES: &[&str] = &[
    "auftragskonto",
    "iban auftragskonto",
    "kontonummer auftragskonto",
    "iban auftraggeberkonto",
    "auftraggeberkonto",
    "rekening",
    "rekeningnummer",
    "iban/bban",
    "eigen rekening",
    "own account",
    "account iban",
];
/// Header names that are the account's only where no column before them
/// names the other party: N26's `Account number`, DKB's and Deutsche
/// Bank's `IBAN`, MoneyMoney's `Konto` follow the payee's name and are
/// the payee's; Barclays' `Account`, GLS's `Kontonummer`, bunq's `Account`
/// come first and are the account's.
const PLAIN_ACCOUNT_NAMES: &[&str] = &[
    "iban",
    "account",
    "account number",
    "account no",
    "account no.",
    "account #",
    "kontonummer",
    "konto",
    "compte",
    "numéro de compte",
    "cuenta",
    "conto",
];
/// Words of a header naming the other party of a transaction.
const COUNTERPARTY_WORDS: &[&str] = &[
    "payee",
    "payer",
    "partner",
    "counterpart",
    "merchant",
    "name",
    "beneficiar",
    "begünstigt",
    "beguenstigt",
    "zahlungspflicht",
    "zahlungsempf",
    "empfänger",
    "empfaenger",
    "auftraggeber",
    "beteiligt",
    "tegenpartij",
    "tegenrekening",
    "naam",
    "bénéficiaire",
    "beneficiaire",
    "destinataire",
    "ordenante",
];

/// The column of a header (compared names) holding the row's account.
fn find_account_column(names: &[String]) -> Option<usize> {
    if let Some(i) = ACCOUNT_NAMES
        .iter()
        .find_map(|wanted| names.iter().position(|name| name == wanted))
    {
        return Some(i);
    }
    let i = PLAIN_ACCOUNT_NAMES
        .iter()
        .find_map(|wanted| names.iter().position(|name| name == wanted))?;
    let after_the_other_party = names[..i]
        .iter()
        .any(|name| COUNTERPARTY_WORDS.iter().any(|word| name.contains(word)));
    (!after_the_other_party).then_some(i)
}

const ID_NAMES: &[&str] = &[
    "id",
    "transaction id",
    "reference number",
    "n° de transaction",
];
/// Tried in order; the first that reads the first 20 rows (with years from
/// 1900 to 2199) wins.
const DATE_FORMATS: &[&str] = &[
    "%Y-%m-%d", "%d.%m.%Y", "%d/%m/%Y", "%m/%d/%Y", "%Y/%m/%d", "%d-%m-%Y", "%Y%m%d", "%d.%m.%y",
    "%d/%m/%y", "%m/%d/%y",
];

/// A header cell as compared with the names above: trimmed, lower-case,
/// with a trailing unit taken off and returned as a currency code: `(EUR)`,
/// or a symbol such as DKB's `Betrag (€)`.
fn header_name(cell: &str) -> (String, Option<String>) {
    let lower = cell.trim().trim_matches('"').trim().to_lowercase();
    if let Some(open) = lower.rfind(" (")
        && let Some(unit) = lower[open + 2..].strip_suffix(')')
    {
        let code = if unit.len() == 3 && unit.chars().all(|c| c.is_ascii_alphabetic()) {
            Some(unit.to_ascii_uppercase())
        } else if unit.chars().count() == 1 {
            symbol_currency(unit).map(str::to_owned)
        } else {
            None
        };
        if let Some(code) = code {
            return (lower[..open].trim().to_owned(), Some(code));
        }
    }
    (lower, None)
}

impl CsvProfile {
    /// A profile from a header row of a known layout.
    fn detect(header: &[String]) -> Option<CsvProfile> {
        let names: Vec<(String, Option<String>)> = header.iter().map(|h| header_name(h)).collect();
        // The most specific name wins, whatever the column order: with
        // `Date,Reference,Description,Amount` the description is
        // `Description`, not the (often empty) `Reference`.
        let find = |wanted: &[&str]| {
            wanted
                .iter()
                .find_map(|w| names.iter().position(|(name, _)| name == w))
                .map(Column::Index)
        };
        let date = find(DATE_NAMES)?;
        let amount = find(AMOUNT_NAMES);
        let (debit, credit) = (find(DEBIT_NAMES), find(CREDIT_NAMES));
        if amount.is_none() && (debit.is_none() || credit.is_none()) {
            return None;
        }
        // `Amount (USD)`: the header names the currency.
        let unit = [&amount, &debit, &credit]
            .into_iter()
            .find_map(|c| match c {
                Some(Column::Index(i)) => names[*i].1.clone(),
                _ => None,
            });
        let account_column = find_account_column(
            &names
                .iter()
                .map(|(name, _)| name.clone())
                .collect::<Vec<_>>(),
        )
        .map(Column::Index);
        Some(CsvProfile {
            delimiter: None,
            has_header: true,
            date,
            date_format: None,
            amount,
            debit,
            credit,
            description: find(DESCRIPTION_NAMES),
            payee: find(PAYEE_NAMES),
            id: find(ID_NAMES),
            decimal_comma: None,
            money_out_positive: false,
            encoding: None,
            account: None,
            account_column,
            currency: unit,
            currency_column: find(CURRENCY_NAMES),
            debit_credit: find(DEBIT_CREDIT_NAMES),
            debit_value: None,
            skip_rows: None,
        })
    }
}

/// An error of what a profile says, for the file as a whole.
fn profile_error(text: String) -> ReadError {
    ReadError::of_file(Reason::Profile(text))
}

fn column_index(
    column: &Column,
    header: Option<&[String]>,
    what: &str,
) -> Result<usize, ReadError> {
    match column {
        Column::Index(i) => Ok(*i),
        Column::Name(name) => match header {
            None => Err(profile_error(format!(
                "the profile's {what} column is named `{name}`, but the profile has no header row (\"has_header\": false): give its 0-based position"
            ))),
            Some(h) => h
                .iter()
                .position(|c| header_name(c).0 == header_name(name).0)
                .ok_or_else(|| {
                    profile_error(format!(
                        "the profile's {what} column `{name}` is not in the header"
                    ))
                }),
        },
    }
}

fn decode(bytes: &[u8], encoding: Option<&str>) -> Result<String, ReadError> {
    match encoding {
        Some(label) => {
            let encoding = encoding_rs::Encoding::for_label(label.as_bytes())
                .ok_or_else(|| profile_error(format!("unknown encoding `{label}`")))?;
            Ok(encoding.decode(bytes).0.into_owned())
        }
        None => Ok(std::str::from_utf8(bytes)
            .map(str::to_owned)
            .unwrap_or_else(|_| encoding_rs::WINDOWS_1252.decode(bytes).0.into_owned())),
    }
}

/// The delimiter that splits the most of the first 30 lines into the same
/// number of cells: a table's rows agree, while a preamble line (a title
/// without any delimiter, `Account: 123,45`) does not count against it.
/// Ties go to the delimiter that makes more cells; none at all, `,`.
fn detect_delimiter(text: &str) -> u8 {
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .take(30)
        .collect();
    [b',', b'\t', b';']
        .into_iter()
        .filter_map(|delimiter| {
            let counts: Vec<usize> = lines
                .iter()
                .map(|line| line.matches(delimiter as char).count())
                .filter(|count| *count > 0)
                .collect();
            // The most frequent count, and how many lines have it.
            let (count, agreeing) = counts
                .iter()
                .map(|c| (*c, counts.iter().filter(|other| *other == c).count()))
                .max_by_key(|(c, agreeing)| (*agreeing, *c))?;
            Some(((agreeing, count), delimiter))
        })
        .max_by_key(|(score, _)| *score)
        .map_or(b',', |(_, delimiter)| delimiter)
}

/// Reads an amount, with the decimal comma as the profile says (or as the
/// text shows: a comma after the last point).
fn amount(text: &str, decimal_comma: Option<bool>) -> Option<Decimal> {
    let cleaned: String = text
        .trim()
        .chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '€' | '$' | '£' | '\''))
        .collect();
    if cleaned.is_empty() {
        return None;
    }
    let comma = decimal_comma.unwrap_or_else(|| {
        cleaned
            .rfind(',')
            .is_some_and(|c| cleaned.rfind('.').is_none_or(|p| c > p))
    });
    let normalized = if comma {
        cleaned.replace('.', "").replace(',', ".")
    } else {
        cleaned.replace(',', "")
    };
    let (negative, digits) = match normalized.strip_suffix('-') {
        Some(rest) => (true, rest.to_owned()),
        None => (false, normalized),
    };
    let value = parse_decimal(&digits).ok()?;
    Some(if negative { -value } else { value })
}

/// The currency a symbol in an amount stands for.
fn symbol_currency(text: &str) -> Option<&'static str> {
    [('€', "EUR"), ('$', "USD"), ('£', "GBP"), ('¥', "JPY")]
        .into_iter()
        .find(|(symbol, _)| text.contains(*symbol))
        .map(|(_, code)| code)
}

/// Whether a debit/credit column's value means money out (`Some(true)`),
/// money in (`Some(false)`), or neither.
fn is_debit(text: &str) -> Option<bool> {
    match text.trim().to_lowercase().as_str() {
        // ISO 20022's DBIT/CRDT, Dutch debet, German Soll/Haben (S/H),
        // Dutch Af/Bij, French, Spanish and Italian words.
        "debit" | "dr" | "d" | "db" | "dbit" | "debet" | "soll" | "s" | "af" | "débit"
        | "cargo" | "dare" => Some(true),
        "credit" | "cr" | "c" | "crdt" | "haben" | "h" | "bij" | "crédit" | "abono" | "avere" => {
            Some(false)
        }
        _ => None,
    }
}

/// How many distinct values a column may hold, and how long each, to look
/// like a debit/credit indicator.
const INDICATOR_VALUES: usize = 2;
const INDICATOR_LENGTH: usize = 4;

/// Where a detected layout's amounts take their sign from, when its header
/// names no debit/credit column: a column whose every value is one the
/// reader knows as debit or credit (`Type`: `debit`/`credit`). A column
/// that only looks like one (two distinct short values) the reader cannot
/// place, beside amounts that are never negative, refuses the file: its
/// amounts would otherwise import unsigned.
fn find_indicator(
    header: &[String],
    data: &[(usize, &Vec<String>)],
    taken: &[usize],
    amounts_never_negative: bool,
) -> Result<Option<usize>, ReadError> {
    let width = data.iter().map(|(_, row)| row.len()).max().unwrap_or(0);
    let values = |i: usize| {
        let mut seen: Vec<String> = data
            .iter()
            .filter_map(|(_, row)| row.get(i))
            .map(|c| c.trim().to_owned())
            .filter(|c| !c.is_empty())
            .collect();
        seen.sort_unstable();
        seen.dedup();
        seen
    };
    // Amounts that carry their own sign need no indicator: a column of one
    // known word (a `C` for cleared) must not override them.
    if !amounts_never_negative {
        return Ok(None);
    }
    let free = (0..width).filter(|i| !taken.contains(i));
    for i in free.clone() {
        let seen = values(i);
        if !seen.is_empty()
            && seen.len() <= INDICATOR_VALUES
            && seen.iter().all(|v| is_debit(v).is_some())
        {
            return Ok(Some(i));
        }
    }
    for i in free {
        let seen = values(i);
        if seen.len() == INDICATOR_VALUES
            && seen.iter().all(|v| v.chars().count() <= INDICATOR_LENGTH)
        {
            let name = header.get(i).map_or_else(
                || format!("{}", i + 1),
                |h| format!("{} ({})", i + 1, h.trim()),
            );
            return Err(profile_error(format!(
                "column {name} looks like a debit/credit indicator (its values are `{}` and `{}`) that Tributary does not know, and no amount is negative: the amounts would import without their sign. Pass a CSV profile naming it, e.g. {{\"debit_credit\": \"{}\", \"debit_value\": \"{}\"}} with the value that means money out (docs/imports.md#csv-profiles)",
                seen[0],
                seen[1],
                header
                    .get(i)
                    .map_or_else(|| i.to_string(), |h| h.trim().to_owned()),
                seen[0],
            )));
        }
    }
    Ok(None)
}

/// The text of a row's cells outside `named` columns, in their order: cells
/// with a letter and more than 3 characters (shorter ones are codes: `EUR`,
/// `No`, `D`) that are no date, amount or account number.
fn unnamed_text(row: &[String], named: &[usize]) -> Option<String> {
    let is_text = |cell: &str| {
        let compact: Vec<char> = cell.chars().filter(|c| !c.is_whitespace()).collect();
        // An IBAN: a country code, check digits, then letters and digits.
        let account_number = compact.len() >= 15
            && compact.iter().all(char::is_ascii_alphanumeric)
            && compact[..2].iter().all(char::is_ascii_uppercase)
            && compact[2..4].iter().all(char::is_ascii_digit);
        cell.chars().count() > 3
            && cell.chars().any(char::is_alphabetic)
            && !account_number
            && amount(cell, None).is_none()
            && !DATE_FORMATS
                .iter()
                .any(|f| NaiveDate::parse_from_str(cell, f).is_ok())
    };
    let text = row
        .iter()
        .enumerate()
        .filter(|(i, _)| !named.contains(i))
        .map(|(_, cell)| cell.trim())
        .filter(|cell| is_text(cell))
        .collect::<Vec<_>>()
        .join(" ");
    (!text.is_empty()).then_some(text)
}

/// The one IBAN (valid check digits and country layout) that `rows` name,
/// alone in a cell or after a label in it (`Konto: DE02 1203 …`); none when
/// they name none or several.
fn preamble_iban(rows: &[Vec<String>]) -> Option<String> {
    use iban::IbanLike;
    /// Longer cells are prose, not an account line.
    const LONGEST_CELL: usize = 200;
    let mut found: Vec<String> = Vec::new();
    for cell in rows.iter().flatten().filter(|c| c.len() <= LONGEST_CELL) {
        let words: Vec<&str> = cell.split_whitespace().collect();
        // The cell from each word on, without spaces (IBANs are written
        // in groups of four).
        for start in 0..words.len() {
            let candidate: String = words[start..].concat();
            let candidate = candidate.trim_matches(|c: char| !c.is_ascii_alphanumeric());
            if let Ok(iban) = candidate.parse::<iban::Iban>() {
                let text = iban.electronic_str().to_owned();
                if !found.contains(&text) {
                    found.push(text);
                }
            }
        }
    }
    (found.len() == 1).then(|| found.remove(0))
}

/// A row as a note quotes it: its non-empty cells, at most 60 characters.
fn shown(row: &[String]) -> String {
    let text = row
        .iter()
        .map(|c| c.trim())
        .filter(|c| !c.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    match text.char_indices().nth(60) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

/// How many leading rows are a preamble: the first row (of the first 20)
/// that reads as a known header starts the table.
fn detect_header(rows: &[Vec<String>]) -> Option<(usize, CsvProfile)> {
    rows.iter()
        .take(20)
        .enumerate()
        .find_map(|(n, row)| CsvProfile::detect(row).map(|profile| (n, profile)))
}

/// Why a CSV file does not read: its header is no layout Tributary knows
/// (a profile would tell), or a place in it says why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CsvError {
    #[error(
        "the header row is not a layout Tributary knows (a date column and an amount, or debit and credit, column): its layout needs a CSV profile"
    )]
    UnknownLayout,
    #[error("{0}")]
    Unreadable(ReadError),
}

impl From<ReadError> for CsvError {
    fn from(error: ReadError) -> Self {
        CsvError::Unreadable(error)
    }
}

pub fn parse(bytes: &[u8], profile: Option<&CsvProfile>) -> Result<Vec<Statement>, ReadError> {
    read(bytes, profile).map_err(|err| match err {
        CsvError::Unreadable(error) => error,
        CsvError::UnknownLayout => profile_error(err.to_string()),
    })
}

/// [`parse`], telling an unknown layout from a file that does not read.
pub(crate) fn read(bytes: &[u8], profile: Option<&CsvProfile>) -> Result<Vec<Statement>, CsvError> {
    let text = decode(bytes, profile.and_then(|p| p.encoding.as_deref()))?;
    let text = text.trim_start_matches('\u{feff}');
    let delimiter = profile
        .and_then(|p| p.delimiter)
        .map_or_else(|| detect_delimiter(text), |d| d as u8);
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    // (line number, cells) of every row that is not blank.
    let mut rows: Vec<(usize, Vec<String>)> = Vec::new();
    for (n, record) in reader.records().enumerate() {
        let record = record.map_err(|err| {
            Place::new(format!("row {}", n + 1)).at(Reason::Structure(err.to_string()))
        })?;
        if record.iter().any(|cell| !cell.trim().is_empty()) {
            let line = record.position().map_or(n + 1, |p| p.line() as usize);
            rows.push((line, record.iter().map(str::to_owned).collect()));
        }
    }
    let cells: Vec<Vec<String>> = rows.iter().map(|(_, row)| row.clone()).collect();
    let detected = profile.is_none();
    let (skip, profile) = match profile {
        Some(profile) => (profile.skip_rows.unwrap_or(0), profile.clone()),
        None => detect_header(&cells).ok_or(CsvError::UnknownLayout)?,
    };
    let rows = rows.get(skip..).unwrap_or_default();
    let header_row = rows.first().map(|(_, row)| row.clone()).unwrap_or_default();
    let header = profile.has_header.then_some(header_row.as_slice());
    let index = |column: &Option<Column>, what: &str| {
        column
            .as_ref()
            .map(|c| column_index(c, header, what))
            .transpose()
    };
    let date_col = column_index(&profile.date, header, "date")?;
    let (amount_col, debit_col, credit_col) = (
        index(&profile.amount, "amount")?,
        index(&profile.debit, "debit")?,
        index(&profile.credit, "credit")?,
    );
    if amount_col.is_none() && (debit_col.is_none() || credit_col.is_none()) {
        return Err(profile_error(
            "the profile names neither an amount column nor both debit and credit columns"
                .to_owned(),
        )
        .into());
    }
    let (description_col, payee_col, id_col) = (
        index(&profile.description, "description")?,
        index(&profile.payee, "payee")?,
        index(&profile.id, "id")?,
    );
    let (currency_col, mut debit_credit_col) = (
        index(&profile.currency_column, "currency")?,
        index(&profile.debit_credit, "debit/credit")?,
    );
    let account_col = index(&profile.account_column, "account")?;
    // Rows below the header, without repeats of the header (files joined
    // from several exports repeat it).
    let mut data: Vec<(usize, &Vec<String>)> = rows
        .iter()
        .skip(usize::from(profile.has_header))
        .filter(|(_, row)| header != Some(row.as_slice()))
        .map(|(line, row)| (*line, row))
        .collect();
    let mut notes = Vec::new();
    if detected && skip > 0 {
        notes.push(format!(
            "{skip} row(s) before the header row were skipped: a preamble, not transactions (the first: `{}`)",
            shown(&cells[0])
        ));
    }
    // The account a preamble names (DKB's `"Girokonto";"DE02…"`, a
    // `Kontonummer:;DE02…` line): one valid IBAN there, where no column
    // names the account, is the rows' account, so two accounts of one bank
    // (the same layout) never share one.
    let preamble_account = (detected && account_col.is_none() && profile.account.is_none())
        .then(|| preamble_iban(&cells[..skip.min(cells.len())]))
        .flatten();
    if let Some(iban) = &preamble_account {
        notes.push(format!(
            "the rows before the header name the account {iban}: the rows are its"
        ));
    }
    // Trailer rows (`***END OF FILE***`, a totals line): the rows at the
    // end whose date cell is no date at all. A file of nothing else is not
    // all trailer: its first row is named as unreadable below.
    let trailer = data
        .iter()
        .rev()
        .take_while(|(_, row)| {
            row.get(date_col)
                .is_none_or(|text| !text.chars().any(|c| c.is_ascii_digit()))
        })
        .count();
    if trailer > 0 && trailer < data.len() {
        let first = data[data.len() - trailer].1;
        notes.push(format!(
            "{trailer} row(s) after the last transaction were skipped: their date column holds no digit, so they are not transactions (the first: `{}`)",
            shown(first)
        ));
        data.truncate(data.len() - trailer);
    }
    // Whether any amount carries a minus sign: then signs are the amounts'.
    let amounts_signed = amount_col.is_some_and(|i| {
        data.iter().any(|(_, row)| {
            row.get(i)
                .and_then(|c| amount(c.trim(), profile.decimal_comma))
                .is_some_and(|v| v.is_sign_negative())
        })
    });
    // A detected layout with one amount column and no debit/credit column
    // by name may still carry the sign in a column of its own.
    if detected && debit_credit_col.is_none() && amount_col.is_some() {
        let taken: Vec<usize> = [
            Some(date_col),
            amount_col,
            description_col,
            payee_col,
            id_col,
            currency_col,
            account_col,
        ]
        .into_iter()
        .flatten()
        .collect();
        debit_credit_col =
            find_indicator(header.unwrap_or_default(), &data, &taken, !amounts_signed)?;
    }
    let column_name = |i: usize| {
        header.and_then(|h| h.get(i)).map_or_else(
            || format!("{}", i + 1),
            |name| format!("{} ({name})", i + 1),
        )
    };
    let cell =
        |row: &Vec<String>, i: usize| row.get(i).map(|c| c.trim().to_owned()).unwrap_or_default();
    // `row 7, column 3 (Betrag)`.
    let at = |row: usize, column: usize| {
        Place::new(format!("row {row}, column {}", column_name(column)))
    };
    let plausible = |date: NaiveDate| (1900..2200).contains(&date.year());
    let date_format = match &profile.date_format {
        Some(format) => format.clone(),
        // The first format that reads every row, so that a file whose first
        // rows are ambiguous (01/02) is not read day-for-month; else the
        // one that reads most of the first 20, and the row it fails on is
        // named below.
        None => {
            let reads = |format: &str, row: &Vec<String>| {
                NaiveDate::parse_from_str(&cell(row, date_col), format).is_ok_and(plausible)
            };
            DATE_FORMATS
                .iter()
                .find(|f| data.iter().all(|(_, row)| reads(f, row)))
                .or_else(|| {
                    DATE_FORMATS
                        .iter()
                        .enumerate()
                        .map(|(order, f)| {
                            let count = data.iter().take(20).filter(|(_, row)| reads(f, row)).count();
                            (count, std::cmp::Reverse(order), f)
                        })
                        .filter(|(count, _, _)| *count > 0)
                        // The most rows; of equals, the first in the list.
                        .max_by_key(|(count, order, _)| (*count, *order))
                        .map(|(_, _, f)| f)
                })
                .map(|f| (*f).to_owned())
                .ok_or_else(|| profile_error(format!("the dates in column {} are in no format Tributary knows: give `date_format` in a profile", column_name(date_col))))?
        }
    };

    let named_columns: Vec<usize> = [
        Some(date_col),
        amount_col,
        debit_col,
        credit_col,
        description_col,
        payee_col,
        id_col,
        currency_col,
        debit_credit_col,
        account_col,
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut records = Vec::new();
    let mut identities = Vec::new();
    // Whether each row's currency is one neither the file nor the profile
    // names, and the account it names (IBANs are written in groups).
    let mut assumed = Vec::new();
    let mut accounts = Vec::new();
    for (row_number, row) in &data {
        let date_text = cell(row, date_col);
        let date = NaiveDate::parse_from_str(&date_text, &date_format).map_err(|_| {
            at(*row_number, date_col).at(Reason::NotADate {
                text: date_text.clone(),
                expected: format!("the format {date_format}"),
            })
        })?;
        let read_amount = |i: usize| -> Result<Option<Decimal>, ReadError> {
            let text = cell(row, i);
            if text.is_empty() {
                return Ok(None);
            }
            amount(&text, profile.decimal_comma)
                .map(Some)
                .ok_or_else(|| at(*row_number, i).at(Reason::NotAnAmount { text }))
        };
        let value = match (amount_col, debit_col, credit_col) {
            (Some(i), _, _) => {
                read_amount(i)?.ok_or_else(|| at(*row_number, i).at(Reason::Missing("amount")))?
            }
            (None, Some(d), Some(c)) => {
                let out = read_amount(d)?.map(|v| -v.abs()).unwrap_or_default();
                let into = read_amount(c)?.map(|v| v.abs()).unwrap_or_default();
                out + into
            }
            _ => unreachable!("checked above: an amount column or both debit and credit"),
        };
        let indicator = debit_credit_col.map(|i| cell(row, i));
        let says_debit = match (&indicator, &profile.debit_value) {
            (Some(value), Some(debit)) if !value.is_empty() => {
                Some(value.eq_ignore_ascii_case(debit.trim()))
            }
            (Some(value), _) => is_debit(value),
            (None, _) => None,
        };
        // In a file whose amounts are never negative, a row its indicator
        // does not sign would import unsigned: it is refused, named. (Where
        // amounts carry signs, as N26's beside its `Transaction type`, the
        // sign is the amount's.)
        if let (Some(i), Some(text), None, Some(_)) =
            (debit_credit_col, &indicator, says_debit, amount_col)
            && value > Decimal::ZERO
            && !profile.money_out_positive
            && !amounts_signed
        {
            let reason = if text.is_empty() {
                Reason::Missing("debit/credit indicator, and the amount has no sign")
            } else {
                Reason::NotAllowed {
                    element: "the debit/credit indicator",
                    value: text.clone(),
                    allowed: "a debit or credit word Tributary knows (a profile's \"debit_value\" names others)",
                }
            };
            return Err(at(*row_number, i).at(reason).into());
        }
        let value = match says_debit {
            Some(true) => -value.abs(),
            Some(false) => value.abs(),
            None if profile.money_out_positive && amount_col.is_some() => -value,
            None => value,
        };
        let amount_text = [amount_col, debit_col, credit_col]
            .into_iter()
            .flatten()
            .map(|i| cell(row, i))
            .collect::<String>();
        let stated = currency_col
            .map(|i| cell(row, i).to_ascii_uppercase())
            .filter(|c| c.len() == 3 && c.chars().all(|ch| ch.is_ascii_alphabetic()))
            .or_else(|| symbol_currency(&amount_text).map(str::to_owned))
            .or_else(|| profile.currency.clone());
        assumed.push(stated.is_none());
        let currency = stated.unwrap_or_else(|| ASSUMED_CURRENCY.to_owned());
        accounts.push(
            account_col
                .map(|i| cell(row, i).split_whitespace().collect::<String>())
                .filter(|a| !a.is_empty())
                .or_else(|| preamble_account.clone()),
        );
        let description = description_col
            .map(|i| cell(row, i))
            .filter(|s| !s.is_empty());
        let payee = payee_col.map(|i| cell(row, i)).filter(|s| !s.is_empty());
        let reference = id_col.map(|i| cell(row, i)).filter(|s| !s.is_empty());
        identities.push(EntryIdentity {
            reference,
            date,
            amount: value,
            text: identity_text(&[description.as_deref(), payee.as_deref(), Some(&currency)]),
        });
        // A row whose named columns hold no text is described by the text
        // of its other columns (a payee or booking text under a header
        // Tributary does not know), so that a record with text never reads
        // back without any. Its id stays as it was (from the named columns).
        let description = match (&description, &payee) {
            (None, None) => unnamed_text(row, &named_columns),
            _ => description,
        };
        records.push(SnapshotTransaction {
            provider_id: String::new(),
            pending_provider_id: None,
            is_pending: false,
            date,
            amount: value,
            currency,
            merchant: payee,
            description,
            hints: Default::default(),
        });
    }
    let layout = Layout::of(header, &data);
    let account_column = account_col.map(column_name);
    statements(
        records
            .into_iter()
            .zip(identities)
            .zip(assumed)
            .zip(accounts)
            .map(|(((record, identity), assumed), account)| Row {
                record,
                identity,
                assumed,
                account,
                legacy_id: None,
            })
            .collect(),
        &profile,
        &layout,
        account_column.as_deref(),
        notes,
    )
}

/// The most accounts one CSV file's account column may name. Real exports
/// hold a handful; a column naming more is likely the other party's, and
/// would make as many accounts.
const MAX_ACCOUNTS_PER_FILE: usize = 50;

/// One row read: its transaction, what identifies it, whether its
/// currency was assumed, and the account its account column names.
struct Row {
    record: SnapshotTransaction,
    identity: EntryIdentity,
    assumed: bool,
    account: Option<String>,
    /// Its id when every row of a file went to one account.
    legacy_id: Option<String>,
}

/// What a file's columns are, to tell files naming no account apart: a
/// short digest for the account's id, and the first column names for its
/// name.
struct Layout {
    digest: String,
    label: String,
}

impl Layout {
    fn of(header: Option<&[String]>, data: &[(usize, &Vec<String>)]) -> Layout {
        use sha2::{Digest, Sha256};
        let (signature, label) = match header {
            Some(header) => {
                let names: Vec<String> = header.iter().map(|h| header_name(h).0).collect();
                let shown: Vec<String> = header
                    .iter()
                    .map(|h| h.trim().trim_matches('"').trim())
                    .filter(|h| !h.is_empty())
                    .map(|h| h.chars().take(30).collect())
                    .collect();
                let mut label = shown.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
                if shown.len() > 3 {
                    label.push_str(", …");
                }
                (names.join("\u{1f}"), format!("CSV: {label}"))
            }
            None => {
                let width = data.iter().map(|(_, row)| row.len()).max().unwrap_or(0);
                (
                    format!("no header, {width} columns"),
                    format!("CSV of {width} columns without a header"),
                )
            }
        };
        let digest = Sha256::digest(signature.as_bytes());
        Layout {
            digest: digest[..4].iter().map(|b| format!("{b:02x}")).collect(),
            label,
        }
    }
}

/// The rows as statements: one per account their account column names
/// (or the profile's `account`), in the order each first appears, and
/// one for the rows naming none, kept apart from other files by its
/// currency and `layout`. Entry ids are unique within each account.
/// `file_notes` (rows skipped before or after the table) go to the first.
fn statements(
    rows: Vec<Row>,
    profile: &CsvProfile,
    layout: &Layout,
    account_column: Option<&str>,
    file_notes: Vec<String>,
) -> Result<Vec<Statement>, CsvError> {
    let mut file_notes = Some(file_notes);
    // The ids rows had when a file's rows all went to one account, keyed
    // by the first row's currency (Statement::legacy_ids), for files whose
    // rows an account column now routes.
    let routed = rows.iter().any(|r| r.account.is_some());
    let mut legacy_ids = if routed && profile.account.is_none() {
        let currency = rows
            .first()
            .map_or(ASSUMED_CURRENCY, |r| r.record.currency.as_str());
        let identities: Vec<EntryIdentity> = rows.iter().map(|r| r.identity.clone()).collect();
        entry_ids(&legacy_account_id(currency), &identities, "csv:")
    } else {
        Vec::new()
    }
    .into_iter();
    let mut groups: Vec<(Option<String>, Vec<Row>)> = Vec::new();
    let mut index: std::collections::HashMap<Option<String>, usize> =
        std::collections::HashMap::new();
    for mut row in rows {
        row.legacy_id = legacy_ids.next();
        let account = row.account.clone().or_else(|| profile.account.clone());
        let at = *index.entry(account.clone()).or_insert_with(|| {
            groups.push((account, Vec::new()));
            groups.len() - 1
        });
        groups[at].1.push(row);
    }
    if groups.is_empty() {
        groups.push((profile.account.clone(), Vec::new()));
    }
    let named = groups
        .iter()
        .filter(|(account, _)| account.is_some())
        .count();
    if named > MAX_ACCOUNTS_PER_FILE {
        return Err(CsvError::Unreadable(profile_error(format!(
            "column {} names {named} different accounts, more than the {MAX_ACCOUNTS_PER_FILE} one file may hold: if it holds the other party's account, read the file with a CSV profile naming the columns, without \"account_column\" (docs/imports.md#csv)",
            account_column.unwrap_or("account"),
        ))));
    }
    let named_too = named > 0;
    Ok(groups
        .into_iter()
        .map(|(account, rows)| {
            // The account's currency: its rows' (the first row's), else
            // the profile's.
            let currency = rows.first().map_or_else(
                || {
                    profile
                        .currency
                        .clone()
                        .unwrap_or_else(|| ASSUMED_CURRENCY.to_owned())
                },
                |r| r.record.currency.clone(),
            );
            let currency_assumed: Vec<usize> = rows
                .iter()
                .enumerate()
                .filter(|(_, r)| r.assumed)
                .map(|(i, _)| i)
                .collect();
            // Nothing silently assumed: a USD export read as EUR would
            // otherwise look right.
            let mut notes = file_notes.take().unwrap_or_default();
            if !currency_assumed.is_empty() {
                notes.push(assumed_currency_note(currency_assumed.len()));
            }
            // Ids of rows naming no account are made as before such files
            // were kept apart by layout, so a re-import finds them again.
            let id_key = account
                .clone()
                .unwrap_or_else(|| legacy_account_id(&currency));
            let identities: Vec<EntryIdentity> = rows.iter().map(|r| r.identity.clone()).collect();
            let legacy_ids: Vec<String> = rows.iter().filter_map(|r| r.legacy_id.clone()).collect();
            let mut transactions: Vec<SnapshotTransaction> =
                rows.into_iter().map(|r| r.record).collect();
            for (record, id) in transactions
                .iter_mut()
                .zip(entry_ids(&id_key, &identities, "csv:"))
            {
                record.provider_id = id;
            }
            let (account_id, account_name) = match account {
                // A number shows as `Account …1234`; a word (`Savings`) is
                // the account's name.
                Some(account) => {
                    let name =
                        (!account.chars().any(|c| c.is_ascii_digit())).then(|| account.clone());
                    (account, name)
                }
                None => {
                    let name = format!("Imported {currency} account ({})", layout.label);
                    if let (true, Some(column)) = (named_too, account_column) {
                        notes.push(format!(
                            "{} row(s) leave column {column} empty: they went to \"{name}\"",
                            transactions.len()
                        ));
                    }
                    (
                        unnamed_account_id(&currency, &format!("csv-{}", layout.digest)),
                        Some(name),
                    )
                }
            };
            Statement {
                account_id,
                account_name,
                kind: AccountKind::Checking,
                currency,
                transactions,
                opening_booked: None,
                opening_date: None,
                closing_booked: None,
                balance: None,
                holdings: None,
                investment_transactions: Vec::new(),
                servicer: None,
                notes,
                currency_assumed,
                legacy_ids,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_layouts_are_recognised() {
        let english =
            "Date,Description,Amount\n2024-01-05,Coffee,-3.50\n2024-01-06,Salary,2500.00\n";
        let statements = parse(english.as_bytes(), None).unwrap();
        let t = &statements[0].transactions;
        assert_eq!(
            (
                t[0].amount.to_string().as_str(),
                t[0].description.as_deref()
            ),
            ("-3.50", Some("Coffee"))
        );

        let german = "Buchungstag;Verwendungszweck;Beguenstigter/Zahlungspflichtiger;Betrag\n05.01.2024;Miete Januar;Hausverwaltung;-1.250,00\n";
        let t = &parse(german.as_bytes(), None).unwrap()[0].transactions;
        assert_eq!(
            (t[0].amount.to_string().as_str(), t[0].merchant.as_deref()),
            ("-1250.00", Some("Hausverwaltung"))
        );
        assert_eq!(t[0].date.to_string(), "2024-01-05");

        let debit_credit =
            "Date,Details,Debit,Credit\n01/31/2024,ATM,60.00,\n02/01/2024,Refund,,12.34\n";
        let t = &parse(debit_credit.as_bytes(), None).unwrap()[0].transactions;
        assert_eq!(
            t.iter().map(|t| t.amount.to_string()).collect::<Vec<_>>(),
            ["-60.00", "12.34"]
        );
    }

    /// (count, signed sum) of a file's transactions.
    fn signed(text: &str, profile: Option<&CsvProfile>) -> (usize, String) {
        let statements = parse(text.as_bytes(), profile).unwrap();
        let t = &statements[0].transactions;
        (
            t.len(),
            t.iter().map(|t| t.amount).sum::<Decimal>().to_string(),
        )
    }

    #[test]
    fn debit_credit_indicator_columns_sign_the_amounts() {
        for (file, expected) in [
            // Dutch: a column named CreditDebet, D and C.
            (
                "Datum;Naam;Bedrag;CreditDebet\n2026-01-05;Albert Heijn;12,50;D\n2026-01-06;Werkgever;2000,00;C\n2026-01-07;NS;3,20;D\n",
                (3, "1984.30"),
            ),
            // Dutch: Af Bij, Af and Bij.
            (
                "Datum;Naam / Omschrijving;Af Bij;Bedrag (EUR)\n20260105;Jumbo;Af;7,25\n20260106;Huur;Bij;800,00\n",
                (2, "792.75"),
            ),
            // German: S/H.
            (
                "Buchungstag;Verwendungszweck;Betrag;S/H\n05.01.2026;Miete;1.250,00;S\n06.01.2026;Gehalt;3.000,00;H\n",
                (2, "1750.00"),
            ),
            // ISO 20022 words in a column named for them.
            (
                "Date,Description,Amount,CdtDbtInd\n2026-01-05,Card,40.00,DBIT\n2026-01-06,Refund,15.00,CRDT\n",
                (2, "-25.00"),
            ),
            // A column of another name whose every value is debit or credit.
            (
                "Date,Description,Amount,Type\n2026-01-05,Coffee,3.50,debit\n2026-01-06,Salary,2500.00,credit\n",
                (2, "2496.50"),
            ),
        ] {
            assert_eq!(
                signed(file, None),
                (expected.0, expected.1.to_owned()),
                "{file}"
            );
        }
    }

    #[test]
    fn an_indicator_the_reader_cannot_place_refuses_the_file_and_a_profile_places_it() {
        let file = "Date,Description,Amount,Dir\n2026-01-05,Coffee,3.50,A\n2026-01-06,Salary,2500.00,B\n2026-01-07,Tea,2.00,A\n";
        let err = parse(file.as_bytes(), None).unwrap_err().to_string();
        assert!(
            err.contains("column 4 (Dir)")
                && err.contains("`A` and `B`")
                && err.contains("debit_value"),
            "{err}"
        );
        let profile: CsvProfile = serde_json::from_value(serde_json::json!({
            "date": "Date", "amount": "Amount", "description": "Description",
            "debit_credit": "Dir", "debit_value": "A"
        }))
        .unwrap();
        assert_eq!(signed(file, Some(&profile)), (3, "2494.50".to_owned()));
        // Two short values beside amounts that carry their sign are no
        // indicator (a yes/no column, say).
        let signed_file = "Date,Description,Amount,Recurring\n2026-01-05,Coffee,-3.50,N\n2026-01-06,Salary,2500.00,Y\n";
        assert_eq!(signed(signed_file, None), (2, "2496.50".to_owned()));
    }

    #[test]
    fn preamble_and_trailer_rows_are_skipped_and_counted() {
        // A German export: a title line without any delimiter, account
        // lines, a blank line, the table, then a totals line and an end
        // marker.
        let file = "Kontoumsätze Girokonto\nKontonummer:;DE02120300000000202051\nZeitraum:;01.01.2026 - 31.01.2026\n\nBuchungstag;Verwendungszweck;Betrag\n05.01.2026;Miete;-850,00\n13.01.2026;Gehalt;2.500,00\n20.01.2026;Strom;-61,20\nSumme;;1.588,80\n***END OF FILE***\n";
        let statements = parse(file.as_bytes(), None).unwrap();
        let statement = &statements[0];
        assert_eq!(statement.transactions.len(), 3);
        assert_eq!(statement.signed_sum(), "1588.80");
        assert_eq!(
            statement.notes[..3],
            [
                "3 row(s) before the header row were skipped: a preamble, not transactions (the first: `Kontoumsätze Girokonto`)",
                "the rows before the header name the account DE02120300000000202051: the rows are its",
                "2 row(s) after the last transaction were skipped: their date column holds no digit, so they are not transactions (the first: `Summe 1.588,80`)",
            ]
        );
        // A comma file whose title line has no comma reads the same way.
        let file = "Account activity\nDate,Description,Amount\n2026-01-05,Coffee,-3.50\n2026-01-06,Refund,1.25\nTotal,,-2.25\n";
        let statement = &parse(file.as_bytes(), None).unwrap()[0];
        assert_eq!(statement.transactions.len(), 2);
        assert_eq!(statement.notes.len(), 3, "{:?}", statement.notes);
        // A bad date between transactions is no trailer: it is named.
        let file = "Date,Description,Amount\n2026-01-05,Coffee,-3.50\nsoon,Tea,-1.00\n2026-01-06,Refund,1.25\n";
        assert_eq!(
            parse(file.as_bytes(), None).unwrap_err(),
            Place::new("row 3, column 1 (Date)").at(Reason::NotADate {
                text: "soon".to_owned(),
                expected: "the format %Y-%m-%d".to_owned(),
            })
        );
    }

    #[test]
    fn text_under_headers_tributary_does_not_know_describes_the_row() {
        // A German layout whose payee and booking text columns have names
        // the reader does not map: their text describes the row; numbers,
        // codes, dates and the account IBAN do not.
        let file = "Konto;Buchungstag;Wertstellung;Auftraggeber/Empfänger;Buchungstext;VWZ1;Betrag;Kontostand;Währung\nDE89370400440532013000;02.11.2026;02.11.2026;Stadtwerke Musterstadt;Lastschrift;Abschlag November;-64,00;1.200,00;EUR\n";
        let t = &parse(file.as_bytes(), None).unwrap()[0].transactions[0];
        assert_eq!(
            (t.merchant.as_deref(), t.description.as_deref()),
            (
                None,
                Some("Stadtwerke Musterstadt Lastschrift Abschlag November")
            )
        );
        // The id is what it was before those texts were read.
        let blank = file.replace("Stadtwerke Musterstadt;Lastschrift;Abschlag November", ";;");
        let before = &parse(blank.as_bytes(), None).unwrap()[0].transactions[0];
        assert_eq!(
            (before.description.as_deref(), &before.provider_id),
            (None, &t.provider_id)
        );
    }

    #[test]
    fn a_currency_symbol_in_the_header_names_the_unit() {
        // DKB's export: `Betrag (€)`, after a preamble.
        let file = "\"Girokonto\";\"DE02120300000000202051\"\n\"Kontostand vom 31.01.2026:\";\"1.200,00 €\"\n\n\"Buchungsdatum\";\"Wertstellung\";\"Status\";\"Zahlungspflichtige*r\";\"Zahlungsempfänger*in\";\"Verwendungszweck\";\"Umsatztyp\";\"IBAN\";\"Betrag (€)\"\n\"05.01.26\";\"05.01.26\";\"Gebucht\";\"Max Mustermann\";\"Stadtwerke\";\"Abschlag\";\"Ausgang\";\"DE89370400440532013000\";\"-64,00\"\n\"06.01.26\";\"06.01.26\";\"Gebucht\";\"Arbeitgeber GmbH\";\"Max Mustermann\";\"Gehalt\";\"Eingang\";\"DE89370400440532013001\";\"2.500,00\"\n";
        let statement = &parse(file.as_bytes(), None).unwrap()[0];
        assert_eq!(statement.currency, "EUR");
        // The preamble's IBAN is the account: a Tagesgeld export of the
        // same layout is another account.
        assert_eq!(statement.account_id, "DE02120300000000202051");
        assert!(
            statement
                .notes
                .contains(&"the rows before the header name the account DE02120300000000202051: the rows are its".to_owned()),
            "{:?}",
            statement.notes
        );
        let savings = file.replace(
            "\"Girokonto\";\"DE02120300000000202051\"",
            "\"Tagesgeld\";\"DE02 5001 0517 0137 0750 30\"",
        );
        assert_eq!(
            parse(savings.as_bytes(), None).unwrap()[0].account_id,
            "DE02500105170137075030"
        );
        // Two IBANs, or a number that is no IBAN: the preamble names none.
        let two = file.replace(
            "\"Girokonto\";\"DE02120300000000202051\"",
            "\"Von\";\"DE02120300000000202051\";\"an\";\"DE89370400440532013000\"",
        );
        let not_iban = file.replace("DE02120300000000202051", "DE00120300000000202051");
        for file in [two, not_iban] {
            assert!(!parse(file.as_bytes(), None).unwrap()[0].names_account());
        }
        assert_eq!(statement.signed_sum(), "2436.00");
        assert_eq!(
            header_name("Amount ($)"),
            ("amount".to_owned(), Some("USD".to_owned()))
        );
        assert_eq!(
            header_name("Betrag (brutto)"),
            ("betrag (brutto)".to_owned(), None)
        );
    }

    #[test]
    fn an_indicator_never_overrides_signed_amounts_nor_leaves_one_unsigned() {
        // A column of `C` (cleared) beside signed amounts is no indicator.
        let file = "Date,Description,Amount,Cleared\n2026-01-05,Coffee,-3.50,C\n2026-01-06,Salary,1000.00,C\n";
        assert_eq!(
            parse(file.as_bytes(), None).unwrap()[0].signed_sum(),
            "996.50"
        );
        // An indicator column by its name, with a value it cannot place and
        // an unsigned amount: refused, naming the row, never imported +40.
        let file = "Date,Description,Amount,Debit/Credit\n2026-01-05,Coffee,3.50,Debit\n2026-01-06,Cheque 101,40.00,Cheque\n";
        assert_eq!(
            parse(file.as_bytes(), None).unwrap_err(),
            Place::new("row 3, column 4 (Debit/Credit)").at(Reason::NotAllowed {
                element: "the debit/credit indicator",
                value: "Cheque".to_owned(),
                allowed: "a debit or credit word Tributary knows (a profile's \"debit_value\" names others)",
            })
        );
        let empty = file.replace(",Cheque\n", ",\n");
        assert_eq!(
            parse(empty.as_bytes(), None).unwrap_err().to_string(),
            "row 3, column 4 (Debit/Credit): no debit/credit indicator, and the amount has no sign"
        );
        // A signed amount beside an unknown value keeps its sign.
        let signed = file.replace("40.00,Cheque", "-40.00,Cheque");
        assert_eq!(
            parse(signed.as_bytes(), None).unwrap()[0].signed_sum(),
            "-43.50"
        );
    }

    #[test]
    fn the_date_format_is_the_one_every_row_reads_in() {
        // The first rows read as day/month or month/day; a later one only
        // as day/month. Every row is read day/month, none falsified.
        let mut file = String::from("Date,Description,Amount\n");
        for day in 1..=12 {
            file.push_str(&format!("{day:02}/02/2026,Row {day},-1.00\n"));
        }
        file.push_str("25/02/2026,Late,-1.00\n");
        let statement = &parse(file.as_bytes(), None).unwrap()[0];
        assert_eq!(statement.transactions[0].date.to_string(), "2026-02-01");
        assert_eq!(statement.transactions[11].date.to_string(), "2026-02-12");
        assert_eq!(statement.transactions[12].date.to_string(), "2026-02-25");
    }

    #[test]
    fn a_profile_maps_positions_formats_signs_and_encodings() {
        let profile: CsvProfile = serde_json::from_value(serde_json::json!({
            "has_header": false, "date": 0, "date_format": "%d/%m/%Y", "amount": 2, "description": 1,
            "decimal_comma": true, "money_out_positive": true, "encoding": "windows-1252",
            "account": "FR7630006000011234567890189", "currency": "EUR"
        }))
        .unwrap();
        let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode("03/02/2024;Café;4,20\n");
        let statements = parse(&bytes, Some(&profile)).unwrap();
        let t = &statements[0].transactions[0];
        assert_eq!(
            (t.amount.to_string().as_str(), t.description.as_deref()),
            ("-4.20", Some("Café"))
        );
        assert_eq!(statements[0].account_id, "FR7630006000011234567890189");
        assert!(
            serde_json::from_value::<CsvProfile>(
                serde_json::json!({"date": 0, "amount": 1, "colour": "red"})
            )
            .is_err()
        );
    }

    #[test]
    fn a_currency_named_nowhere_is_assumed_aloud() {
        let bare =
            "Date,Description,Amount\n2026-01-02,Groceries,-12.00\n2026-01-03,Rent,-800.00\n";
        let statements = parse(bare.as_bytes(), None).unwrap();
        assert_eq!(statements[0].currency, "EUR");
        assert_eq!(statements[0].notes.len(), 1, "{:?}", statements[0].notes);
        assert!(statements[0].notes[0].starts_with("2 row(s) name no currency"));
        // Named by a column, a symbol, the header or a profile: no note.
        for (file, currency) in [
            (
                "Date,Description,Amount,Currency\n2026-01-02,Groceries,-12.00,USD\n",
                "USD",
            ),
            (
                "Date,Description,Amount\n2026-01-02,Groceries,-$12.00\n",
                "USD",
            ),
            (
                "Date,Description,Amount (GBP)\n2026-01-02,Groceries,-12.00\n",
                "GBP",
            ),
        ] {
            let statements = parse(file.as_bytes(), None).unwrap();
            assert_eq!(statements[0].currency, currency, "{file}");
            assert!(statements[0].notes.is_empty(), "{file}");
        }
        let profile: CsvProfile = serde_json::from_value(
            serde_json::json!({"date": "Date", "amount": "Amount", "currency": "CHF"}),
        )
        .unwrap();
        let statements = parse(bare.as_bytes(), Some(&profile)).unwrap();
        assert_eq!(statements[0].currency, "CHF");
        assert!(statements[0].notes.is_empty());
    }

    /// Each statement of a file: (account id, whether the file names it,
    /// count, signed sum).
    fn routed(text: &str, profile: Option<&CsvProfile>) -> Vec<(String, bool, usize, String)> {
        parse(text.as_bytes(), profile)
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s.account_id.clone(),
                    s.names_account(),
                    s.transactions.len(),
                    s.transactions
                        .iter()
                        .map(|t| t.amount)
                        .sum::<Decimal>()
                        .to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn an_account_column_routes_rows_to_their_accounts() {
        // A German savings-bank export of two accounts in one file, IBANs
        // written in groups of four in one of them; the other party's
        // account is in `Kontonummer/IBAN`.
        let german = "\"Auftragskonto\";\"Buchungstag\";\"Valutadatum\";\"Buchungstext\";\"Verwendungszweck\";\"Beguenstigter/Zahlungspflichtiger\";\"Kontonummer/IBAN\";\"BIC (SWIFT-Code)\";\"Betrag\";\"Waehrung\";\"Info\"\n\
            \"DE02120300000000202051\";\"02.03.26\";\"02.03.26\";\"FOLGELASTSCHRIFT\";\"Strom Maerz\";\"Stadtwerke\";\"DE89370400440532013000\";\"COBADEFFXXX\";\"-84,00\";\"EUR\";\"Umsatz gebucht\"\n\
            \"DE02 5001 0517 0137 0750 30\";\"03.03.26\";\"03.03.26\";\"GUTSCHRIFT\";\"Zinsen\";\"\";\"\";\"\";\"1,25\";\"EUR\";\"Umsatz gebucht\"\n\
            \"DE02120300000000202051\";\"04.03.26\";\"04.03.26\";\"LOHN GEHALT\";\"Gehalt Maerz\";\"Arbeitgeber GmbH\";\"DE75512108001245126199\";\"SOGEDEFFXXX\";\"2.500,00\";\"EUR\";\"Umsatz gebucht\"\n\
            \"DE02500105170137075030\";\"05.03.26\";\"05.03.26\";\"UMBUCHUNG\";\"Sparen\";\"Ich\";\"DE02120300000000202051\";\"BYLADEM1001\";\"200,00\";\"EUR\";\"Umsatz gebucht\"\n";
        assert_eq!(
            routed(german, None),
            [
                (
                    "DE02120300000000202051".to_owned(),
                    true,
                    2,
                    "2416.00".to_owned()
                ),
                (
                    "DE02500105170137075030".to_owned(),
                    true,
                    2,
                    "201.25".to_owned()
                ),
            ]
        );
        let statements = parse(german.as_bytes(), None).unwrap();
        assert!(
            statements.iter().all(|s| s.notes.is_empty()),
            "{statements:?}"
        );
        assert_eq!(statements[0].currency, "EUR");
        // Ids are made within each account and found again by a re-import.
        assert_eq!(parse(german.as_bytes(), None).unwrap(), statements);

        // Dutch: `Rekening` is the account, `Tegenrekening` the other
        // party's; `Af Bij` signs the amounts.
        let dutch = "\"Datum\",\"Naam / Omschrijving\",\"Rekening\",\"Tegenrekening\",\"Code\",\"Af Bij\",\"Bedrag (EUR)\",\"Mutatiesoort\",\"Mededelingen\"\n\
            \"20260302\",\"Albert Heijn\",\"NL20INGB0001234567\",\"\",\"BA\",\"Af\",\"23,45\",\"Betaalautomaat\",\"Pasvolgnr: 001\"\n\
            \"20260303\",\"Werkgever BV\",\"NL20INGB0001234567\",\"NL91ABNA0417164300\",\"OV\",\"Bij\",\"2100,00\",\"Overschrijving\",\"Salaris\"\n\
            \"20260303\",\"Spaarrekening\",\"NL69INGB0123456789\",\"NL20INGB0001234567\",\"OV\",\"Bij\",\"50,00\",\"Overschrijving\",\"Sparen\"\n";
        assert_eq!(
            routed(dutch, None),
            [
                (
                    "NL20INGB0001234567".to_owned(),
                    true,
                    2,
                    "2076.55".to_owned()
                ),
                ("NL69INGB0123456789".to_owned(), true, 1, "50.00".to_owned()),
            ]
        );

        // A profile names the column; an account that is a word, not a
        // number, names the account.
        let words = "when;what;much;which\n2026-03-01;Rent;-900.00;Checking\n2026-03-02;Interest;0.40;Savings\n";
        let profile: CsvProfile = serde_json::from_value(serde_json::json!({
            "delimiter": ";", "date": "when", "amount": "much", "description": "what",
            "account_column": "which", "currency": "USD"
        }))
        .unwrap();
        let statements = parse(words.as_bytes(), Some(&profile)).unwrap();
        assert_eq!(
            statements
                .iter()
                .map(|s| (
                    s.account_id.as_str(),
                    s.account_name.as_deref(),
                    s.currency.as_str()
                ))
                .collect::<Vec<_>>(),
            [
                ("Checking", Some("Checking"), "USD"),
                ("Savings", Some("Savings"), "USD")
            ]
        );
    }

    #[test]
    fn a_column_naming_more_accounts_than_a_file_holds_is_refused() {
        let mut file = "IBAN,Date,Description,Amount\n".to_owned();
        for n in 0..=MAX_ACCOUNTS_PER_FILE {
            file.push_str(&format!("NL{n:02}BANK0{n:09},2026-03-02,Transfer,-1.00\n"));
        }
        let err = parse(file.as_bytes(), None).unwrap_err().to_string();
        assert!(
            err.starts_with("column 1 (IBAN) names 51 different accounts, more than the 50"),
            "{err}"
        );
        // Fifty are read.
        let fifty: String = file
            .lines()
            .take(MAX_ACCOUNTS_PER_FILE + 1)
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(parse(fifty.as_bytes(), None).unwrap().len(), 50);
    }

    #[test]
    fn the_other_partys_account_is_never_the_account() {
        for (file, sum_expected) in [
            // N26: `Account number` follows the payee and is the payee's
            // (N26 writes one decimal where it can).
            (
                "\"Date\",\"Payee\",\"Account number\",\"Transaction type\",\"Payment reference\",\"Amount (EUR)\"\n\
             \"2026-03-02\",\"Landlord\",\"DE89370400440532013000\",\"Outgoing Transfer\",\"Rent\",\"-850.0\"\n\
             \"2026-03-03\",\"Bakery\",\"\",\"MasterCard Payment\",\"\",\"-4.2\"\n\
             \"2026-03-04\",\"Employer\",\"DE75512108001245126199\",\"Income\",\"Salary\",\"2000.0\"\n",
                "1145.8",
            ),
            // Deutsche Bank: `IBAN` after the other party's name.
            (
                "Buchungstag;Wert;Umsatzart;Begünstigter / Auftraggeber;Verwendungszweck;IBAN;BIC;Betrag;Währung\n\
             02.03.2026;02.03.2026;Lastschrift;Landlord;Rent;DE89370400440532013000;COBADEFFXXX;-850,00;EUR\n\
             03.03.2026;03.03.2026;Kartenzahlung;Bakery;;;;-4,20;EUR\n\
             04.03.2026;04.03.2026;Gutschrift;Employer;Salary;DE75512108001245126199;SOGEDEFFXXX;2.000,00;EUR\n",
                "1145.80",
            ),
            // Dutch: only `Tegenrekening` and `Rekeningnummer tegenpartij`.
            (
                "Datum;Omschrijving;Tegenrekening;Rekeningnummer tegenpartij;Bedrag;Munt\n\
             2026-03-02;Rent;NL91ABNA0417164300;NL91ABNA0417164300;-850,00;EUR\n\
             2026-03-03;Bakery;;;-4,20;EUR\n\
             2026-03-04;Salary;NL20INGB0001234567;NL20INGB0001234567;2000,00;EUR\n",
                "1145.80",
            ),
        ] {
            let statements = routed(file, None);
            assert_eq!(statements.len(), 1, "{file}");
            let (account, named, count, sum) = &statements[0];
            assert!(
                account.starts_with("unidentified-EUR-csv-") && !named,
                "{file}: {account}"
            );
            assert_eq!((*count, sum.as_str()), (3, sum_expected), "{file}");
        }
    }

    #[test]
    fn rows_without_an_account_go_to_an_account_of_their_own_and_are_said() {
        let file = "Account,Date,Description,Amount,Currency\n\
                    GB33BUKB20201555555555,2026-03-02,Coffee,-3.10,GBP\n\
                    ,2026-03-03,Unassigned fee,-1.00,GBP\n\
                    GB33BUKB20201555555555,2026-03-04,Refund,5.00,GBP\n";
        let statements = parse(file.as_bytes(), None).unwrap();
        assert_eq!(
            routed(file, None)
                .iter()
                .map(|(_, named, count, sum)| (*named, *count, sum.as_str()))
                .collect::<Vec<_>>(),
            [(true, 2, "1.90"), (false, 1, "-1.00")]
        );
        assert_eq!(statements[0].account_id, "GB33BUKB20201555555555");
        let unnamed = &statements[1];
        assert_eq!(
            unnamed.account_name.as_deref(),
            Some("Imported GBP account (CSV: Account, Date, Description, …)")
        );
        assert_eq!(
            unnamed.notes,
            [
                "1 row(s) leave column 1 (Account) empty: they went to \"Imported GBP account (CSV: Account, Date, Description, …)\""
            ]
        );
    }

    #[test]
    fn two_banks_exports_naming_no_account_are_two_accounts() {
        // Two layouts, the same currency (assumed) and the same row.
        let one = "Date,Description,Amount\n2026-03-02,Coffee,-3.10\n";
        let other = "Booking date;Payee;Amount;Reference\n02.03.2026;Coffee;-3,10;R1\n";
        let (a, b) = (
            &parse(one.as_bytes(), None).unwrap()[0],
            &parse(other.as_bytes(), None).unwrap()[0],
        );
        assert!(!a.names_account() && !b.names_account());
        assert_ne!(a.account_id, b.account_id);
        assert!(a.account_id.starts_with("unidentified-EUR-csv-"));
        assert_eq!(
            (a.account_name.as_deref(), b.account_name.as_deref()),
            (
                Some("Imported EUR account (CSV: Date, Description, Amount)"),
                Some("Imported EUR account (CSV: Booking date, Payee, Amount, …)")
            )
        );
        // Each says its currency was assumed, for each of its rows.
        assert_eq!(
            (a.currency_assumed.clone(), b.currency_assumed.clone()),
            (vec![0], vec![0])
        );
        assert!(
            a.notes[0].starts_with("1 row(s) name no currency"),
            "{:?}",
            a.notes
        );
        // Ids are still made with the account id of before, so a file
        // imported then is found again.
        let ids = crate::import::identity::entry_ids(
            "unidentified-EUR",
            &[EntryIdentity {
                reference: None,
                date: NaiveDate::from_ymd_opt(2026, 3, 2).unwrap(),
                amount: "-3.10".parse().unwrap(),
                text: identity_text(&[Some("Coffee"), None, Some("EUR")]),
            }],
            "csv:",
        );
        assert_eq!(a.transactions[0].provider_id, ids[0]);
    }

    #[test]
    fn the_most_specific_header_name_wins() {
        let file = "Date,Reference,Description,Amount\n2026-01-02,,Groceries,-12.00\n";
        let statements = parse(file.as_bytes(), None).unwrap();
        assert_eq!(
            statements[0].transactions[0].description.as_deref(),
            Some("Groceries")
        );
    }

    /// The profile docs/imports.md shows reads the row it says it reads.
    #[test]
    fn the_documented_profile_reads_as_documented() {
        let docs = include_str!("../../../../docs/imports.md");
        let block = docs
            .split("```json\n")
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .expect("a JSON profile in docs/imports.md");
        let profile: CsvProfile = serde_json::from_str(block).unwrap();
        let file = "Relevé de compte;;;;\nCompte FR76 3000 6000 0112 3456 7890 189;;;;\n\
                    03/02/2026;Loyer février;850,00;SCI Les Tilleuls;EUR\n";
        let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(file);
        let statements = parse(&bytes, Some(&profile)).unwrap();
        let t = &statements[0].transactions;
        assert_eq!(t.len(), 1);
        assert_eq!(
            (
                t[0].date.to_string(),
                t[0].amount.to_string(),
                t[0].currency.as_str(),
                t[0].merchant.as_deref(),
                t[0].description.as_deref()
            ),
            (
                "2026-02-03".to_owned(),
                "-850.00".to_owned(),
                "EUR",
                Some("SCI Les Tilleuls"),
                Some("Loyer février")
            )
        );
        assert!(docs.contains("`03/02/2026;Loyer février;850,00;SCI Les Tilleuls;EUR`"));
        let named: CsvProfile = serde_json::from_value(
            serde_json::json!({"has_header": false, "date": 0, "amount": 1, "payee": "Name"}),
        )
        .unwrap();
        let err = parse(b"2026-01-01;1,00;Shop\n", Some(&named))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("has no header row") && err.contains("payee"),
            "{err}"
        );
    }

    #[test]
    fn a_bad_value_names_the_row_and_column() {
        let bad = "Date,Description,Amount\n2024-01-05,Coffee,-3.50\n2024-01-06,Tea,three\n";
        let err = parse(bad.as_bytes(), None).unwrap_err();
        assert_eq!(
            err,
            Place::new("row 3, column 3 (Amount)").at(Reason::NotAnAmount {
                text: "three".to_owned()
            })
        );
        assert_eq!(
            err.to_string(),
            "row 3, column 3 (Amount): `three` is not an amount"
        );
        let bad_date = "Date,Amount\n2024-01-05,1\n2024-13-45,2\n";
        assert!(
            parse(bad_date.as_bytes(), None)
                .unwrap_err()
                .to_string()
                .contains("column 1 (Date)")
        );
        assert!(
            parse(b"just,some\nwords,here\n", None)
                .unwrap_err()
                .to_string()
                .contains("needs a CSV profile")
        );
    }

    #[test]
    fn identical_rows_are_kept_apart_and_reimports_match() {
        let twice = "Date,Description,Amount\n2024-01-05,Coffee,-3.50\n2024-01-05,Coffee,-3.50\n";
        let first = parse(twice.as_bytes(), None).unwrap();
        let ids: Vec<&str> = first[0]
            .transactions
            .iter()
            .map(|t| t.provider_id.as_str())
            .collect();
        assert_ne!(ids[0], ids[1]);
        assert_eq!(parse(twice.as_bytes(), None).unwrap(), first);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for input in [
            &b""[..],
            b"\xff\xfe\x00",
            b"Date,Amount\n\"unterminated",
            b"Date,Amount\n2024-01-01\n",
        ] {
            let error = crate::import::parse(input, Some(crate::import::Format::Csv))
                .expect_err(&String::from_utf8_lossy(input));
            assert!(
                matches!(
                    error,
                    crate::import::ImportError::Unreadable {
                        format: crate::import::Format::Csv,
                        ..
                    } | crate::import::ImportError::UnknownCsvLayout(_)
                        | crate::import::ImportError::NothingToImport
                ),
                "{error:?}"
            );
        }
    }
}
