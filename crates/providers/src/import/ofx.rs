//! OFX 1.x (SGML: leaf elements are not closed) and OFX 2.x (XML), and QFX
//! (OFX with Intuit extensions). Bank, credit card and investment statements;
//! investment positions and the security list become holdings.
//!
//! The reader is tolerant where real files are sloppy: no blank line after
//! the header, a `CHARSET` of 1252 / ISO-8859-1 / UTF-8, HTML entities in
//! values, empty tags, and timestamps such as `20180804093914:014` or
//! `20150909084609.717[-6:MDT]` (the date is their first eight digits).
//!
//! A file is read in two passes, never whole: [`survey`] reads everything
//! but the transaction records' contents (statements, balances, positions,
//! and what the statement rules need to know of the records), and
//! [`Surveyed::entries`] reads the file again for the transactions, each
//! with its final id as it is met. [`parse`] does both over bytes in
//! memory; `tributary import` stores a file from disk pass by pass in flat
//! memory (docs/imports.md).

mod activity;
mod entries;
mod text;

use super::error::{MAX_NESTING, Place, ReadError, Reason};
use super::identity::{EntryIdentity, entry_ids};
use super::statement::Statement;
use super::xml::Element;
use chrono::NaiveDate;
use entries::{Entry, Facts, Survey, Take};
use std::collections::{BTreeSet, HashMap};
pub use text::Source;
use text::{Charset, Text, TextError, Token};
use tributary_domain::model::AccountKind;
use tributary_domain::money::{Decimal, parse_decimal};
use tributary_domain::snapshot::{
    Security, SnapshotBalance, SnapshotHolding, SnapshotInvestmentTransaction, SnapshotTransaction,
};

fn unescape(text: &str) -> String {
    quick_xml::escape::unescape_with(text, quick_xml::escape::resolve_html5_entity)
        .map(|t| t.into_owned())
        .unwrap_or_else(|_| text.to_owned())
}

/// The statements whose entries are read as they close, and the path from
/// each to its entries' parent.
const ENTRY_PATHS: [(&str, &[&str]); 3] = [
    ("STMTRS", &["BANKTRANLIST"]),
    ("CCSTMTRS", &["BANKTRANLIST"]),
    ("INVSTMTRS", &["INVTRANLIST", "INVBANKTRAN"]),
];

/// Names a statement element's number among the statement elements of the
/// file, in the order they open: the same in every pass.
const ENTRIES_ATTRIBUTE: &str = "entries";

/// Where a `STMTTRN` stands: in which statement element (numbered by
/// [`ENTRIES_ATTRIBUTE`]; `None` outside any), and whether inside that
/// statement's transaction list. Every `STMTTRN` inside a statement is one
/// of its transactions, wherever its list's end tag stood (stray end tags
/// are tolerated, and some banks close the list early).
#[derive(Debug, Clone, Copy)]
struct Placed {
    statement: Option<usize>,
    in_list: bool,
}

/// Why a pass stopped: the text, or what the entries were given to.
enum Stop<E> {
    Text(TextError),
    Sink(E),
}

impl<E> From<TextError> for Stop<E> {
    fn from(err: TextError) -> Self {
        Stop::Text(err)
    }
}

impl<E> From<ReadError> for Stop<E> {
    fn from(err: ReadError) -> Self {
        Stop::Text(TextError::Read(err))
    }
}

/// Puts a closed element into its parent on `stack`, or, when it is a
/// `STMTTRN`, hands it to `on_entry` with where it stands.
fn attach<E>(
    stack: &mut [Element],
    done: Element,
    on_entry: &mut dyn FnMut(Placed, Entry) -> Result<(), E>,
) -> Result<(), E> {
    if done.name != "STMTTRN" {
        if let Some(parent) = stack.last_mut() {
            parent.children.push(done);
        }
        return Ok(());
    }
    let holder = stack.iter().enumerate().rev().find_map(|(depth, element)| {
        let (_, path) = ENTRY_PATHS.iter().find(|(name, _)| element.name == *name)?;
        let number = element
            .attribute(ENTRIES_ATTRIBUTE)?
            .parse::<usize>()
            .ok()?;
        let in_list = stack[depth + 1..]
            .iter()
            .map(|e| e.name.as_str())
            .eq(path.iter().copied());
        Some(Placed {
            statement: Some(number),
            in_list,
        })
    });
    let placed = holder.unwrap_or(Placed {
        statement: None,
        in_list: false,
    });
    on_entry(placed, Entry::read(&done))
}

