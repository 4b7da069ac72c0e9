//! Enrichment: what Tributary adds to the transactions banks send, by pure
//! rules and tables shipped with the code (docs/enrichment.md): a clean
//! merchant, a category from the taxonomy ([`crate::taxonomy`]), and the
//! source each came from.
//!
//! Storage applies [`enrich`] in the same database transaction that stores
//! a change, and again (as a `modified` change) when the tables here change
//! ([`TABLES_VERSION`]) or the person's rules do.

pub mod hints;
mod keywords;
pub mod merchant;
mod merchants;
mod places;
pub mod recurring;
pub mod rules;
pub mod spending;
pub mod transfers;

use crate::taxonomy::Subcategory;
use aho_corasick::AhoCorasick;
use chrono::NaiveDate;
use hints::Hints;
use keywords::{Direction, KEYWORDS};
use merchants::{MERCHANTS, Merchant};
use rust_decimal::Decimal;
use std::sync::LazyLock;

/// The version of the rules and tables in this module. Raise it with any
/// change that can change a result: stored rows enriched under an older
/// version are enriched again, in the background.
pub const TABLES_VERSION: i32 = 3;

/// The subcategory of a transaction nothing says anything of.
pub const UNCATEGORIZED: &str = "other.uncategorized";

/// Where a transaction's category came from, most trusted first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A rule the person wrote.
    Rule,
    /// A transfer between the person's own accounts, found by pairing.
    Transfer,
    /// A code the provider or the statement gave ([`hints`]).
    Provider,
    /// The merchant table.
    Merchant,
    /// A keyword of the text.
    Keyword,
    /// Nothing said anything: `other.uncategorized`.
    Nothing,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Rule => "rule",
            Source::Transfer => "transfer",
            Source::Provider => "provider",
            Source::Merchant => "merchant",
            Source::Keyword => "keyword",
            Source::Nothing => "none",
        }
    }
}

/// What a bank sent of one transaction that enrichment reads.
#[derive(Debug, Clone, Copy)]
pub struct Raw<'a> {
    /// The provider's merchant or counterparty name.
    pub merchant: Option<&'a str>,
    pub description: Option<&'a str>,
    pub amount: Decimal,
    pub hints: &'a Hints,
}

/// A posted transaction as stored and enriched, as spending totals and
/// recurring streams read it.
#[derive(Debug, Clone, PartialEq)]
pub struct Posted {
    pub id: i64,
    pub account_id: i64,
    pub date: NaiveDate,
    pub amount: Decimal,
    pub currency: String,
    /// The clean merchant, else the provider's.
    pub merchant: Option<String>,
    /// The subcategory it shows ([`shown_subcategory`]); `None` for a row
    /// stored before enrichment.
    pub subcategory: Option<&'static Subcategory>,
}

/// What enrichment made of one transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enrichment {
    /// The clean merchant: `None` only when the record has no text.
    pub merchant: Option<String>,
    pub subcategory: &'static Subcategory,
    pub source: Source,
}

/// Enriches one transaction by the tables alone (rules and transfers are
/// applied over this by the caller, who knows the person's rules and
/// accounts).
pub fn enrich(raw: &Raw) -> Enrichment {
    let payee = merchant::clean(raw.merchant, raw.description);
    let (id, source) = if let Some(id) = raw.hints.subcategory(raw.amount) {
        (id, Source::Provider)
    } else if let Some(id) = payee.as_ref().and_then(|p| p.known?.subcategory) {
        (id, Source::Merchant)
    } else if let Some(id) = keyword_subcategory(raw) {
        (id, Source::Keyword)
    } else {
        (UNCATEGORIZED, Source::Nothing)
    };
    Enrichment {
        merchant: payee.map(|p| p.name),
        subcategory: subcategory(id),
        source,
    }
}

/// The subcategory a stored transaction shows (docs/enrichment.md, "Where
/// a category comes from"): its own where a rule of the person's gave it;
/// else the transfer's, where it is one side of a transfer between the
/// person's accounts; else what the tables gave it. `None` for a row
/// stored before enrichment.
pub fn shown_subcategory(
    stored: Option<&str>,
    source: Option<&str>,
    transfer: Option<&str>,
) -> Option<&'static Subcategory> {
    let chosen = match (source, transfer) {
        (Some(source), _) if source == Source::Rule.as_str() => stored,
        (_, Some(transfer)) => Some(transfer),
        _ => stored,
    };
    chosen.and_then(Subcategory::from_id)
}

/// The subcategory of an id the tables name (a test checks they all exist).
fn subcategory(id: &str) -> &'static Subcategory {
    Subcategory::from_id(id)
        .or_else(|| Subcategory::from_id(UNCATEGORIZED))
        .unwrap_or(&crate::taxonomy::SUBCATEGORIES[0])
}

