//! OFX 1.x (SGML: leaf elements are not closed) and OFX 2.x (XML), and QFX
//! (OFX with Intuit extensions). Bank, credit card and investment statements;
//! investment positions and the security list become holdings.
//!
//! The reader is tolerant where real files are sloppy: no blank line after
//! the header, a `CHARSET` of 1252 / ISO-8859-1 / UTF-8, HTML entities in
//! values, empty tags, and timestamps such as `20180804093914:014` or
//! `20150909084609.717[-6:MDT]` (the date is their first eight digits).

use super::error::{MAX_NESTING, Place, ReadError, Reason};
use super::identity::{EntryIdentity, entry_ids, identity_text};
use super::statement::Statement;
use super::xml::Element;
use chrono::NaiveDate;
use std::borrow::Cow;
use std::collections::HashMap;
use tributary_domain::enrich::hints::{CategoryHint, Hints};
use tributary_domain::model::AccountKind;
use tributary_domain::money::{Decimal, parse_decimal};
use tributary_domain::snapshot::{Security, SnapshotBalance, SnapshotHolding, SnapshotTransaction};

/// Decodes by the header's `CHARSET` / `ENCODING` (OFX 1.x) or the XML
/// declaration (2.x); Windows-1252 when the bytes are not UTF-8 and nothing
/// says otherwise.
fn decode(bytes: &[u8]) -> Cow<'_, str> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(600)]).to_ascii_uppercase();
    let value_of = |key: &str| {
        head.split(key).nth(1).map(|rest| {
            rest.trim_start_matches(['=', ':', '"', ' '])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect::<String>()
        })
    };
    let label = match (value_of("CHARSET"), value_of("ENCODING")) {
        (_, Some(e)) if e == "UTF-8" => Some("utf-8".to_owned()),
        (Some(c), _) if c == "1252" => Some("windows-1252".to_owned()),
        (Some(c), _) if c.starts_with("ISO-8859") || c.starts_with("8859") => {
            Some("iso-8859-1".to_owned())
        }
        _ => None,
    };
    let encoding = label.and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()));
    match (encoding, std::str::from_utf8(bytes)) {
        (Some(encoding), _) => encoding.decode(bytes).0,
        (None, Ok(text)) => Cow::Borrowed(text),
        (None, Err(_)) => encoding_rs::WINDOWS_1252.decode(bytes).0,
    }
}

fn unescape(text: &str) -> String {
    quick_xml::escape::unescape_with(text, quick_xml::escape::resolve_html5_entity)
        .map(|t| t.into_owned())
        .unwrap_or_else(|_| text.to_owned())
}

/// One `STMTTRN` of a statement, read the moment its element closes: a
/// statement's transaction list is never held as an element tree, which
/// takes about 2 KB an entry (a 100,000-entry file: 200 MB) where these
/// texts take a few hundred bytes. Checked when its statement is read.
#[derive(Debug, Default)]
struct Entry {
    fitid: Option<String>,
    /// `CORRECTFITID`: the entry this one replaces or deletes.
    corrects: Option<String>,
    /// `CORRECTACTION` is DELETE.
    deletes: bool,
    /// `DTPOSTED`, else `DTUSER`.
    posted: Option<String>,
    amount: Option<String>,
    /// `NAME`, else `PAYEE/NAME`.
    name: Option<String>,
    memo: Option<String>,
    kind: Option<String>,
    /// `SIC`: the Standard Industrial Classification of the payee.
    sic: Option<String>,
    /// `CURRENCY/CURSYM`, where it differs from the statement's.
    currency: Option<String>,
}

impl Entry {
    fn read(item: &Element) -> Entry {
        let text = |path: &str| item.text_at(path).map(str::to_owned);
        Entry {
            fitid: text("FITID"),
            corrects: text("CORRECTFITID"),
            deletes: item.text_at("CORRECTACTION") == Some("DELETE"),
            posted: text("DTPOSTED").or_else(|| text("DTUSER")),
            amount: text("TRNAMT"),
            name: text("NAME").or_else(|| text("PAYEE/NAME")),
            memo: text("MEMO"),
            kind: text("TRNTYPE"),
            sic: text("SIC"),
            currency: text("CURRENCY/CURSYM"),
        }
    }
}

impl Entry {
    /// What the entry's `SIC` and `TRNTYPE` say of its kind.
    fn hints(&self) -> Hints {
        let mut hints = Hints::default();
        if let Some(code) = self.sic.as_deref().and_then(|c| c.trim().parse().ok()) {
            hints.push(CategoryHint::Sic(code));
        }
        if let Some(kind) = &self.kind {
            hints.push(CategoryHint::OfxType(kind.trim().to_ascii_uppercase()));
        }
        hints
    }
}

/// The statements whose entries are read as they close, and the path from
/// each to its entries' parent.
const ENTRY_PATHS: [(&str, &[&str]); 3] = [
    ("STMTRS", &["BANKTRANLIST"]),
    ("CCSTMTRS", &["BANKTRANLIST"]),
    ("INVSTMTRS", &["INVTRANLIST", "INVBANKTRAN"]),
];

/// Names a statement element's bucket in [`Document::entries`].
const ENTRIES_ATTRIBUTE: &str = "entries";

/// The entries of one statement element, in file order.
#[derive(Debug, Default)]
struct Bucket {
    entries: Vec<Entry>,
    /// How many stood outside their list (after an early
    /// `</BANKTRANLIST>`, say, or outside any statement in a file of one).
    outside_list: usize,
}

/// An OFX body: its element tree without the statements' entries, which
/// are in `buckets`, one per statement element (the element's
/// [`ENTRIES_ATTRIBUTE`] says which).
#[derive(Default)]
struct Document {
    root: Element,
    buckets: Vec<Bucket>,
    /// `STMTTRN`s inside no statement element.
    unplaced: Vec<Entry>,
}