/// Builds the element tree of the `<OFX>` body, without its `STMTTRN`s,
/// which go to `on_entry` as they close. An element followed by text is a
/// leaf, closed by the next tag whether or not its end tag follows (SGML);
/// end tags close everything opened since their start tag. Elements may
/// nest at most [`MAX_NESTING`] levels.
fn scan<E>(
    text: &mut Text<'_>,
    on_entry: &mut dyn FnMut(Placed, Entry) -> Result<(), E>,
) -> Result<Element, Stop<E>> {
    if !text.skip_to_body()? {
        return Err(ReadError::of_file(Reason::Structure(
            "no <OFX> element: this is not an OFX file".to_owned(),
        ))
        .into());
    }
    let mut stack: Vec<Element> = vec![Element::default()];
    let mut statements = 0usize;
    let close_leaf = |stack: &mut Vec<Element>,
                      on_entry: &mut dyn FnMut(Placed, Entry) -> Result<(), E>|
     -> Result<(), E> {
        let open_leaf = stack.len() > 1
            && stack
                .last()
                .is_some_and(|top| top.children.is_empty() && !top.text.trim().is_empty());
        if open_leaf && let Some(leaf) = stack.pop() {
            attach(stack, leaf, on_entry)?;
        }
        Ok(())
    };
    while let Some(token) = text.next_token()? {
        let piece = text.piece(token);
        match token {
            Token::Value { .. } => {
                let value = piece.trim();
                if !value.is_empty()
                    && let Some(top) = stack.last_mut()
                {
                    top.text.push_str(&unescape(value));
                }
            }
            Token::Tag { .. } => {
                let tag = piece.trim();
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
                            attach(&mut stack, done, on_entry).map_err(Stop::Sink)?;
                        }
                    }
                } else {
                    let self_closing = tag.ends_with('/');
                    let name = tag
                        .trim_end_matches('/')
                        .split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_ascii_uppercase();
                    close_leaf(&mut stack, on_entry).map_err(Stop::Sink)?;
                    let mut element = Element {
                        name,
                        ..Element::default()
                    };
                    if self_closing {
                        attach(&mut stack, element, on_entry).map_err(Stop::Sink)?;
                    } else {
                        // The stack's first entry is the document, not an element.
                        if stack.len() > MAX_NESTING {
                            let place = Place::new(format!("byte {}", text.position()));
                            return Err(place.at(Reason::TooDeep).into());
                        }
                        if ENTRY_PATHS.iter().any(|(s, _)| *s == element.name) {
                            element
                                .attributes
                                .push((ENTRIES_ATTRIBUTE.to_owned(), statements.to_string()));
                            statements += 1;
                        }
                        stack.push(element);
                    }
                }
            }
        }
    }
    while stack.len() > 1 {
        let done = stack.pop().unwrap_or_default();
        attach(&mut stack, done, on_entry).map_err(Stop::Sink)?;
    }
    stack
        .pop()
        .and_then(|root| root.children.into_iter().next())
        .ok_or_else(|| {
            ReadError::of_file(Reason::Structure("the <OFX> element is empty".to_owned())).into()
        })
}