/// The longest keyword of the record's text that applies to its direction.
fn keyword_subcategory(raw: &Raw) -> Option<&'static str> {
    static MATCHER: LazyLock<Option<AhoCorasick>> =
        LazyLock::new(|| words_matcher(KEYWORDS.iter().map(|k| k.word)));
    let matcher = MATCHER.as_ref()?;
    let text = fold(&[raw.merchant, raw.description]);
    let incoming = raw.amount.is_sign_positive() && !raw.amount.is_zero();
    matcher
        .find_overlapping_iter(&text)
        .map(|m| &KEYWORDS[m.pattern().as_usize()])
        .filter(|k| match k.direction {
            Direction::In => incoming,
            Direction::Out => !incoming,
            Direction::Either => true,
        })
        .max_by_key(|k| k.word.len())
        .map(|k| k.subcategory)
}

/// Where in a text a merchant's spelling may be found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anywhere {
    /// At its start only: a clean name (`REWE Markt` is Rewe; `Dirk
    /// Leunig` is not Dirk).
    No,
    /// Anywhere, and only a merchant that says what was bought: who was
    /// paid through a payment service.
    Yes,
}

/// The merchant of the table a text names: the longest spelling found
/// where `anywhere` allows.
fn known_merchant(name: &str, anywhere: Anywhere) -> Option<&'static Merchant> {
    static SPELLINGS: LazyLock<Vec<(&'static str, &'static Merchant)>> = LazyLock::new(|| {
        MERCHANTS
            .iter()
            .flat_map(|m| m.spellings.iter().map(move |s| (*s, m)))
            .collect()
    });
    static MATCHER: LazyLock<Option<AhoCorasick>> =
        LazyLock::new(|| words_matcher(SPELLINGS.iter().map(|(s, _)| *s)));
    let matcher = MATCHER.as_ref()?;
    let text = fold(&[Some(name)]);
    matcher
        .find_overlapping_iter(&text)
        .filter(|m| anywhere == Anywhere::Yes || m.start() == 0)
        .map(|m| SPELLINGS[m.pattern().as_usize()])
        .filter(|(_, m)| anywhere == Anywhere::No || m.subcategory.is_some())
        .max_by_key(|(spelling, _)| spelling.len())
        .map(|(_, merchant)| merchant)
}

/// A matcher of whole words of [`fold`]ed text: each word, folded, between
/// spaces. `None` only if the tables were too large for the automaton,
/// which a test rules out.
fn words_matcher<'a>(words: impl Iterator<Item = &'a str>) -> Option<AhoCorasick> {
    let patterns: Vec<String> = words.map(|w| fold(&[Some(w)])).collect();
    AhoCorasick::new(patterns).ok()
}

/// Text as the tables match it: lower case, Latin accents dropped (`é` is
/// `e`, `ß` is `ss`), every run of other characters than letters and
/// digits one space, with a space at both ends of each part, so that a
/// word between spaces is matched whole.
pub(crate) fn fold(parts: &[Option<&str>]) -> String {
    let mut out =
        String::with_capacity(parts.iter().flatten().map(|p| p.len() + 1).sum::<usize>() + 1);
    out.push(' ');
    for (index, part) in parts.iter().flatten().enumerate() {
        // A mark between parts, so that no keyword spans two of them (a
        // merchant's last word and a description's first).
        if index > 0 {
            out.push_str(PART_MARK);
        }
        let mut chars = part.chars().peekable();
        while let Some(c) = chars.next() {
            // An MT940 subfield mark left in a text: `?00UMBUCHUNG` is
            // `umbuchung`; the remittance's lines `?20`..`?29` are one
            // text cut every 27 characters, joined again (`Grun?21dsteuer`).
            if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
                let mut marks = chars.clone();
                let tens = marks.next();
                if marks.next().is_some_and(|d| d.is_ascii_digit()) {
                    chars = marks;
                    if tens != Some('2') && !out.ends_with(' ') {
                        out.push(' ');
                    }
                    continue;
                }
            }
            for lower in c.to_lowercase() {
                match base_letter(lower) {
                    Some(base) => out.push_str(base),
                    None if lower.is_alphanumeric() => out.push(lower),
                    None => {
                        if !out.ends_with(' ') {
                            out.push(' ');
                        }
                    }
                }
            }
        }
        if !out.ends_with(' ') {
            out.push(' ');
        }
    }
    out
}

/// What [`fold`] writes between parts: no table's word holds it.
const PART_MARK: &str = "\u{1} ";

/// The ASCII letters an accented Latin letter is written with in the
/// tables.
fn base_letter(c: char) -> Option<&'static str> {
    Some(match c {
        'a'..='z' | '0'..='9' => return None,
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' => "a",
        'ç' | 'č' | 'ć' => "c",
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ę' | 'ě' => "e",
        'ì' | 'í' | 'î' | 'ï' => "i",
        'ñ' | 'ń' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ő' => "o",
        'ù' | 'ú' | 'û' | 'ü' | 'ű' | 'ů' => "u",
        'ý' | 'ÿ' => "y",
        'ß' => "ss",
        'æ' => "ae",
        'œ' => "oe",
        'ł' => "l",
        'š' | 'ś' => "s",
        'ž' | 'ź' | 'ż' => "z",
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