impl Document {
    /// The entries of a statement element (taken: each statement is read
    /// once).
    fn take_entries(&mut self, statement: &Element) -> Bucket {
        statement
            .attribute(ENTRIES_ATTRIBUTE)
            .and_then(|bucket| bucket.parse::<usize>().ok())
            .and_then(|bucket| self.buckets.get_mut(bucket))
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Puts a closed element into its parent on `stack`, or, when it is a
    /// `STMTTRN`, into the bucket of the statement it stands in: every
    /// `STMTTRN` inside a statement is one of its transactions, wherever
    /// its list's end tag stood (the docs promise stray end tags are
    /// tolerated, and some banks close the list early).
    fn attach(&mut self, stack: &mut [Element], done: Element) {
        if done.name != "STMTTRN" {
            if let Some(parent) = stack.last_mut() {
                parent.children.push(done);
            }
            return;
        }
        let holder = stack.iter().enumerate().rev().find_map(|(depth, element)| {
            let (_, path) = ENTRY_PATHS.iter().find(|(name, _)| element.name == *name)?;
            let bucket = element
                .attribute(ENTRIES_ATTRIBUTE)?
                .parse::<usize>()
                .ok()?;
            let in_list = stack[depth + 1..]
                .iter()
                .map(|e| e.name.as_str())
                .eq(path.iter().copied());
            Some((bucket, in_list))
        });
        match holder.and_then(|(bucket, in_list)| Some((self.buckets.get_mut(bucket)?, in_list))) {
            Some((bucket, in_list)) => {
                bucket.entries.push(Entry::read(&done));
                if !in_list {
                    bucket.outside_list += 1;
                }
            }
            None => self.unplaced.push(Entry::read(&done)),
        }
    }
}

/// Builds the element tree of the `<OFX>` body. An element followed by text
/// is a leaf, closed by the next tag whether or not its end tag follows
/// (SGML); end tags close everything opened since their start tag.
/// Elements may nest at most [`MAX_NESTING`] levels.
fn tree(text: &str) -> Result<Document, ReadError> {
    let start = text
        .find("<OFX>")
        .or_else(|| text.find("<OFX "))
        .ok_or_else(|| {
            ReadError::of_file(Reason::Structure(
                "no <OFX> element: this is not an OFX file".to_owned(),
            ))
        })?;
    let body = &text[start..];
    let mut stack: Vec<Element> = vec![Element::default()];
    let mut document = Document::default();
    let mut position = 0;
    let at_byte = |position: usize| Place::new(format!("byte {}", start + position));
    let close_leaf = |stack: &mut Vec<Element>, document: &mut Document| {
        let open_leaf = stack.len() > 1
            && stack
                .last()
                .is_some_and(|top| top.children.is_empty() && !top.text.trim().is_empty());
        if open_leaf && let Some(leaf) = stack.pop() {
            document.attach(stack, leaf);
        }
    };
    while position < body.len() {
        let rest = &body[position..];
        if let Some(tag_body) = rest.strip_prefix('<') {
            let end = tag_body.find('>').ok_or_else(|| {
                at_byte(position).at(Reason::Structure("a tag is not closed".to_owned()))
            })?;
            let tag = tag_body[..end].trim();
            position += end + 2;
            if tag.starts_with('?') || tag.starts_with('!') {
                continue;
            }
            if let Some(name) = tag.strip_prefix('/') {
                let name = name.trim().to_ascii_uppercase();
                // Close up to the matching element; a stray end tag is ignored.
                if let Some(depth) = stack.iter().rposition(|e| e.name == name) {
                    if depth == 0 {
                        continue;
                    }
                    while stack.len() > depth {
                        let done = stack.pop().unwrap_or_default();
                        document.attach(&mut stack, done);
                    }
                }
            } else {
                close_leaf(&mut stack, &mut document);
                let self_closing = tag.ends_with('/');
                let name = tag
                    .trim_end_matches('/')
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_ascii_uppercase();
                let mut element = Element {
                    name,
                    ..Element::default()
                };
                if self_closing {
                    document.attach(&mut stack, element);
                } else {
                    // The stack's first entry is the document, not an element.
                    if stack.len() > MAX_NESTING {
                        return Err(at_byte(position).at(Reason::TooDeep));
                    }
                    if ENTRY_PATHS.iter().any(|(s, _)| *s == element.name) {
                        element.attributes.push((
                            ENTRIES_ATTRIBUTE.to_owned(),
                            document.buckets.len().to_string(),
                        ));
                        document.buckets.push(Bucket::default());
                    }
                    stack.push(element);
                }
            }
        } else {
            let end = rest.find('<').unwrap_or(rest.len());
            let value = rest[..end].trim();
            if !value.is_empty()
                && let Some(top) = stack.last_mut()
            {
                top.text.push_str(&unescape(value));
            }
            position += end;
        }
    }
    while stack.len() > 1 {
        let done = stack.pop().unwrap_or_default();
        document.attach(&mut stack, done);
    }
    document.root = stack
        .pop()
        .and_then(|root| root.children.into_iter().next())
        .ok_or_else(|| {
            ReadError::of_file(Reason::Structure("the <OFX> element is empty".to_owned()))
        })?;
    Ok(document)
}

/// The date in an OFX timestamp: its first eight digits.
fn date(text: &str, at: &Place) -> Result<NaiveDate, ReadError> {
    let digits = text
        .trim()
        .get(..8)
        .filter(|d| d.chars().all(|c| c.is_ascii_digit()));
    digits
        .and_then(|d| NaiveDate::parse_from_str(d, "%Y%m%d").ok())
        .ok_or_else(|| {
            at.at(Reason::NotADate {
                text: text.to_owned(),
                expected: "an OFX date is YYYYMMDD…".to_owned(),
            })
        })
}

/// An OFX amount: a decimal point or comma, maybe a leading `+`.
fn amount(text: &str, at: &Place) -> Result<Decimal, ReadError> {
    let cleaned = text.trim().trim_start_matches('+').replace(',', ".");
    parse_decimal(&cleaned).map_err(|_| {
        at.at(Reason::NotAnAmount {
            text: text.to_owned(),
        })
    })
}

/// Every descendant element called `name`, depth first.
fn find_all<'a>(element: &'a Element, name: &str, out: &mut Vec<&'a Element>) {
    for child in &element.children {
        if child.name == name {
            out.push(child);
        } else {
            find_all(child, name, out);
        }
    }
}