/// Reads OFX bytes whole: both passes, every statement with its
/// transactions.
pub fn parse(bytes: &[u8]) -> Result<Vec<Statement>, ReadError> {
    let source = Source::Bytes(bytes);
    let surveyed = survey(source)?;
    let mut found: Vec<Vec<SnapshotTransaction>> = vec![Vec::new(); surveyed.statements.len()];
    surveyed
        .entries(source, None, &mut |n, transaction| {
            found[n].push(transaction);
            Ok::<(), std::convert::Infallible>(())
        })
        .map_err(|err| match err {
            PassError::Read(err) => err,
            PassError::Stopped(never) => match never {},
        })?;
    Ok(surveyed
        .statements
        .into_iter()
        .zip(found)
        .map(|(surveyed, mut transactions)| {
            let mut statement = surveyed.statement;
            // The tree's own records (an investment statement's trades)
            // follow the cash records.
            transactions.append(&mut statement.transactions);
            statement.transactions = transactions;
            statement
        })
        .collect())
}

/// A statement as the first pass reads it: everything but the records of
/// its transaction list, which [`Surveyed::entries`] reads.
#[derive(Debug)]
pub struct SurveyedStatement {
    /// The statement; its `transactions` hold only what is not read from
    /// the records (an investment statement's trades).
    pub statement: Statement,
    /// Its element's number among the file's statement elements.
    number: usize,
    /// What its ids are made with: the account as the file names it.
    key: String,
    place: Place,
    survey: Survey,
    /// Whether the file's records outside any statement are its own.
    adopts: bool,
}

impl SurveyedStatement {
    /// The currencies its records state (the statement's own for those
    /// naming none).
    pub fn record_currencies(&self) -> BTreeSet<String> {
        self.survey.facts().currencies(&self.statement.currency)
    }

    /// Whether it has transactions (records that survive corrections).
    pub fn has_records(&self) -> bool {
        self.survey.facts().count() > 0 || !self.statement.transactions.is_empty()
    }

    /// Whether the second pass has records of it to read.
    pub fn has_entries(&self) -> bool {
        self.survey.entries() > 0 || self.adopts
    }
}

/// A file after the first pass.
#[derive(Debug)]
pub struct Surveyed {
    charset: Charset,
    /// The digest of the bytes read, for a source that could change.
    digest: Option<[u8; 32]>,
    pub statements: Vec<SurveyedStatement>,
    /// Records outside any statement that the file's only statement
    /// adopts: held, as nobody knows whose they are until the file ends
    /// (real files have none or a few).
    adopted: Vec<Entry>,
}

/// Why the second pass stopped.
#[derive(Debug)]
pub enum PassError<E> {
    /// The file does not read as it did in the first pass (it changed on
    /// disk, or cannot be read again).
    Read(ReadError),
    /// What the transactions were given to refused one.
    Stopped(E),
}

impl<E> From<ReadError> for PassError<E> {
    fn from(err: ReadError) -> Self {
        PassError::Read(err)
    }
}

/// The first pass over an OFX file (see the module's documentation).
pub fn survey(source: Source<'_>) -> Result<Surveyed, ReadError> {
    let mut charset = Charset::of(&source)?;
    loop {
        match survey_as(source, charset) {
            Err(TextError::NotUtf8) => charset = Charset::not_utf8(),
            Err(TextError::Read(err)) => return Err(err),
            Ok(surveyed) => return Ok(surveyed),
        }
    }
}

