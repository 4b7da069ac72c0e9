//! A statement's transaction records (`STMTTRN`), read in two passes so
//! that none has to be held until its statement is read whole: the first
//! ([`Survey`]) learns what the statement rules need (which references
//! repeat, which records a later one corrects, what is left out and why),
//! the second ([`Take`]) turns each record into its transaction with its
//! final id as the file is read again.

use super::super::error::{Place, ReadError, Reason};
use super::super::identity::{
    EntryIdentity, EntryIds, ReferenceCensus, RepeatedReferences, identity_text,
};
use super::super::xml::Element;
use super::{amount, date};
use chrono::NaiveDate;
use std::collections::{BTreeSet, HashMap};
use tributary_domain::enrich::hints::{CategoryHint, Hints};
use tributary_domain::money::Decimal;
use tributary_domain::snapshot::SnapshotTransaction;

/// One `STMTTRN`, read the moment its element closes: a statement's
/// transaction list is never held as an element tree.
#[derive(Debug, Default, Clone)]
pub(super) struct Entry {
    pub fitid: Option<String>,
    /// `CORRECTFITID`: the entry this one replaces or deletes.
    pub corrects: Option<String>,
    /// `CORRECTACTION` is DELETE.
    pub deletes: bool,
    /// `DTPOSTED`, else `DTUSER`.
    pub posted: Option<String>,
    pub amount: Option<String>,
    /// `NAME`, else `PAYEE/NAME`.
    pub name: Option<String>,
    pub memo: Option<String>,
    pub kind: Option<String>,
    /// `SIC`: the Standard Industrial Classification of the payee.
    pub sic: Option<String>,
    /// `CURRENCY/CURSYM`, where it differs from the statement's.
    pub currency: Option<String>,
}