fn all<'a>(element: &'a Element, name: &str) -> Vec<&'a Element> {
    let mut out = Vec::new();
    find_all(element, name, &mut out);
    out
}

pub fn parse(bytes: &[u8]) -> Result<Vec<Statement>, ReadError> {
    let text = decode(bytes);
    let mut document = tree(&text)?;
    drop(text);
    let root = std::mem::take(&mut document.root);
    let securities = security_list(&root);
    let cash = [("STMTRS", false), ("CCSTMTRS", true)]
        .into_iter()
        .flat_map(|(name, credit_card)| {
            all(&root, name)
                .into_iter()
                .enumerate()
                .map(move |(n, statement)| (statement, credit_card, n + 1))
        })
        .collect::<Vec<_>>();
    let investments = all(&root, "INVSTMTRS");
    // Records outside any statement belong to the file's one statement when
    // it has one; otherwise nobody can say whose they are.
    let unplaced = std::mem::take(&mut document.unplaced);
    let (mut adopted, unplaced) = match (cash.len(), investments.len()) {
        (1, 0) => (Some(unplaced), Vec::new()),
        _ => (None, unplaced),
    };
    let mut statements = Vec::new();
    for (statement, credit_card, number) in cash {
        let mut bucket = document.take_entries(statement);
        if let Some(adopted) = adopted.take() {
            bucket.outside_list += adopted.len();
            bucket.entries.extend(adopted);
        }
        statements.push(cash_statement(statement, bucket, credit_card, number)?);
    }
    for (number, statement) in investments.into_iter().enumerate() {
        let bucket = document.take_entries(statement);
        statements.push(investment_statement(
            statement,
            bucket,
            &securities,
            number + 1,
        )?);
    }
    let count = statements.len();
    if !unplaced.is_empty()
        && let Some(first) = statements.first_mut()
    {
        // Each named as the file writes it, the first few.
        const NAMED: usize = 5;
        let named: Vec<String> = unplaced
            .iter()
            .take(NAMED)
            .map(|e| {
                format!(
                    "FITID {} of {}, amount {}",
                    e.fitid.as_deref().unwrap_or("(none)"),
                    e.posted.as_deref().unwrap_or("(no date)"),
                    e.amount.as_deref().unwrap_or("(none)")
                )
            })
            .collect();
        let more = unplaced.len().saturating_sub(NAMED);
        first.notes.push(format!(
            "{} transaction record(s) (STMTTRN) stand outside any statement (STMTRS, CCSTMTRS or INVSTMTRS), in a file of {count} statements: which account they belong to cannot be told, so they are not imported ({}{})",
            unplaced.len(),
            named.join("; "),
            if more > 0 { format!("; and {more} more") } else { String::new() }
        ));
    }
    if statements.is_empty() {
        let status = root
            .text_at("SIGNONMSGSRSV1/SONRS/STATUS/MESSAGE")
            .or_else(|| {
                all(&root, "STATUS")
                    .first()
                    .and_then(|s| s.text_at("MESSAGE"))
            });
        return Err(ReadError::of_file(Reason::Structure(match status {
            Some(message) => format!("the file holds no statement (the bank says: {message})"),
            None => "the file holds no statement (no STMTRS, CCSTMTRS or INVSTMTRS)".to_owned(),
        })));
    }
    Ok(statements)
}

fn account_kind(code: Option<&str>) -> AccountKind {
    match code.unwrap_or_default() {
        "SAVINGS" | "MONEYMRKT" => AccountKind::Savings,
        "CREDITLINE" => AccountKind::CreditCard,
        _ => AccountKind::Checking,
    }
}

/// `STMTTRN` entries with `CORRECTFITID`/`CORRECTACTION` applied: `DELETE`
/// removes the corrected record, `REPLACE` puts this one in its place. A
/// record that names itself as the one it replaces is kept (once), with a
/// note: dropping it as corrected would lose it. A record whose date or
/// amount cannot be read (a placeholder whose amount is `.`) is left out
/// with a note naming it; the rest imports.
fn transactions(
    account: &str,
    bucket: Bucket,
    currency: &str,
    place: &Place,
) -> (Vec<SnapshotTransaction>, Vec<String>) {
    let entries = bucket.entries;
    let mut notes = Vec::new();
    if bucket.outside_list > 0 {
        notes.push(format!(
            "{place}: {} transaction record(s) (STMTTRN) stand outside their list (after an early </BANKTRANLIST> or another stray end tag): read as the statement's",
            bucket.outside_list
        ));
    }
    let mut records: Vec<SnapshotTransaction> = Vec::with_capacity(entries.len());
    let mut fitids: Vec<Option<String>> = Vec::with_capacity(entries.len());
    let mut identities = Vec::with_capacity(entries.len());
    // FITIDs that a record corrects, and which record replaces them (none
    // for a deletion).
    let mut corrected: HashMap<String, Option<usize>> = HashMap::new();
    let mut replacing_themselves = 0usize;
    for (n, entry) in entries.into_iter().enumerate() {
        let at = place.then(format_args!("transaction {}", n + 1));
        if entry.deletes
            && let Some(corrected_fitid) = &entry.corrects
        {
            corrected.insert(corrected_fitid.clone(), None);
            continue;
        }
        // A placeholder record with neither amount nor date is skipped.
        if entry.amount.is_none() && entry.posted.is_none() {
            continue;
        }
        let read = || -> Result<(NaiveDate, Decimal), ReadError> {
            let posted = entry
                .posted
                .as_deref()
                .ok_or_else(|| at.at(Reason::Missing("DTPOSTED")))?;
            let value = entry
                .amount
                .as_deref()
                .ok_or_else(|| at.at(Reason::Missing("TRNAMT")))?;
            Ok((date(posted, &at)?, amount(value, &at)?))
        };
        let (day, value) = match read() {
            Ok(read) => read,
            Err(err) => {
                let what = match &entry.fitid {
                    Some(fitid) => format!("the record (FITID {fitid})"),
                    None => "the record".to_owned(),
                };
                notes.push(err.left_out(&what));
                continue;
            }
        };
        identities.push(EntryIdentity {
            reference: entry.fitid.clone(),
            date: day,
            amount: value,
            text: identity_text(&[entry.name.as_deref(), entry.memo.as_deref()]),
        });
        let hints = entry.hints();
        if let Some(corrected_fitid) = entry.corrects {
            if entry.fitid.as_deref() == Some(corrected_fitid.as_str()) {
                replacing_themselves += 1;
            }
            corrected.insert(corrected_fitid, Some(records.len()));
        }
        fitids.push(entry.fitid);
        records.push(SnapshotTransaction {
            provider_id: String::new(),
            pending_provider_id: None,
            is_pending: false,
            date: day,
            amount: value,
            currency: entry.currency.unwrap_or_else(|| currency.to_owned()),
            merchant: entry.name,
            description: entry.memo.or(entry.kind),
            hints,
        });
    }
    let ids = entry_ids(account, &identities, "");
    drop(identities);
    for (record, id) in records.iter_mut().zip(ids) {
        record.provider_id = id;
    }
    if !corrected.is_empty() {
        let mut index = 0;
        let mut fitids = fitids.into_iter();
        records.retain(|_| {
            let at = index;
            index += 1;
            fitids
                .next()
                .flatten()
                .and_then(|f| corrected.get(&f))
                .is_none_or(|replacement| *replacement == Some(at))
        });
    }
    if replacing_themselves > 0 {
        notes.push(format!(
            "{place}: {replacing_themselves} record(s) name their own FITID as the one they replace (CORRECTACTION REPLACE): each is kept, once, in place of any earlier record of that FITID"
        ));
    }
    (records, notes)
}