fn survey_as(source: Source<'_>, charset: Charset) -> Result<Surveyed, TextError> {
    let mut text = Text::open(&source, charset)?;
    let mut surveys: Vec<Survey> = Vec::new();
    let mut unplaced: Vec<Entry> = Vec::new();
    let root = scan(&mut text, &mut |placed, entry| {
        match placed.statement {
            Some(number) => {
                if surveys.len() <= number {
                    surveys.resize_with(number + 1, Survey::default);
                }
                surveys[number].look(&entry, placed.in_list);
            }
            None => unplaced.push(entry),
        }
        Ok::<(), std::convert::Infallible>(())
    })
    .map_err(|stop| match stop {
        Stop::Text(err) => err,
        Stop::Sink(never) => match never {},
    })?;
    let digest = text.finish();
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
    let number_of = |element: &Element| {
        element
            .attribute(ENTRIES_ATTRIBUTE)
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(usize::MAX)
    };
    // Records outside any statement belong to the file's one statement when
    // it has one; otherwise nobody can say whose they are.
    let adopter = match (cash.as_slice(), investments.len()) {
        ([(only, _, _)], 0) => Some(number_of(only)),
        _ => None,
    };
    if let Some(number) = adopter {
        if surveys.len() <= number {
            surveys.resize_with(number + 1, Survey::default);
        }
        for entry in &unplaced {
            surveys[number].look(entry, false);
        }
    }
    // What survives corrections, where a record corrects another.
    let statement_elements: Vec<(&Element, usize)> = cash
        .iter()
        .map(|(element, _, _)| (*element, number_of(element)))
        .chain(
            investments
                .iter()
                .map(|element| (*element, number_of(element))),
        )
        .collect();
    let corrected: Vec<(usize, String, String)> = statement_elements
        .iter()
        .filter(|(_, number)| surveys.get(*number).is_some_and(Survey::has_corrections))
        .map(|(element, number)| {
            let (key, currency) = key_and_currency(element);
            (*number, key, currency)
        })
        .collect();
    if !corrected.is_empty() {
        let counted = count_surviving(source, charset, &surveys, &corrected, adopter, &unplaced)?;
        for (number, facts) in counted {
            surveys[number].set_surviving(facts);
        }
    }
    let mut take_survey = |number: usize| -> Survey {
        surveys
            .get_mut(number)
            .map(std::mem::take)
            .unwrap_or_default()
    };
    let mut statements = Vec::new();
    for (statement, credit_card, number) in cash {
        let element_number = number_of(statement);
        let survey = take_survey(element_number);
        let place = (credit_card, number);
        let adopts = adopter.is_some();
        statements.push(cash_statement(
            statement,
            survey,
            place,
            (element_number, adopts),
        ));
    }
    for (number, statement) in investments.into_iter().enumerate() {
        let element_number = number_of(statement);
        let survey = take_survey(element_number);
        let place = (number + 1, element_number);
        statements.push(investment_statement(statement, survey, &securities, place)?);
    }
    let adopting = adopter.is_some();
    let count = statements.len();
    if !adopting
        && !unplaced.is_empty()
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
        first.statement.notes.push(format!(
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
        }))
        .into());
    }
    Ok(Surveyed {
        charset,
        digest,
        statements,
        adopted: if adopting { unplaced } else { Vec::new() },
    })
}

/// The account a statement element's ids are made with, and its currency.
fn key_and_currency(statement: &Element) -> (String, String) {
    let currency = statement.text_at("CURDEF").unwrap_or("USD").to_owned();
    let key = match statement.name.as_str() {
        "INVSTMTRS" => statement.text_at("INVACCTFROM/ACCTID").map(str::to_owned),
        _ => statement
            .child("BANKACCTFROM")
            .or_else(|| statement.child("CCACCTFROM"))
            .and_then(|account| account.text_at("ACCTID"))
            .map(str::to_owned),
    };
    // A file that names no account goes to one account per currency (as
    // camt and MT940 files without one do).
    (
        key.unwrap_or_else(|| format!("unidentified-{currency}")),
        currency,
    )
}

/// Reads the records of the statements `corrected` (element number, key,
/// currency) again, as the second pass will, and counts what survives
/// their corrections: files without corrections never need it.
fn count_surviving(
    source: Source<'_>,
    charset: Charset,
    surveys: &[Survey],
    corrected: &[(usize, String, String)],
    adopter: Option<usize>,
    unplaced: &[Entry],
) -> Result<HashMap<usize, Facts>, TextError> {
    let mut takes: HashMap<usize, Take<'_>> = corrected
        .iter()
        .filter_map(|(number, key, currency)| {
            Some((*number, Take::new(surveys.get(*number)?, key, currency)))
        })
        .collect();
    let mut counted: HashMap<usize, Facts> = takes
        .keys()
        .map(|number| (*number, Facts::default()))
        .collect();
    let mut text = Text::open(&source, charset)?;
    scan(&mut text, &mut |placed, entry| {
        if let Some(number) = placed.statement
            && let Some(take) = takes.get_mut(&number)
            && let Some(transaction) = take.take(entry)
        {
            counted.entry(number).or_default().add(&transaction);
        }
        Ok::<(), std::convert::Infallible>(())
    })
    .map_err(|stop| match stop {
        Stop::Text(err) => err,
        Stop::Sink(never) => match never {},
    })?;
    if let Some(number) = adopter
        && let Some(take) = takes.get_mut(&number)
    {
        for entry in unplaced {
            if let Some(transaction) = take.take(entry.clone()) {
                counted.entry(number).or_default().add(&transaction);
            }
        }
    }
    Ok(counted)
}