impl Entry {
    pub fn read(item: &Element) -> Entry {
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

/// What one record is, the same in both passes.
enum Record {
    /// `CORRECTACTION` DELETE of the named FITID: no transaction itself.
    Deletion(String),
    /// Neither amount nor date: a placeholder, skipped.
    Placeholder,
    /// Its date or amount cannot be read: the note saying so.
    LeftOut(String),
    Read {
        day: NaiveDate,
        value: Decimal,
        identity: EntryIdentity,
    },
}

/// Reads the `n`th record (from 0) of a statement; a note names it by its
/// number, and [`Survey::finish`] puts the statement before it.
fn record(entry: &Entry, n: usize) -> Record {
    if entry.deletes
        && let Some(corrected) = &entry.corrects
    {
        return Record::Deletion(corrected.clone());
    }
    if entry.amount.is_none() && entry.posted.is_none() {
        return Record::Placeholder;
    }
    let at = Place::new(format!("transaction {}", n + 1));
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
    match read() {
        Ok((day, value)) => Record::Read {
            day,
            value,
            identity: EntryIdentity {
                reference: entry.fitid.clone(),
                date: day,
                amount: value,
                text: identity_text(&[entry.name.as_deref(), entry.memo.as_deref()]),
            },
        },
        Err(err) => {
            let what = match &entry.fitid {
                Some(fitid) => format!("the record (FITID {fitid})"),
                None => "the record".to_owned(),
            };
            Record::LeftOut(err.left_out(&what))
        }
    }
}

/// What the first pass learns of one statement's records.
#[derive(Debug, Default)]
pub(super) struct Survey {
    /// Records seen, of every kind.
    entries: usize,
    outside_list: usize,
    census: ReferenceCensus,
    repeated: RepeatedReferences,
    /// FITIDs a record corrects, and which read record replaces them (none
    /// for a deletion).
    corrected: HashMap<String, Option<usize>>,
    replacing_themselves: usize,
    left_out: Vec<String>,
    /// The records read (neither deletions, placeholders nor left out):
    /// how many, their currencies, the latest date.
    read_facts: Facts,
    /// The same of the records that survive corrections, where a record
    /// corrects another: counted by reading the records again
    /// ([`super::survey`]), since a correction may follow what it corrects.
    surviving: Option<Facts>,
}

/// What the currency checks and an investment statement's balance need of
/// a statement's transactions.
#[derive(Debug, Default, Clone)]
pub(super) struct Facts {
    count: usize,
    /// The currencies records name.
    currencies: BTreeSet<String>,
    /// Whether a record names none (it is in the statement's).
    in_statement_currency: bool,
    latest: Option<NaiveDate>,
}

impl Facts {
    pub fn add(&mut self, transaction: &SnapshotTransaction) {
        self.count += 1;
        self.currencies
            .insert(transaction.currency.replace('\0', ""));
        self.latest = self.latest.max(Some(transaction.date));
    }
}

impl Survey {
    /// Looks at the next record; `in_list` says whether it stands in its
    /// statement's transaction list.
    pub fn look(&mut self, entry: &Entry, in_list: bool) {
        let n = self.entries;
        self.entries += 1;
        if !in_list {
            self.outside_list += 1;
        }
        match record(entry, n) {
            Record::Deletion(fitid) => {
                self.corrected.insert(fitid, None);
            }
            Record::Placeholder => {}
            Record::LeftOut(note) => self.left_out.push(note),
            Record::Read { day, identity, .. } => {
                self.census.count(&identity);
                if let Some(fitid) = &entry.corrects {
                    if entry.fitid.as_ref() == Some(fitid) {
                        self.replacing_themselves += 1;
                    }
                    // The replacing record, by its number among those read.
                    self.corrected
                        .insert(fitid.clone(), Some(self.read_facts.count));
                }
                let facts = &mut self.read_facts;
                facts.count += 1;
                match &entry.currency {
                    Some(currency) if !facts.currencies.contains(currency) => {
                        facts.currencies.insert(currency.replace('\0', ""));
                    }
                    Some(_) => {}
                    None => facts.in_statement_currency = true,
                }
                self.read_facts.latest = self.read_facts.latest.max(Some(day));
            }
        }
    }

    /// Ends the pass: the notes on what was left out or read as it stood.
    pub fn finish(&mut self, place: &Place) -> Vec<String> {
        self.repeated = std::mem::take(&mut self.census).finish();
        let mut notes = Vec::new();
        if self.outside_list > 0 {
            notes.push(format!(
                "{place}: {} transaction record(s) (STMTTRN) stand outside their list (after an early </BANKTRANLIST> or another stray end tag): read as the statement's",
                self.outside_list
            ));
        }
        notes.extend(
            self.left_out
                .drain(..)
                .map(|note| format!("{place}, {note}")),
        );
        if self.replacing_themselves > 0 {
            notes.push(format!(
                "{place}: {} record(s) name their own FITID as the one they replace (CORRECTACTION REPLACE): each is kept, once, in place of any earlier record of that FITID",
                self.replacing_themselves
            ));
        }
        notes
    }

    /// How many records the second pass must meet again.
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// Whether a record corrects (replaces or deletes) another.
    pub fn has_corrections(&self) -> bool {
        !self.corrected.is_empty()
    }

    /// What survives corrections, counted by a pass of [`Take`].
    pub fn set_surviving(&mut self, facts: Facts) {
        self.surviving = Some(facts);
    }

    /// The statement's transactions: those read, less those corrected.
    pub fn facts(&self) -> &Facts {
        self.surviving.as_ref().unwrap_or(&self.read_facts)
    }
}

impl Facts {
    pub fn count(&self) -> usize {
        self.count
    }

    /// The currencies of the transactions, `statement` being the
    /// statement's own.
    pub fn currencies(&self, statement: &str) -> BTreeSet<String> {
        let mut currencies = self.currencies.clone();
        if self.in_statement_currency {
            currencies.insert(statement.replace('\0', ""));
        }
        currencies
    }

    pub fn latest(&self) -> Option<NaiveDate> {
        self.latest
    }
}

/// The second pass over one statement's records.
pub(super) struct Take<'a> {
    survey: &'a Survey,
    ids: EntryIds<'a>,
    currency: &'a str,
    entries: usize,
    read: usize,
}

impl<'a> Take<'a> {
    /// `account` is the key the statement's ids are made with, `currency`
    /// its own.
    pub fn new(survey: &'a Survey, account: &'a str, currency: &'a str) -> Self {
        Take {
            survey,
            ids: EntryIds::new(account, "", &survey.repeated),
            currency,
            entries: 0,
            read: 0,
        }
    }

    /// The next record's transaction, unless it is none (a deletion, a
    /// placeholder, a record left out) or a later record corrects it.
    pub fn take(&mut self, entry: Entry) -> Option<SnapshotTransaction> {
        let n = self.entries;
        self.entries += 1;
        let Record::Read {
            day,
            value,
            identity,
        } = record(&entry, n)
        else {
            return None;
        };
        let at = self.read;
        self.read += 1;
        let provider_id = self.ids.next(&identity);
        drop(identity);
        let replaced = entry
            .fitid
            .as_ref()
            .and_then(|fitid| self.survey.corrected.get(fitid))
            .is_some_and(|replacement| *replacement != Some(at));
        if replaced {
            return None;
        }
        let hints = entry.hints();
        Some(SnapshotTransaction {
            provider_id,
            pending_provider_id: None,
            is_pending: false,
            date: day,
            amount: value,
            currency: entry.currency.unwrap_or_else(|| self.currency.to_owned()),
            merchant: entry.name,
            description: entry.memo.or(entry.kind),
            hints,
        })
    }

    /// Records met so far: the first pass's count once the pass is done.
    pub fn entries(&self) -> usize {
        self.entries
    }
}