/// The statement's balance from `LEDGERBAL` (and `AVAILBAL`), dated by its
/// `DTASOF`, else by the end of the statement's transaction list. One that
/// cannot be read or dated is left out with a note (Brazilian banks write
/// `DTASOF` as `00000000`): a balance never costs the transactions.
fn balance(
    statement: &Element,
    currency: &str,
    place: &Place,
    notes: &mut Vec<String>,
) -> Option<SnapshotBalance> {
    let ledger = statement.child("LEDGERBAL")?;
    let value = ledger.text_at("BALAMT")?;
    let at = place.then("LEDGERBAL");
    let read = || -> Result<(Decimal, NaiveDate), ReadError> {
        let current = amount(value, &at)?;
        let as_of = match ledger.text_at("DTASOF") {
            Some(day) => date(day, &at.then("DTASOF"))?,
            None => statement
                .text_at("BANKTRANLIST/DTEND")
                .and_then(|day| date(day, &at).ok())
                .ok_or_else(|| at.at(Reason::Missing("DTASOF, and no DTEND to date it by")))?,
        };
        Ok((current, as_of))
    };
    let (current, as_of) = match read() {
        Ok(read) => read,
        Err(err) => {
            notes.push(err.left_out("the balance"));
            return None;
        }
    };
    let available_at = place.then("AVAILBAL");
    let available = match statement
        .child("AVAILBAL")
        .and_then(|a| a.text_at("BALAMT"))
        .map(|v| amount(v, &available_at))
        .transpose()
    {
        Ok(available) => available,
        Err(err) => {
            notes.push(err.left_out("the available balance"));
            None
        }
    };
    Some(SnapshotBalance {
        current,
        available,
        currency: currency.to_owned(),
        as_of: as_of.and_time(chrono::NaiveTime::MIN).and_utc(),
    })
}

fn cash_statement(
    statement: &Element,
    bucket: Bucket,
    credit_card: bool,
    number: usize,
) -> Result<Statement, ReadError> {
    let place = Place::new(format!(
        "{} {number}",
        if credit_card {
            "credit card statement"
        } else {
            "statement"
        }
    ));
    let empty = Element::default();
    let account = statement
        .child("BANKACCTFROM")
        .or_else(|| statement.child("CCACCTFROM"))
        .unwrap_or(&empty);
    let currency = statement.text_at("CURDEF").unwrap_or("USD").to_owned();
    // A file that names no account goes to one account per currency (as
    // camt and MT940 files without one do).
    let given_id = account.text_at("ACCTID").map(str::to_owned);
    let account_name = given_id
        .is_none()
        .then(|| format!("Imported {currency} account (the file names no account)"));
    let account_id = given_id.unwrap_or_else(|| format!("unidentified-{currency}"));
    let account_key = account_id.clone();
    // The bucket holds the entries of every BANKTRANLIST: some banks split
    // a statement into several.
    let (transactions, mut notes) = transactions(&account_key, bucket, &currency, &place);
    let balance = balance(statement, &currency, &place, &mut notes);
    Ok(Statement {
        account_id,
        account_name,
        kind: if credit_card {
            AccountKind::CreditCard
        } else {
            account_kind(account.text_at("ACCTTYPE"))
        },
        currency: currency.clone(),
        transactions,
        opening_booked: None,
        opening_date: None,
        closing_booked: balance.as_ref().map(|b| b.current),
        balance,
        holdings: None,
        servicer: None,
        notes,
        currency_assumed: Vec::new(),
        legacy_ids: Vec::new(),
    })
}

/// The security list, by the id positions refer to (`UNIQUEID`).
fn security_list(root: &Element) -> HashMap<String, Security> {
    let mut map = HashMap::new();
    for info in all(root, "SECINFO") {
        let Some(id) = info.text_at("SECID/UNIQUEID") else {
            continue;
        };
        let kind = info.text_at("SECID/UNIQUEIDTYPE").unwrap_or("CUSIP");
        let security = Security {
            name: info.text_at("SECNAME").unwrap_or(id).to_owned(),
            currency: info
                .text_at("CURRENCY/CURSYM")
                .unwrap_or_default()
                .to_owned(),
            ticker: info.text_at("TICKER").map(str::to_owned),
            figi: None,
            cusip: (kind == "CUSIP").then(|| id.to_owned()),
            isin: (kind == "ISIN").then(|| id.to_owned()),
        };
        map.insert(id.to_owned(), security);
    }
    map
}