impl Surveyed {
    /// The second pass: reads the file again and gives each transaction of
    /// the statements `wanted` (all when `None`) to `each` with its
    /// statement's position in [`Surveyed::statements`], in file order.
    /// Fails when the file does not read as it did (it changed since).
    pub fn entries<E>(
        &self,
        source: Source<'_>,
        wanted: Option<usize>,
        each: &mut dyn FnMut(usize, SnapshotTransaction) -> Result<(), E>,
    ) -> Result<(), PassError<E>> {
        let mut takes: Vec<Option<Take<'_>>> = self
            .statements
            .iter()
            .enumerate()
            .map(|(n, s)| {
                wanted
                    .is_none_or(|w| w == n)
                    .then(|| Take::new(&s.survey, &s.key, &s.statement.currency))
            })
            .collect();
        let by_number: HashMap<usize, usize> = self
            .statements
            .iter()
            .enumerate()
            .map(|(n, s)| (s.number, n))
            .collect();
        let mut text = Text::open(&source, self.charset)?;
        let scanned = scan(&mut text, &mut |placed, entry| {
            let Some(n) = placed.statement.and_then(|number| by_number.get(&number)) else {
                return Ok(());
            };
            match takes[*n].as_mut().and_then(|take| take.take(entry)) {
                Some(transaction) => each(*n, transaction),
                None => Ok(()),
            }
        });
        match scanned {
            Ok(_) => {}
            Err(Stop::Sink(err)) => return Err(PassError::Stopped(err)),
            Err(Stop::Text(TextError::Read(err))) => return Err(changed::<E>(err)),
            Err(Stop::Text(TextError::NotUtf8)) => {
                return Err(changed::<E>(ReadError::of_file(Reason::Structure(
                    "it is no longer UTF-8".to_owned(),
                ))));
            }
        }
        for (n, surveyed) in self.statements.iter().enumerate() {
            let Some(take) = takes[n].as_mut() else {
                continue;
            };
            if surveyed.adopts {
                for entry in &self.adopted {
                    if let Some(transaction) = take.take(entry.clone()) {
                        each(n, transaction).map_err(PassError::Stopped)?;
                    }
                }
            }
            if take.entries() != surveyed.survey.entries() {
                return Err(changed::<E>(ReadError::of_file(Reason::Structure(
                    format!(
                        "{} has {} transaction records now, {} before",
                        surveyed.place,
                        take.entries(),
                        surveyed.survey.entries()
                    ),
                ))));
            }
        }
        if text.finish() != self.digest {
            return Err(changed::<E>(ReadError::of_file(Reason::Structure(
                "its bytes differ".to_owned(),
            ))));
        }
        Ok(())
    }
}