fn investment_statement(
    statement: &Element,
    cash: Bucket,
    securities: &HashMap<String, Security>,
    number: usize,
) -> Result<Statement, ReadError> {
    let place = Place::new(format!("investment statement {number}"));
    let account = statement
        .child("INVACCTFROM")
        .ok_or_else(|| place.at(Reason::Missing("INVACCTFROM")))?;
    let account_id = account
        .text_at("ACCTID")
        .ok_or_else(|| place.at(Reason::Missing("ACCTID")))?
        .to_owned();
    let currency = statement.text_at("CURDEF").unwrap_or("USD").to_owned();

    // Cash movements (INVBANKTRAN/STMTTRN: `cash`) and trades (anything
    // with INVTRAN).
    let mut trades: Vec<&Element> = Vec::new();
    if let Some(list) = statement.child("INVTRANLIST") {
        for item in &list.children {
            match item.name.as_str() {
                "INVBANKTRAN" | "DTSTART" | "DTEND" => {}
                _ => trades.push(item),
            }
        }
    }
    let (mut records, mut notes) = transactions(&account_id, cash, &currency, &place);
    let mut identities = Vec::new();
    let mut trade_records = Vec::new();
    for (n, trade) in trades.iter().enumerate() {
        let at = place.then(format_args!("trade {}", n + 1));
        let inner = all(trade, "INVTRAN");
        let Some(invtran) = inner.first() else {
            continue;
        };
        let read = || -> Result<(NaiveDate, Decimal), ReadError> {
            let day = date(
                invtran
                    .text_at("DTTRADE")
                    .or_else(|| invtran.text_at("DTSETTLE"))
                    .ok_or_else(|| at.at(Reason::Missing("DTTRADE")))?,
                &at,
            )?;
            let total = all(trade, "TOTAL")
                .first()
                .map(|t| t.text.trim().to_owned())
                .filter(|t| !t.is_empty());
            let value = match total {
                Some(total) => amount(&total, &at)?,
                None => Decimal::ZERO,
            };
            Ok((day, value))
        };
        let (day, value) = match read() {
            Ok(read) => read,
            Err(err) => {
                notes.push(err.left_out("the trade"));
                continue;
            }
        };
        let security = all(trade, "UNIQUEID")
            .first()
            .and_then(|id| securities.get(id.text.trim()))
            .map(|s| s.name.clone());
        let action = trade.name.to_lowercase();
        let description = [
            Some(action),
            security,
            invtran.text_at("MEMO").map(str::to_owned),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
        let fitid = invtran.text_at("FITID").map(str::to_owned);
        identities.push(EntryIdentity {
            reference: fitid,
            date: day,
            amount: value,
            text: description.clone(),
        });
        trade_records.push(SnapshotTransaction {
            provider_id: String::new(),
            pending_provider_id: None,
            is_pending: false,
            date: day,
            amount: value,
            currency: currency.clone(),
            merchant: None,
            description: Some(description),
            hints: Default::default(),
        });
    }
    for (record, id) in trade_records
        .iter_mut()
        .zip(entry_ids(&account_id, &identities, "trade:"))
    {
        record.provider_id = id;
    }
    records.extend(trade_records);

    let mut holdings = Vec::new();
    // A position left out makes the account's total unknown.
    let mut positions_left_out = 0usize;
    if let Some(positions) = statement.child("INVPOSLIST") {
        for (n, position) in positions.children.iter().enumerate() {
            let Some(pos) = position.child("INVPOS") else {
                continue;
            };
            let at = place.then(format_args!("position {}", n + 1));
            match holding(pos, &at, securities, &currency) {
                Ok(holding) => holdings.push(holding),
                Err(err) => {
                    positions_left_out += 1;
                    notes.push(err.left_out("the position"));
                }
            }
        }
    }
    let cash_at = place.then("INVBAL/AVAILCASH");
    let cash_balance = match statement
        .text_at("INVBAL/AVAILCASH")
        .map(|v| amount(v, &cash_at))
        .transpose()
    {
        Ok(cash) => cash,
        Err(err) => {
            positions_left_out += 1;
            notes.push(err.left_out("the cash balance"));
            None
        }
    };
    let as_of = statement
        .text_at("INVPOSLIST/POSSTOCK/INVPOS/DTPRICEASOF")
        .or_else(|| statement.text_at("DTASOF"))
        .and_then(|d| date(d, &place).ok())
        .or_else(|| records.iter().map(|r| r.date).max());
    let total: Decimal = holdings
        .iter()
        .filter_map(|h| h.value_in_account_currency)
        .sum::<Decimal>()
        + cash_balance.unwrap_or_default();
    let stated = cash_balance.is_some() || !holdings.is_empty();
    let balance = match (stated, positions_left_out, as_of) {
        (false, 0, _) => None,
        (_, 0, Some(as_of)) => Some(SnapshotBalance {
            current: total,
            available: cash_balance,
            currency: currency.clone(),
            as_of: as_of.and_time(chrono::NaiveTime::MIN).and_utc(),
        }),
        (_, 0, None) => {
            notes.push(
                place
                    .at(Reason::Missing(
                        "DTASOF, DTPRICEASOF or dated record to date it by",
                    ))
                    .left_out("the balance"),
            );
            None
        }
        (_, left_out, _) => {
            notes.push(format!(
                "{place}: the balance (the positions' value and the cash) is left out: {left_out} of its parts could not be read"
            ));
            None
        }
    };
    Ok(Statement {
        account_id,
        account_name: None,
        kind: AccountKind::Brokerage,
        currency: currency.clone(),
        transactions: records,
        opening_booked: None,
        opening_date: None,
        closing_booked: None,
        balance,
        holdings: Some(holdings),
        servicer: None,
        notes,
        currency_assumed: Vec::new(),
        legacy_ids: Vec::new(),
    })
}

/// One `INVPOS` as a holding of its security.
fn holding(
    pos: &Element,
    at: &Place,
    securities: &HashMap<String, Security>,
    currency: &str,
) -> Result<SnapshotHolding, ReadError> {
    let id = pos
        .text_at("SECID/UNIQUEID")
        .ok_or_else(|| at.at(Reason::Missing("SECID")))?;
    let security = securities.get(id).cloned().unwrap_or_else(|| Security {
        name: id.to_owned(),
        currency: currency.to_owned(),
        ticker: None,
        figi: None,
        cusip: (pos.text_at("SECID/UNIQUEIDTYPE") == Some("CUSIP")).then(|| id.to_owned()),
        isin: (pos.text_at("SECID/UNIQUEIDTYPE") == Some("ISIN")).then(|| id.to_owned()),
    });
    let quantity = amount(pos.text_at("UNITS").unwrap_or("0"), at)?;
    let price = amount(pos.text_at("UNITPRICE").unwrap_or("0"), at)?;
    let value = match pos.text_at("MKTVAL") {
        Some(v) => amount(v, at)?,
        None => quantity * price,
    };
    let holding_currency = pos
        .text_at("CURRENCY/CURSYM")
        .map_or_else(|| currency.to_owned(), str::to_owned);
    let raw: serde_json::Map<String, serde_json::Value> = pos
        .children
        .iter()
        .filter(|c| !c.text.trim().is_empty())
        .map(|c| (c.name.clone(), serde_json::Value::from(c.text.trim())))
        .collect();
    Ok(SnapshotHolding {
        security: Security {
            currency: if security.currency.is_empty() {
                holding_currency.clone()
            } else {
                security.currency.clone()
            },
            ..security
        },
        quantity,
        price,
        value,
        value_in_account_currency: (holding_currency == currency).then_some(value),
        cost_basis: None,
        currency: holding_currency,
        raw: serde_json::Value::Object(raw),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_storage::testing::testdata_bytes;

    fn files() -> Vec<String> {
        let mut files = tributary_storage::testing::testdata_files("ofxparse/fixtures", &["ofx"]);
        files.extend(tributary_storage::testing::testdata_files(
            "asgrim-ofxparser/fixtures",
            &["ofx"],
        ));
        files.extend(tributary_storage::testing::testdata_files(
            "actualbudget/ofx",
            &["ofx", "qfx"],
        ));
        files
    }

    #[test]
    fn every_ofx_file_reads_or_fails_clearly() {
        let files = files();
        assert!(files.len() >= 45, "{}", files.len());
        let mut read = 0;
        for file in &files {
            match parse(&testdata_bytes(file)) {
                Ok(statements) => {
                    assert!(!statements.is_empty(), "{file}");
                    read += 1;
                }
                Err(err) => {
                    // Broken on purpose, or sign-on answers that hold no statement.
                    let expected = file.contains("fail_nice")
                        || err.to_string().contains("holds no statement");
                    assert!(expected, "{file}: {err}");
                }
            }
        }
        assert!(read >= 35, "{read} files read");
    }

    #[test]
    fn the_three_encodings_of_one_statement_agree() {
        let read = |f: &str| parse(&testdata_bytes(&format!("actualbudget/ofx/{f}"))).unwrap();
        // The files differ in their FITIDs only; everything else must match.
        let without_ids = |file: &str| {
            let mut statements = read(file);
            for t in &mut statements[0].transactions {
                t.provider_id.clear();
            }
            statements.remove(0).transactions
        };
        let utf8 = read("utf-8.qfx");
        assert_eq!(without_ids("1252.qfx"), without_ids("utf-8.qfx"));
        assert_eq!(
            utf8[0].transactions[0].merchant.as_deref(),
            Some("Café Métro €uro")
        );
        // The ISO-8859-1 file holds another transaction (Latin-1 has no €);
        // its accents must still read right.
        let latin1 = read("8859-1.qfx");
        assert_eq!(
            latin1[0].transactions[0].merchant.as_deref(),
            Some("Paiement facture/Carte prépayée")
        );
        let text: String = utf8[0]
            .transactions
            .iter()
            .filter_map(|t| t.merchant.clone())
            .collect();
        assert!(!text.contains('\u{fffd}'), "{text}");
    }

    #[test]
    fn html_entities_in_values_are_decoded() {
        let statements = parse(&testdata_bytes("actualbudget/ofx/html-vals.qfx")).unwrap();
        let names: Vec<String> = statements[0]
            .transactions
            .iter()
            .filter_map(|t| t.merchant.clone())
            .collect();
        assert!(names.iter().all(|n| !n.contains("&amp;")), "{names:?}");
        let descriptions: Vec<String> = statements[0]
            .transactions
            .iter()
            .filter_map(|t| t.description.clone())
            .collect();
        assert!(
            descriptions
                .iter()
                .any(|d| d.contains("B.C. HYDRO & POWER AUTHORITY")),
            "{descriptions:?}"
        );
    }

    #[test]
    fn investment_positions_become_holdings_with_their_securities() {
        let statements = parse(&testdata_bytes("ofxparse/fixtures/investment_401k.ofx")).unwrap();
        let holdings = statements[0].holdings.as_ref().unwrap();
        assert!(!holdings.is_empty());
        assert!(
            holdings.iter().any(|h| h.security.ticker.is_some()),
            "{holdings:?}"
        );
        assert!(holdings.iter().all(|h| !h.security.name.is_empty()));
        let vanguard = parse(&testdata_bytes("ofxparse/fixtures/vanguard.ofx")).unwrap();
        let all: Vec<_> = vanguard
            .iter()
            .flat_map(|s| s.holdings.clone().unwrap_or_default())
            .collect();
        assert!(
            all.iter().any(|h| h.security.ticker.is_some()),
            "tickers from SECLIST"
        );
    }

    #[test]
    fn corrections_replace_and_delete() {
        let file = "OFXHEADER:100\nDATA:OFXSGML\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD<BANKACCTFROM><BANKID>1<ACCTID>123456<ACCTTYPE>CHECKING</BANKACCTFROM><BANKTRANLIST>\
            <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240101<TRNAMT>-10.00<FITID>A<NAME>Shop</STMTTRN>\
            <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240102<TRNAMT>-20.00<FITID>B<NAME>Cafe</STMTTRN>\
            <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240101<TRNAMT>-12.00<FITID>A2<CORRECTFITID>A<CORRECTACTION>REPLACE<NAME>Shop</STMTTRN>\
            <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240102<TRNAMT>0<FITID>B2<CORRECTFITID>B<CORRECTACTION>DELETE</STMTTRN>\
            </BANKTRANLIST><LEDGERBAL><BALAMT>100.00<DTASOF>20240103</LEDGERBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>";
        let statements = parse(file.as_bytes()).unwrap();
        let ids: Vec<(&str, String)> = statements[0]
            .transactions
            .iter()
            .map(|t| (t.provider_id.as_str(), t.amount.to_string()))
            .collect();
        // An id is the FITID with its date and amount (docs/imports.md, identity).
        assert_eq!(ids, vec![("A2@2024-01-01/-12.00", "-12.00".to_owned())]);
        assert_eq!(
            statements[0].balance.as_ref().unwrap().current.to_string(),
            "100.00"
        );
    }

    #[test]
    fn a_record_replacing_itself_is_kept_once_with_a_note() {
        let file = "OFXHEADER:100\nDATA:OFXSGML\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD<BANKACCTFROM><BANKID>1<ACCTID>123456<ACCTTYPE>CHECKING</BANKACCTFROM><BANKTRANLIST>\
            <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240101<TRNAMT>-10.00<FITID>X<NAME>Shop</STMTTRN>\
            <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240101<TRNAMT>-11.00<FITID>X<CORRECTFITID>X<CORRECTACTION>REPLACE<NAME>Shop</STMTTRN>\
            <STMTTRN><TRNTYPE>CREDIT<DTPOSTED>20240102<TRNAMT>5.00<FITID>Y<CORRECTFITID>Y<CORRECTACTION>REPLACE<NAME>Refund</STMTTRN>\
            </BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>";
        let statements = parse(file.as_bytes()).unwrap();
        let kept: Vec<String> = statements[0]
            .transactions
            .iter()
            .map(|t| t.amount.to_string())
            .collect();
        // X's replacement stands in for X; Y, which replaces only itself, stays.
        assert_eq!(kept, ["-11.00", "5.00"]);
        assert!(
            statements[0]
                .notes
                .iter()
                .any(|n| n.contains("2 record(s) name their own FITID")),
            "{:?}",
            statements[0].notes
        );
    }

    #[test]
    fn odd_timestamps_read_as_their_date() {
        assert_eq!(
            date("20180804093914:014", &Place::new("t"))
                .unwrap()
                .to_string(),
            "2018-08-04"
        );
        assert_eq!(
            date("20150909084609.717[-6:MDT]", &Place::new("t"))
                .unwrap()
                .to_string(),
            "2015-09-09"
        );
        assert!(date("2018", &Place::new("t")).is_err());
    }

    #[test]
    fn sic_and_trntype_are_kept_as_hints() {
        use tributary_domain::enrich::hints::CategoryHint;
        let file = sgml_statement(
            "<BANKTRANLIST><STMTTRN><TRNTYPE>INT<DTPOSTED>20240101<TRNAMT>1.00<FITID>A<NAME>Bank</STMTTRN>\
             <STMTTRN><TRNTYPE>POS<DTPOSTED>20240102<TRNAMT>-9.00<FITID>B<SIC>5812<NAME>Trattoria</STMTTRN></BANKTRANLIST>",
        );
        let statements = parse(file.as_bytes()).unwrap();
        let t = &statements[0].transactions;
        assert_eq!(t[0].hints.0, vec![CategoryHint::OfxType("INT".into())]);
        assert_eq!(
            t[1].hints.0,
            vec![CategoryHint::Sic(5812), CategoryHint::OfxType("POS".into())]
        );
        assert_eq!(t[0].hints.subcategory(t[0].amount), Some("income.interest"));
    }

    /// An OFX 1.x bank statement response around `body` (what stands
    /// between the account and the end of STMTRS).
    fn sgml_statement(body: &str) -> String {
        format!(
            "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nCHARSET:1252\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><TRNUID>1<STATUS><CODE>0<SEVERITY>INFO</STATUS><STMTRS><CURDEF>BRL<BANKACCTFROM><BANKID>341<ACCTID>12345-6<ACCTTYPE>CHECKING</BANKACCTFROM>{body}</STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>"
        )
    }

    fn record(fitid: &str, day: &str, amount: &str, name: &str) -> String {
        format!(
            "<STMTTRN><TRNTYPE>OTHER<DTPOSTED>{day}<TRNAMT>{amount}<FITID>{fitid}<NAME>{name}</STMTTRN>"
        )
    }

    #[test]
    fn records_after_an_early_end_of_their_list_are_the_statements() {
        let body = format!(
            "<BANKTRANLIST><DTSTART>20260101<DTEND>20260131{}</BANKTRANLIST>{}{}</BANKTRANLIST><LEDGERBAL><BALAMT>100.00<DTASOF>20260131</LEDGERBAL>",
            record("A1", "20260105", "-10.00", "Padaria"),
            record("A2", "20260110", "-20.50", "Farmacia"),
            record("A3", "20260120", "500.00", "Salario"),
        );
        let statements = parse(sgml_statement(&body).as_bytes()).unwrap();
        assert_eq!(statements.len(), 1);
        assert_eq!(statements[0].transactions.len(), 3);
        assert_eq!(statements[0].signed_sum(), "469.50");
        assert_eq!(
            statements[0].notes,
            [
                "statement 1: 2 transaction record(s) (STMTTRN) stand outside their list (after an early </BANKTRANLIST> or another stray end tag): read as the statement's"
            ]
        );
        // The same in OFX 2 (XML): the reader is one.
        let xml = sgml_statement(&body).replace(
            "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nCHARSET:1252\n\n",
            "<?xml version=\"1.0\"?><?OFX OFXHEADER=\"200\" VERSION=\"220\"?>",
        );
        assert_eq!(parse(xml.as_bytes()).unwrap()[0].signed_sum(), "469.50");
    }

    #[test]
    fn records_outside_any_statement_belong_to_the_files_only_one_or_are_named() {
        // One statement, its STMTRS closed early: the record is its.
        let one = sgml_statement(&format!(
            "<BANKTRANLIST>{}</BANKTRANLIST></STMTRS>{}",
            record("B1", "20260105", "-1.00", "Cafe"),
            record("B2", "20260106", "-2.00", "Cafe")
        ));
        let statements = parse(one.as_bytes()).unwrap();
        assert_eq!(statements[0].signed_sum(), "-3.00");
        assert!(
            statements[0].notes[0].contains("1 transaction record(s)"),
            "{:?}",
            statements[0].notes
        );
        // Two statements: whose it is cannot be told, and the note says so.
        let two = one.replace(
            "</STMTTRNRS>",
            "</STMTTRNRS><STMTTRNRS><STMTRS><CURDEF>BRL<BANKACCTFROM><ACCTID>999</BANKACCTFROM></STMTRS></STMTTRNRS>",
        );
        let statements = parse(two.as_bytes()).unwrap();
        assert_eq!(statements.len(), 2);
        assert_eq!(statements[0].signed_sum(), "-1.00");
        assert_eq!(
            statements[0].notes,
            [
                "1 transaction record(s) (STMTTRN) stand outside any statement (STMTRS, CCSTMTRS or INVSTMTRS), in a file of 2 statements: which account they belong to cannot be told, so they are not imported (FITID B2 of 20260106, amount -2.00)"
            ]
        );
    }

    #[test]
    fn an_unusable_balance_or_placeholder_record_is_left_out_with_a_note() {
        // A Brazilian bank's ledger balance dated 00000000, and a
        // placeholder record whose amount is `.`.
        let body = format!(
            "<BANKTRANLIST><DTSTART>20260101<DTEND>20260131{}{}{}</BANKTRANLIST><LEDGERBAL><BALAMT>1234.56<DTASOF>00000000</LEDGERBAL>",
            record("C1", "20260105", "-10.00", "Padaria"),
            record("C2", "20260131", ".", "SALDO ANTERIOR"),
            record("C3", "20260120", "500.00", "Salario"),
        );
        let statements = parse(sgml_statement(&body).as_bytes()).unwrap();
        let statement = &statements[0];
        assert_eq!(statement.transactions.len(), 2);
        assert_eq!(statement.signed_sum(), "490.00");
        assert_eq!(statement.balance, None);
        assert_eq!(statement.closing_booked, None);
        assert_eq!(
            statement.notes,
            [
                "statement 1, transaction 2: `.` is not an amount: the record (FITID C2) is left out, the rest is imported",
                "statement 1, LEDGERBAL, DTASOF: `00000000` is not a date (an OFX date is YYYYMMDD…): the balance is left out, the rest is imported",
            ]
        );
        // Without DTASOF the balance is dated by the list's end, never 1970.
        let undated = body.replace("<DTASOF>00000000", "");
        let statement = &parse(sgml_statement(&undated).as_bytes()).unwrap()[0];
        assert_eq!(
            statement
                .balance
                .as_ref()
                .map(|b| b.as_of.date_naive().to_string()),
            Some("2026-01-31".to_owned())
        );
        // Through the import: the same two records and notes.
        let read = crate::import::parse(sgml_statement(&body).as_bytes(), None).unwrap();
        assert_eq!((read[0].transactions.len(), read[0].notes.len()), (2, 2));
    }

    #[test]
    fn an_unreadable_trade_or_position_is_left_out_and_the_total_with_it() {
        let position = |id: &str, units: &str| {
            format!(
                "<POSSTOCK><INVPOS><SECID><UNIQUEID>{id}<UNIQUEIDTYPE>CUSIP</SECID><HELDINACCT>CASH<POSTYPE>LONG<UNITS>{units}<UNITPRICE>10.00<MKTVAL>100.00<DTPRICEASOF>20260131</INVPOS></POSSTOCK>"
            )
        };
        let trade = |fitid: &str, total: &str| {
            format!(
                "<BUYSTOCK><INVBUY><INVTRAN><FITID>{fitid}<DTTRADE>20260115</INVTRAN><SECID><UNIQUEID>111<UNIQUEIDTYPE>CUSIP</SECID><UNITS>10<UNITPRICE>10.00<TOTAL>{total}<SUBACCTSEC>CASH<SUBACCTFUND>CASH</INVBUY><BUYTYPE>BUY</BUYSTOCK>"
            )
        };
        let file = format!(
            "OFXHEADER:100\nDATA:OFXSGML\n\n<OFX><INVSTMTMSGSRSV1><INVSTMTTRNRS><INVSTMTRS><DTASOF>20260131<CURDEF>USD<INVACCTFROM><BROKERID>b.example<ACCTID>987</INVACCTFROM><INVTRANLIST><DTSTART>20260101<DTEND>20260131{}{}</INVTRANLIST><INVPOSLIST>{}{}</INVPOSLIST><INVBAL><AVAILCASH>50.00</INVBAL></INVSTMTRS></INVSTMTTRNRS></INVSTMTMSGSRSV1></OFX>",
            trade("T1", "-100.00"),
            trade("T2", "."),
            position("111", "10"),
            position("222", "ten"),
        );
        let statement = &parse(file.as_bytes()).unwrap()[0];
        assert_eq!(
            (
                statement.transactions.len(),
                statement.signed_sum().as_str()
            ),
            (1, "-100.00")
        );
        assert_eq!(statement.holdings.as_ref().map(Vec::len), Some(1));
        // Without one position the account's total is unknown: no balance.
        assert_eq!(statement.balance, None);
        assert_eq!(
            statement.notes,
            [
                "investment statement 1, trade 2: `.` is not an amount: the trade is left out, the rest is imported",
                "investment statement 1, position 2: `ten` is not an amount: the position is left out, the rest is imported",
                "investment statement 1: the balance (the positions' value and the cash) is left out: 1 of its parts could not be read",
            ]
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for input in [
            &b""[..],
            b"<OFX>",
            b"<OFX><SIGNONMSGSRSV1></OFX>",
            b"\xff\xfe<OFX><<<>>>",
        ] {
            assert!(
                parse(input).is_err(),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn every_transaction_list_of_a_statement_is_read() {
        let file = "OFXHEADER:100\nDATA:OFXSGML\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD\
            <BANKACCTFROM><ACCTID>1234</BANKACCTFROM>\
            <BANKTRANLIST><STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240101<TRNAMT>-1.00<FITID>A</STMTTRN></BANKTRANLIST>\
            <BANKTRANLIST><STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240102<TRNAMT>-2.00<FITID>B</STMTTRN></BANKTRANLIST>\
            </STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>";
        let statements = parse(file.as_bytes()).unwrap();
        assert_eq!(statements[0].transactions.len(), 2);
    }
}