/// The file did not read the second time as it did the first (it changed
/// on disk meanwhile).
fn changed<E>(why: ReadError) -> PassError<E> {
    let why = match why.reason {
        Reason::Unavailable(why) => why,
        _ => why.to_string(),
    };
    PassError::Read(ReadError::of_file(Reason::Unavailable(format!(
        "it changed while it was imported ({why})"
    ))))
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

fn account_kind(code: Option<&str>) -> AccountKind {
    match code.unwrap_or_default() {
        "SAVINGS" | "MONEYMRKT" => AccountKind::Savings,
        "CREDITLINE" => AccountKind::CreditCard,
        _ => AccountKind::Checking,
    }
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

/// A bank or card statement (`credit_card`, the `number`th of its kind);
/// `element` is its element's number in the file, `adopts` whether the
/// records outside any statement are its own.
fn cash_statement(
    statement: &Element,
    mut survey: Survey,
    (credit_card, number): (bool, usize),
    (element, adopts): (usize, bool),
) -> SurveyedStatement {
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
    let (account_id, currency) = key_and_currency(statement);
    let account_name = account
        .text_at("ACCTID")
        .is_none()
        .then(|| format!("Imported {currency} account (the file names no account)"));
    // The records of every BANKTRANLIST are the statement's: some banks
    // split a statement into several.
    let mut notes = survey.finish(&place);
    let balance = balance(statement, &currency, &place, &mut notes);
    SurveyedStatement {
        key: account_id.clone(),
        statement: Statement {
            account_id,
            account_name,
            kind: if credit_card {
                AccountKind::CreditCard
            } else {
                account_kind(account.text_at("ACCTTYPE"))
            },
            currency,
            transactions: Vec::new(),
            opening_booked: None,
            opening_date: None,
            closing_booked: balance.as_ref().map(|b| b.current),
            balance,
            holdings: None,
            investment_transactions: Vec::new(),
            servicer: None,
            notes,
            currency_assumed: Vec::new(),
            legacy_ids: Vec::new(),
        },
        number: element,
        place,
        survey,
        adopts,
    }
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

/// The `number`th investment statement; `element` is its element's number
/// in the file.
fn investment_statement(
    statement: &Element,
    mut survey: Survey,
    securities: &HashMap<String, Security>,
    (number, element): (usize, usize),
) -> Result<SurveyedStatement, ReadError> {
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
    let mut notes = survey.finish(&place);
    let mut identities = Vec::new();
    let mut trade_records = Vec::new();
    // Investment activity, by the position of its trade's cash record.
    let mut activities = Vec::new();
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
        // The trade as investment activity too; unreadable details leave
        // the activity out, not the cash record.
        match activity::read(trade, &at, securities, &currency) {
            Ok(Some(activity)) => activities.push((trade_records.len(), activity)),
            Ok(None) => {}
            Err(err) => notes.push(err.left_out("the trade's investment details")),
        }
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
    let investment_transactions: Vec<_> = activities
        .into_iter()
        .map(|(record, activity)| SnapshotInvestmentTransaction {
            provider_id: trade_records[record].provider_id.clone(),
            ..activity
        })
        .collect();
    let records = trade_records;

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
        .or_else(|| {
            records
                .iter()
                .map(|r| r.date)
                .max()
                .max(survey.facts().latest())
        });
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
    Ok(SurveyedStatement {
        key: account_id.clone(),
        statement: Statement {
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
            investment_transactions,
            servicer: None,
            notes,
            currency_assumed: Vec::new(),
            legacy_ids: Vec::new(),
        },
        number: element,
        place,
        survey,
        adopts: false,
    })
}

/// The security a `SECID` names: from the file's security list (whose
/// currency may be empty), else as bare as the id makes it, in `currency`.
fn security_of(
    secid: &Element,
    securities: &HashMap<String, Security>,
    currency: &str,
) -> Security {
    let id = secid.text_at("UNIQUEID").unwrap_or_default();
    securities.get(id).cloned().unwrap_or_else(|| {
        let kind = secid.text_at("UNIQUEIDTYPE");
        Security {
            name: id.to_owned(),
            currency: currency.to_owned(),
            ticker: None,
            figi: None,
            cusip: (kind == Some("CUSIP")).then(|| id.to_owned()),
            isin: (kind == Some("ISIN")).then(|| id.to_owned()),
        }
    })
}

/// One `INVPOS` as a holding of its security.
fn holding(
    pos: &Element,
    at: &Place,
    securities: &HashMap<String, Security>,
    currency: &str,
) -> Result<SnapshotHolding, ReadError> {
    let secid = pos
        .child("SECID")
        .filter(|secid| secid.text_at("UNIQUEID").is_some())
        .ok_or_else(|| at.at(Reason::Missing("SECID")))?;
    let security = security_of(secid, securities, currency);
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

    /// Every file of these tests is read 7 bytes at a time
    /// (`text::CHUNK`): a record cut anywhere, even inside a character,
    /// reads as a whole.
    #[test]
    fn a_large_file_read_in_pieces_keeps_every_rule_and_every_character() {
        use crate::import::samples::ofx_with_every_rule;
        let entries = 400;
        let labelled = ofx_with_every_rule(entries, true);
        // Naming no character set, and not UTF-8 (the é is one byte).
        let mut unlabelled = labelled.clone();
        let label = unlabelled
            .windows(12)
            .position(|w| w == b"CHARSET:1252")
            .unwrap();
        unlabelled[label..label + 12].copy_from_slice(b"CHARSET:NONE");
        assert!(std::str::from_utf8(&unlabelled).is_err());
        let utf8 = ofx_with_every_rule(entries, false);
        let mut read = Vec::new();
        for file in [&labelled, &unlabelled, &utf8] {
            let statements = parse(file).unwrap();
            let statement = &statements[0];
            let t = &statement.transactions;
            // F5 replaced by F5C, F6 deleted; F5C, SELF and LATE added;
            // BAD left out.
            assert_eq!(t.len(), entries + 1);
            let ids: std::collections::HashSet<&str> =
                t.iter().map(|t| t.provider_id.as_str()).collect();
            assert_eq!(ids.len(), t.len(), "every transaction has its own id");
            assert!(
                ids.iter().any(|id| id.ends_with("#2")),
                "twins are numbered"
            );
            assert!(
                !ids.iter()
                    .any(|id| id.starts_with("F5@") || id.starts_with("F6@"))
            );
            assert!(ids.iter().any(|id| id.starts_with("F5C@")));
            assert!(
                t.iter()
                    .filter_map(|t| t.merchant.as_deref())
                    .any(|m| m == "Caf\u{e9} & Co")
            );
            assert!(t.iter().all(|t| {
                let texts = [t.merchant.as_deref(), t.description.as_deref()];
                texts
                    .iter()
                    .flatten()
                    .all(|x| !x.contains(['<', '>', '\u{fffd}']))
            }));
            assert!(
                statement.notes.iter().any(|n| n.contains("FITID BAD")),
                "{:?}",
                statement.notes
            );
            assert!(
                statement
                    .notes
                    .iter()
                    .any(|n| n.contains("outside their list"))
            );
            read.push(statements);
        }
        // The three encodings are one statement.
        assert_eq!(read[0], read[1]);
        assert_eq!(read[0], read[2]);
    }

    /// A file from disk that changes between the passes is refused by the
    /// second; nothing of it is given out as read.
    #[test]
    fn a_file_changed_between_the_passes_is_refused() {
        use crate::import::samples::ofx_with_every_rule;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("changing.ofx");
        let file = ofx_with_every_rule(50, false);
        std::fs::write(&path, &file).unwrap();
        let surveyed = survey(Source::Path(&path)).unwrap();
        let count = |surveyed: &Surveyed| {
            let mut n = 0;
            surveyed
                .entries(Source::Path(&path), None, &mut |_, _| {
                    n += 1;
                    Ok::<(), ()>(())
                })
                .map(|()| n)
        };
        assert_eq!(count(&surveyed).unwrap(), 51);
        // One amount changed, the length the same.
        let changed = String::from_utf8(file)
            .unwrap()
            .replacen("-4.50", "-4.60", 1);
        std::fs::write(&path, changed).unwrap();
        let err = count(&surveyed).unwrap_err();
        let PassError::Read(err) = err else {
            panic!("{err:?}")
        };
        assert!(
            err.to_string().contains("changed while it was imported"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
