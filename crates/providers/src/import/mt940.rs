//! SWIFT MT940 (customer statement) and MT942 (interim report, whose
//! entries become pending). Fields begin at a line `:TAG:`; other lines
//! continue the field above (wrapped lines), a line `-` ends a message, and
//! SWIFT block wrappers (`{1:…}{4:` … `-}`) and bank preambles are skipped.
//! Structured `:86:` details are read in the German (`?20`…`?29`, `?32`)
//! and Dutch (`/NAME/…/REMI/…`) styles; anything else is kept as text.

use super::error::{Place, ReadError, Reason};
use super::identity::{EntryIdentity, entry_ids, identity_text};
use super::statement::Statement;
use chrono::{Datelike, NaiveDate};
use tributary_domain::enrich::hints::{CategoryHint, Hints};
use tributary_domain::model::AccountKind;
use tributary_domain::money::{Decimal, parse_decimal};
use tributary_domain::snapshot::{SnapshotBalance, SnapshotTransaction};

/// One `:TAG:value` field and the line it starts on.
#[derive(Debug)]
struct Field {
    tag: String,
    value: String,
    line: usize,
}

impl Field {
    /// `line 14 (:61:)`.
    fn place(&self) -> Place {
        Place::new(format!("line {} (:{}:)", self.line, self.tag))
    }
}

fn decode(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        // Statements from European banks are often Windows-1252 / Latin-1.
        Err(_) => encoding_rs::WINDOWS_1252.decode(bytes).0.into_owned(),
    }
}

/// Some banks and tools join a SWIFT message's lines with `@@` instead of
/// line breaks (`:20:REF@@:25:NL91ABNA0417164300@@:28C:1@@…`). Where a
/// field tag follows an `@@`, every `@@` is a line break; elsewhere the
/// text is left as it is (`@@` inside a narrative of a normal file).
pub(crate) fn unjoin_lines(text: &str) -> std::borrow::Cow<'_, str> {
    let joined = text
        .match_indices("@@:")
        .any(|(at, _)| tag_of(&text[at + 2..]).is_some_and(|(tag, _)| tag.len() >= 2));
    if joined {
        std::borrow::Cow::Owned(text.replace("@@", "\n"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// `:TAG:` at the start of a line: two digits and an optional letter.
fn tag_of(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix(':')?;
    let end = rest.find(':')?;
    let tag = &rest[..end];
    let valid = (2..=3).contains(&tag.len())
        && tag.chars().take(2).all(|c| c.is_ascii_digit())
        && tag.chars().nth(2).is_none_or(|c| c.is_ascii_alphabetic());
    valid.then(|| (tag, &rest[end + 1..]))
}

fn fields(text: &str) -> Vec<Vec<Field>> {
    let mut messages: Vec<Vec<Field>> = Vec::new();
    let mut current: Vec<Field> = Vec::new();
    // A tag wrapped after its first colon (":" then "86:…") is joined first.
    let raw_lines: Vec<&str> = text.split('\n').collect();
    let mut lines: Vec<(usize, String)> = Vec::with_capacity(raw_lines.len());
    let mut index = 0;
    while index < raw_lines.len() {
        let line = raw_lines[index];
        if line.trim() == ":" && index + 1 < raw_lines.len() {
            lines.push((index + 1, format!(":{}", raw_lines[index + 1].trim_start())));
            index += 2;
        } else {
            lines.push((index + 1, line.to_owned()));
            index += 1;
        }
    }
    for (position, (line_number, raw)) in lines.iter().enumerate() {
        let line_number = *line_number;
        // Whitespace, and SWIFT's SOH/ETX control characters, around lines.
        let mut line = raw
            .trim_end_matches(|c: char| c.is_whitespace() || c.is_control())
            .trim_start_matches(|c: char| c == '\u{feff}' || (c.is_control() && c != '\t'));
        // SWIFT block wrappers around the text block.
        if let Some(start) = line.find("{4:") {
            line = &line[start + 3..];
        }
        let ends_block = line.trim() == "-}" || line.starts_with("-}");
        // A lone `-` ends a message, unless the statement's own fields go on
        // after it: then it was a wrapped line of details that starts with
        // a dash.
        let lone_dash = line.trim() == "-" && !continues_statement(&lines[position + 1..]);
        if ends_block || lone_dash {
            if !current.is_empty() {
                messages.push(std::mem::take(&mut current));
            }
            continue;
        }
        match tag_of(line) {
            Some((tag, value)) => {
                if tag == "20" && current.iter().any(|f| f.tag == "20") {
                    messages.push(std::mem::take(&mut current));
                }
                current.push(Field {
                    tag: tag.to_owned(),
                    value: value.to_owned(),
                    line: line_number,
                });
            }
            None => {
                if let Some(last) = current.last_mut()
                    && !line.trim().is_empty()
                {
                    last.value.push('\n');
                    last.value.push_str(line);
                }
                // Lines before the first field (bank preambles, block
                // headers) are not part of any field.
            }
        }
    }
    if !current.is_empty() {
        messages.push(current);
    }
    messages
}

/// Whether the next field after a lone `-` belongs to the same statement
/// (a transaction, its details or a closing balance) rather than opening a
/// new message.
fn continues_statement(rest: &[(usize, String)]) -> bool {
    rest.iter()
        .map(|(_, line)| line.trim())
        .find(|line| !line.is_empty())
        .and_then(tag_of)
        .is_some_and(|(tag, _)| matches!(tag, "61" | "86" | "62F" | "62M" | "64" | "65"))
}

/// An account field (`:25:`) without the currency some banks append
/// (`NL54INGB0001234500EUR`, `NL84RABO0121212121 EUR`), and that currency.
fn account_and_currency(value: &str) -> (String, Option<String>) {
    let value = value.trim();
    let split = value
        .len()
        .checked_sub(3)
        .filter(|at| *at > 0)
        .and_then(|at| {
            let (id, suffix) = value.split_at_checked(at)?;
            let code = suffix.chars().all(|c| c.is_ascii_uppercase());
            let before = id
                .chars()
                .last()
                .is_some_and(|c| c.is_ascii_digit() || c == ' ' || c == '/');
            (code && before).then(|| {
                (
                    id.trim_end_matches([' ', '/']).to_owned(),
                    suffix.to_owned(),
                )
            })
        });
    match split {
        Some((id, code)) if !id.is_empty() => (id, Some(code)),
        _ => (value.to_owned(), None),
    }
}

/// A `YYMMDD` date; a day past the month's end (30 February, which some
/// banks write) is read as the month's last day.
fn date(text: &str, at: &Place) -> Result<NaiveDate, ReadError> {
    let not_a_date = |text: &str| {
        at.at(Reason::NotADate {
            text: text.to_owned(),
            expected: "YYMMDD".to_owned(),
        })
    };
    let digits = text
        .get(..6)
        .filter(|d| d.chars().all(|c| c.is_ascii_digit()))
        .ok_or_else(|| not_a_date(text))?;
    let (yy, mm, dd): (i32, u32, u32) = (
        digits[..2].parse().unwrap_or(0),
        digits[2..4].parse().unwrap_or(0),
        digits[4..6].parse().unwrap_or(0),
    );
    let year = if yy < 80 { 2000 + yy } else { 1900 + yy };
    if !(1..=12).contains(&mm) || dd == 0 {
        return Err(not_a_date(digits));
    }
    (0..4)
        .find_map(|back| {
            NaiveDate::from_ymd_opt(year, mm, dd.saturating_sub(back))
                .filter(|_| dd.saturating_sub(back) >= 28 || back == 0)
        })
        .ok_or_else(|| not_a_date(digits))
}

/// `12,50` (a comma decimal separator, maybe a trailing comma).
fn amount(text: &str, at: &Place) -> Result<Decimal, ReadError> {
    let normalized = text.trim().replace(',', ".");
    let normalized = normalized.strip_suffix('.').unwrap_or(&normalized);
    parse_decimal(normalized).map_err(|_| {
        at.at(Reason::NotAnAmount {
            text: text.to_owned(),
        })
    })
}

/// A balance field (`:60F:`, `:62F:`, `:64:`): `C230131EUR1234,56`. Some
/// banks leave the currency out; it is then taken from another balance.
fn balance(field: &Field) -> Result<(Decimal, NaiveDate, Option<String>), ReadError> {
    let at = field.place();
    let value = field.value.replace('\n', "");
    let value = value.trim();
    let (sign, rest) = match value.chars().next() {
        Some('C') => (Decimal::ONE, &value[1..]),
        Some('D') => (Decimal::NEGATIVE_ONE, &value[1..]),
        _ => {
            return Err(at.at(Reason::NotAllowed {
                element: "the balance's mark",
                value: value.chars().take(1).collect(),
                allowed: "C or D",
            }));
        }
    };
    let day = date(rest, &at)?;
    match rest
        .get(6..9)
        .filter(|c| c.chars().all(|ch| ch.is_ascii_uppercase()))
    {
        Some(currency) => Ok((
            sign * amount(&rest[9..], &at)?,
            day,
            Some(currency.to_owned()),
        )),
        None => Ok((
            sign * amount(rest.get(6..).unwrap_or_default(), &at)?,
            day,
            None,
        )),
    }
}

/// The parts of a `:61:` statement line.
struct Line {
    value_date: NaiveDate,
    entry_date: Option<NaiveDate>,
    amount: Decimal,
    customer_reference: Option<String>,
    bank_reference: Option<String>,
    supplementary: Option<String>,
}

fn statement_line(field: &Field) -> Result<Line, ReadError> {
    let at = field.place();
    let (mut first, mut supplementary) = match field.value.split_once('\n') {
        Some((first, more)) => (
            first.to_owned(),
            Some(more.replace('\n', " ").trim().to_owned()).filter(|s| !s.is_empty()),
        ),
        None => (field.value.clone(), None),
    };
    // A line wrapped before its amount continues on the next line.
    let ends_at_mark = first.trim_end().ends_with(['C', 'D', 'R'])
        || first.trim_end().chars().all(|c| c.is_ascii_digit());
    if ends_at_mark
        && let Some((next, rest)) = field
            .value
            .split_once('\n')
            .map(|(_, more)| more.split_once('\n').unwrap_or((more, "")))
    {
        first = format!("{}{}", first.trim_end(), next.trim());
        supplementary = Some(rest.replace('\n', " ").trim().to_owned()).filter(|s| !s.is_empty());
    }
    let text: String = first.chars().filter(|c| *c != ' ').collect();
    let value_date = date(&text, &at)?;
    let mut rest = &text[6..];
    // An optional booking date, MMDD, in the value date's year (or the
    // year around it, across New Year).
    let mut entry_date = None;
    // (`get`: the text after the value date may hold any character.)
    if rest
        .get(..4)
        .is_some_and(|digits| digits.chars().all(|c| c.is_ascii_digit()))
    {
        let (mm, dd): (u32, u32) = (
            rest[..2].parse().unwrap_or(0),
            rest[2..4].parse().unwrap_or(0),
        );
        entry_date = [
            value_date.year(),
            value_date.year() + 1,
            value_date.year() - 1,
        ]
        .into_iter()
        .filter_map(|y| NaiveDate::from_ymd_opt(y, mm, dd))
        .min_by_key(|d| (*d - value_date).num_days().abs());
        rest = &rest[4..];
    }
    let (sign, after_mark) = if let Some(r) = rest.strip_prefix("RC") {
        (Decimal::NEGATIVE_ONE, r)
    } else if let Some(r) = rest.strip_prefix("RD") {
        (Decimal::ONE, r)
    } else if let Some(r) = rest.strip_prefix('C') {
        (Decimal::ONE, r)
    } else if let Some(r) = rest.strip_prefix('D') {
        (Decimal::NEGATIVE_ONE, r)
    } else {
        return Err(at.at(Reason::Structure(format!(
            "expected C, D, RC or RD after the dates in `{first}`"
        ))));
    };
    // An optional funds code letter, then the amount.
    let after_funds = match after_mark.chars().next() {
        Some(c) if c.is_ascii_alphabetic() => &after_mark[1..],
        _ => after_mark,
    };
    let amount_end = after_funds
        .find(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
        .unwrap_or(after_funds.len());
    if amount_end == 0 {
        return Err(at.at(Reason::Structure(format!("no amount in `{first}`"))));
    }
    let value = sign * amount(&after_funds[..amount_end], &at)?;
    // Transaction type (N/F/S + 3 characters, where some banks write a
    // space: ING's `NOV `), then references: read from the line as written,
    // spaces kept, past the dates, mark and amount (spaces dropped there).
    let consumed = text.len() - (after_funds.len() - amount_end);
    let tail = after_nonspace(&first, consumed).trim_start();
    let references = tail
        .char_indices()
        .nth(4)
        .map_or("", |(index, _)| &tail[index..]);
    let (customer, bank) = match references.split_once("//") {
        Some((customer, bank)) => (customer, Some(bank)),
        None => (references, None),
    };
    let clean = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty() && s != "NONREF");
    Ok(Line {
        value_date,
        entry_date,
        amount: value,
        customer_reference: clean(customer),
        bank_reference: bank.and_then(clean),
        supplementary,
    })
}

/// What follows the first `count` non-space characters of `line`.
fn after_nonspace(line: &str, count: usize) -> &str {
    let mut seen = 0;
    for (index, c) in line.char_indices() {
        if seen == count {
            return &line[index..];
        }
        if c != ' ' {
            seen += c.len_utf8();
        }
    }
    ""
}

/// The German business transaction code a structured `:86:` opens with
/// (three digits, then the subfield separator), as a hint.
fn business_code(detail: &str) -> Hints {
    let mut hints = Hints::default();
    let mut chars = detail.chars();
    let code: String = chars.by_ref().take(3).collect();
    let separated = chars.next().is_some_and(|c| !c.is_alphanumeric());
    if separated
        && code.len() == 3
        && let Ok(code) = code.parse()
    {
        hints.push(CategoryHint::Gvc(code));
    }
    hints
}

/// Counterparty and description from `:86:` details.
fn details(text: &str) -> (Option<String>, Option<String>) {
    let joined = text.replace('\n', "");
    // German: a 3-digit business code, then subfields ?NN (the separator
    // is whatever character follows the code).
    let bytes: Vec<char> = joined.chars().collect();
    if bytes.len() > 4 && bytes[..3].iter().all(char::is_ascii_digit) && !bytes[3].is_alphanumeric()
    {
        let separator = bytes[3];
        let mut name = Vec::new();
        let mut purpose = Vec::new();
        let mut posting_text = Vec::new();
        for part in joined.split(separator).skip(1) {
            let (code, value) = (
                part.get(..2).unwrap_or_default(),
                part.get(2..).unwrap_or_default().trim(),
            );
            match code {
                "20" | "21" | "22" | "23" | "24" | "25" | "26" | "27" | "28" | "29" | "60"
                | "61" | "62" | "63" => purpose.push(value),
                "32" | "33" => name.push(value),
                "00" => posting_text.push(value),
                _ => {}
            }
        }
        let join =
            |parts: Vec<&str>| Some(parts.concat().trim().to_owned()).filter(|s| !s.is_empty());
        // Without a purpose, the posting text (?00: `SAMMLER`, `RETOURE`)
        // describes the entry.
        return (join(name), join(purpose).or_else(|| join(posting_text)));
    }
    // Dutch: /KEY/value/KEY/value…
    if joined.starts_with('/') && (joined.contains("/NAME/") || joined.contains("/REMI/")) {
        let value_of = |key: &str| {
            let start = joined.find(&format!("/{key}/"))? + key.len() + 2;
            let rest = &joined[start..];
            // The value runs until the next /UPPERCASE/ key.
            let end = rest
                .match_indices('/')
                .find(|(i, _)| {
                    let after = &rest[i + 1..];
                    after.find('/').is_some_and(|j| {
                        j > 1 && after[..j].chars().all(|c| c.is_ascii_uppercase())
                    })
                })
                .map_or(rest.len(), |(i, _)| i);
            Some(rest[..end].trim().to_owned()).filter(|s| !s.is_empty())
        };
        return (
            value_of("NAME"),
            value_of("REMI").or_else(|| Some(joined.clone())),
        );
    }
    (
        None,
        Some(text.split_whitespace().collect::<Vec<_>>().join(" ")).filter(|s| !s.is_empty()),
    )
}

pub fn parse(bytes: &[u8]) -> Result<Vec<Statement>, ReadError> {
    let structure = |text: &str| ReadError::of_file(Reason::Structure(text.to_owned()));
    let text = decode(bytes).replace("\r\n", "\n").replace('\r', "\n");
    let messages = fields(&unjoin_lines(&text));
    if messages.is_empty() {
        return Err(structure(
            "no MT940/MT942 field (:20:, :25:, :61:…) in the file",
        ));
    }
    // A message of nothing but a reference (a trailing bare `:20:`) is no
    // statement.
    let statements: Vec<&Vec<Field>> = messages
        .iter()
        .filter(|fields| {
            fields
                .iter()
                .any(|f| !matches!(f.tag.as_str(), "20" | "28C" | "28"))
        })
        .collect();
    if statements.is_empty() {
        return Err(structure(
            "the file holds no statement: only references (:20:), no account, balance or transaction",
        ));
    }
    statements
        .into_iter()
        .enumerate()
        .map(|(n, fields)| statement(fields, n + 1))
        .collect()
}

fn statement(fields: &[Field], _number: usize) -> Result<Statement, ReadError> {
    let interim = fields
        .iter()
        .any(|f| f.tag == "13D" || f.tag.starts_with("34") || f.tag.starts_with("90"));
    let (given_account, account_currency) = fields
        .iter()
        .find(|f| f.tag == "25")
        .map(|f| account_and_currency(&f.value.replace('\n', "")))
        .filter(|(a, _)| !a.is_empty())
        .map_or((None, None), |(a, c)| (Some(a), c));
    let account = given_account.clone().unwrap_or_default();
    let find = |tags: &[&str]| fields.iter().find(|f| tags.contains(&f.tag.as_str()));
    let mut notes = Vec::new();
    // A balance that cannot be read is left out: it never costs the
    // statement's lines.
    let mut balance_of = |tags: &[&str]| {
        let field = find(tags)?;
        balance(field)
            .map_err(|err| notes.push(err.left_out("the balance")))
            .ok()
    };
    let opening = balance_of(&["60F", "60M"]);
    let closing = balance_of(&["62F", "62M"]);
    let available = balance_of(&["64"]);
    // The currency: from a balance, else the account field (`NL..EUR`).
    let currency = [&opening, &closing, &available]
        .into_iter()
        .find_map(|b| b.as_ref().and_then(|b| b.2.clone()))
        .or_else(|| find(&["34F"]).and_then(|f| f.value.get(..3).map(str::to_owned)))
        .or(account_currency)
        // ISO 4217's "no currency", for snippets that state none.
        .unwrap_or_else(|| "XXX".to_owned());

    let mut records = Vec::new();
    let mut identities = Vec::new();
    for (index, field) in fields.iter().enumerate() {
        if field.tag != "61" {
            continue;
        }
        let line = match statement_line(field) {
            Ok(line) => line,
            Err(err) => {
                notes.push(err.left_out("the statement line"));
                continue;
            }
        };
        let detail = fields
            .get(index + 1)
            .filter(|f| f.tag == "86")
            .map(|f| f.value.as_str())
            .unwrap_or_default();
        let (merchant, description) = details(detail);
        // Without details, the line's own texts describe it: its
        // supplementary details, else its references (`Till kortkto`), so
        // that a record with any text never reads back without one.
        let description = description
            .or_else(|| line.supplementary.clone())
            .or_else(|| line.customer_reference.clone())
            .or_else(|| line.bank_reference.clone());
        let day = line.entry_date.unwrap_or(line.value_date);
        // MT940 references are the bank's or the customer's, unique within
        // neither a statement nor an account: they only add to the text.
        identities.push(EntryIdentity {
            reference: None,
            date: day,
            amount: line.amount,
            text: identity_text(&[
                line.customer_reference.as_deref(),
                line.bank_reference.as_deref(),
                line.supplementary.as_deref(),
                Some(detail),
            ]),
        });
        records.push(SnapshotTransaction {
            provider_id: String::new(),
            pending_provider_id: None,
            is_pending: interim,
            date: day,
            amount: line.amount,
            currency: currency.clone(),
            merchant,
            description,
            hints: business_code(detail),
        });
    }
    for (record, id) in records.iter_mut().zip(entry_ids(&account, &identities, "")) {
        record.provider_id = id;
    }
    let closing_for_balance = closing.as_ref().or(available.as_ref());
    // A snippet without :25: goes to one account per currency, named so
    // the user can tell (as camt files without <Acct> do).
    let account_name = given_account
        .is_none()
        .then(|| format!("Imported {currency} account (the file names no account)"));
    Ok(Statement {
        account_id: given_account.unwrap_or_else(|| format!("unidentified-{currency}")),
        account_name,
        kind: AccountKind::Checking,
        currency: currency.clone(),
        transactions: records,
        opening_booked: opening.as_ref().map(|b| b.0),
        opening_date: opening.as_ref().map(|b| b.1),
        closing_booked: closing.as_ref().map(|b| b.0),
        balance: closing_for_balance.map(|(amount, day, _)| SnapshotBalance {
            current: *amount,
            available: available.as_ref().map(|a| a.0),
            currency,
            as_of: day.and_time(chrono::NaiveTime::MIN).and_utc(),
        }),
        holdings: None,
        investment_transactions: Vec::new(),
        servicer: None,
        notes,
        currency_assumed: Vec::new(),
        legacy_ids: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_storage::testing::testdata_bytes;

    /// An MT942 interim report as some banks export it: every line joined
    /// with `@@`, a narrative over two lines.
    const JOINED_MT942: &str = ":20:MT942-0001@@:25:NL91ABNA0417164300@@:28C:7/1@@:34F:EURD0,00@@:13D:2601051200+0100@@:61:2601050105D12,50NMSCNONREF//B1@@:86:Albert Heijn 1234@@Amsterdam@@:61:2601050105C2000,00NTRFNONREF//B2@@:86:Salaris januari@@:90D:1EUR12,50@@:90C:1EUR2000,00@@-";

    #[test]
    fn lines_joined_with_at_signs_read_as_lines() {
        assert_eq!(
            super::super::detect(JOINED_MT942.as_bytes()),
            Some(super::super::Format::Mt940)
        );
        let statements = parse(JOINED_MT942.as_bytes()).unwrap();
        let t = &statements[0].transactions;
        assert_eq!(statements[0].account_id, "NL91ABNA0417164300");
        assert_eq!(t.len(), 2);
        assert_eq!(
            t.iter().map(|t| t.amount).sum::<Decimal>().to_string(),
            "1987.50"
        );
        assert!(
            t[0].description
                .as_deref()
                .is_some_and(|d| d.contains("Albert Heijn 1234") && d.contains("Amsterdam")),
            "{:?}",
            t[0].description
        );
        // `@@` in a narrative of a file with line breaks stays text.
        let plain = ":20:REF\n:25:NL91ABNA0417164300\n:28C:1\n:60F:C260104EUR0,00\n:61:2601050105D1,00NMSCNONREF\n:86:mail me @@ home\n:62F:D260105EUR1,00\n";
        let t = &parse(plain.as_bytes()).unwrap()[0].transactions;
        assert_eq!(t[0].description.as_deref(), Some("mail me @@ home"));
    }

    #[test]
    fn a_line_without_details_is_described_by_its_own_texts() {
        let file = ":20:R\n:25:DE89370400440532013000\n:28C:1\n:60F:C260104EUR0,00\n:61:2601050105D12,50NMSCTill kortkonto//B1\n:61:2601050105D1,00NMSCNONREF\n:86:079?00SAMMLER?109800\n:62F:D260105EUR13,50\n";
        let t = &parse(file.as_bytes()).unwrap()[0].transactions;
        assert_eq!(t[0].description.as_deref(), Some("Till kortkonto"));
        assert_eq!(t[1].description.as_deref(), Some("SAMMLER"));
    }

    #[test]
    fn the_business_code_is_kept_as_a_hint() {
        use tributary_domain::enrich::hints::CategoryHint;
        let file = ":20:R\n:25:DE89370400440532013000\n:28C:1\n:60F:C260104EUR0,00\n:61:2601050105C2500,00NMSCNONREF\n:86:153?00LOHN GEHALT?20Gehalt Mai?32ACME GMBH\n:61:2601050105D1,00NMSCNONREF\n:86:no code here\n:62F:C260105EUR2499,00\n";
        let t = &parse(file.as_bytes()).unwrap()[0].transactions;
        assert_eq!(t[0].hints.0, vec![CategoryHint::Gvc(153)]);
        assert_eq!(t[0].hints.subcategory(t[0].amount), Some("income.salary"));
        assert!(t[1].hints.is_empty());
    }

    fn files() -> Vec<String> {
        let mut files = tributary_storage::testing::testdata_files("mt940-wolph", &["sta", "txt"]);
        files.push("actualbudget/mt940/data.sta".to_owned());
        files
    }

    #[test]
    fn every_mt940_file_reads_or_fails_clearly() {
        let files = files();
        assert!(files.len() >= 50, "{}", files.len());
        let mut read = 0;
        for file in &files {
            match parse(&testdata_bytes(file)) {
                Ok(statements) => {
                    assert!(!statements.is_empty(), "{file}");
                    read += 1;
                }
                Err(err) => {
                    let meant_broken = ["invalid", "broken", "empty_non_swift", "malformed"];
                    // Files of a bare `:20:` (empty_line.sta, reference.sta)
                    // hold no statement.
                    assert!(
                        meant_broken.iter().any(|b| file.contains(b))
                            || err.to_string().contains("holds no statement"),
                        "{file}: {err}"
                    );
                    assert!(
                        err.to_string().contains("line")
                            || err.to_string().contains("statement")
                            || err.to_string().contains("no MT940"),
                        "{file}: {err}"
                    );
                }
            }
        }
        assert!(read >= 45, "{read} files read");
    }

    #[test]
    fn abn_amro_statement_reads() {
        // (Its anonymised figures do not balance: 3236.28 − 321.44 ≠ 876.84.)
        let statements = parse(&testdata_bytes("mt940-wolph/jejik/abnamro.sta")).unwrap();
        let first = &statements[0];
        assert_eq!(first.account_id, "517852257");
        assert_eq!(first.currency, "EUR");
        assert_eq!(first.transactions.len(), 8);
        assert_eq!(
            (
                first.opening_booked.unwrap().to_string(),
                first.closing_booked.unwrap().to_string()
            ),
            ("3236.28".into(), "876.84".into())
        );
        assert_eq!(first.transactions[0].amount.to_string(), "-9");
        assert!(
            first.transactions[0]
                .description
                .as_deref()
                .unwrap()
                .contains("KPN - DIGITENNE"),
            "wrapped :86: lines join"
        );
    }

    #[test]
    fn german_structured_details_give_name_and_purpose() {
        let (name, purpose) =
            details("166?00SEPA-UEBERWEISUNG?20EREF+123?21Miete Mai?32Max Muster?33mann");
        assert_eq!(name.as_deref(), Some("Max Mustermann"));
        assert_eq!(purpose.as_deref(), Some("EREF+123Miete Mai"));
        let (name, purpose) = details(
            "/TRTP/SEPA OVERBOEKING/IBAN/NL12ABNA0123456789/BIC/ABNANL2A/NAME/J. Jansen/REMI/Huur juni/EREF/NOTPROVIDED",
        );
        assert_eq!(name.as_deref(), Some("J. Jansen"));
        assert_eq!(purpose.as_deref(), Some("Huur juni"));
    }

    #[test]
    fn interim_reports_are_pending() {
        let statements = parse(&testdata_bytes("mt940-wolph/mBank/mt942.sta")).unwrap();
        assert!(
            statements
                .iter()
                .flat_map(|s| &s.transactions)
                .all(|t| t.is_pending)
        );
        assert!(statements.iter().any(|s| !s.transactions.is_empty()));
    }

    #[test]
    fn odd_dates_and_missing_final_newline_degrade_gently() {
        assert!(parse(&testdata_bytes("mt940-wolph/self-provided/february_30.sta")).is_ok());
        assert!(
            parse(&testdata_bytes(
                "mt940-wolph/betterplace/missing_crlf_at_end.sta"
            ))
            .is_ok()
        );
        assert_eq!(
            date("240230", &Place::new("t")).unwrap().to_string(),
            "2024-02-29"
        );
        assert!(date("241301", &Place::new("t")).is_err());
    }

    #[test]
    fn a_multibyte_character_after_the_value_date_is_no_panic() {
        // Found by `cargo fuzz run mt940`.
        let input =
            ":20:X\n:25:NL01\n:60F:C110101EUR1,00\n:61:110101012\u{df}D1,00NTRF\n".as_bytes();
        // The line is left out, named; the balance stays.
        let read = parse(input).unwrap();
        assert!(read[0].transactions.is_empty());
        assert!(
            read[0].notes[0].starts_with("line 4 (:61:)"),
            "{:?}",
            read[0].notes
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for input in [
            &b""[..],
            b"hello",
            b":20:X\n:25:\n",
            b":20:X\n:25:\n:60F:Z\n",
            b"\xff\xfe:61:",
        ] {
            // Through the public entry, which also refuses a statement that
            // names no account and states nothing.
            let error = crate::import::parse(input, Some(crate::import::Format::Mt940))
                .expect_err(&String::from_utf8_lossy(input));
            assert!(
                matches!(
                    error,
                    crate::import::ImportError::Unreadable {
                        format: crate::import::Format::Mt940,
                        ..
                    } | crate::import::ImportError::NothingToImport
                ),
                "{error:?}"
            );
        }
        // A balance that cannot be read is left out, named, not the file.
        let read = parse(b":20:X\n:25:NL01\n:60F:Z\n:61:2601050105D1,00NMSCNONREF\n").unwrap();
        assert_eq!(read[0].transactions.len(), 1);
        assert_eq!(read[0].opening_booked, None);
        assert_eq!(
            read[0].notes,
            [
                "line 3 (:60F:): the balance's mark is `Z`, not C or D: the balance is left out, the rest is imported"
            ]
        );
    }

    #[test]
    fn a_wrapped_line_that_is_a_dash_does_not_end_the_statement() {
        let file =
            testdata_bytes("zilverline-mt940/spec/fixtures/rabobank/dash_as_start_of_line.txt");
        let statements = parse(&file).unwrap();
        assert_eq!(statements.len(), 1);
        assert_eq!(statements[0].account_id, "NL84RABO01212121212");
        assert_eq!(statements[0].currency, "EUR");
        assert_eq!(
            statements[0].closing_booked.unwrap().to_string(),
            "11000.50"
        );
    }

    #[test]
    fn currency_suffixes_leave_account_ids_and_a_bare_reference_is_no_statement() {
        let file = ":20:STMT\n:25:NL54INGB0001234500EUR\n:28C:1\n:60F:C260101EUR1,00\n\
                    :61:2601020102D1,00NTRFNONREF\n:62F:C260102EUR0,00\n-\n:20:TRAILING\n";
        let statements = parse(file.as_bytes()).unwrap();
        assert_eq!(statements.len(), 1);
        assert_eq!(statements[0].account_id, "NL54INGB0001234500");
        let snapshot = statements[0].clone().into_snapshot();
        assert_eq!(snapshot.accounts[0].mask.as_deref(), Some("4500"));
    }
}

#[cfg(test)]
mod identity {
    use super::*;
    use std::collections::{BTreeMap, HashSet};
    use tributary_storage::testing::{testdata_bytes, testdata_files};

    /// Every shared MT940 file whose `:61:` references repeat within one
    /// account on entries that are not the same (another date, amount or
    /// text): keyed by reference alone, these merged into one row.
    fn reused_references() -> BTreeMap<String, usize> {
        let mut files = Vec::new();
        for dir in [
            "mt940-wolph",
            "mt940-rs",
            "zilverline-mt940",
            "actualbudget",
        ] {
            files.extend(testdata_files(dir, &["sta", "txt", "940", "mt940"]));
        }
        let mut found = BTreeMap::new();
        for file in files {
            let Ok(text) = std::str::from_utf8(&testdata_bytes(&file)).map(str::to_owned) else {
                continue;
            };
            let text = text.replace("\r\n", "\n");
            let mut seen: BTreeMap<(String, String), HashSet<String>> = BTreeMap::new();
            for message in fields(&text) {
                let account = message
                    .iter()
                    .find(|f| f.tag == "25")
                    .map(|f| f.value.clone())
                    .unwrap_or_default();
                for (index, field) in message.iter().enumerate() {
                    let Some(line) = (field.tag == "61")
                        .then(|| statement_line(field).ok())
                        .flatten()
                    else {
                        continue;
                    };
                    let detail = message.get(index + 1).filter(|f| f.tag == "86");
                    let entry = format!("{}\n{:?}", field.value, detail.map(|d| &d.value));
                    for reference in [line.customer_reference, line.bank_reference]
                        .into_iter()
                        .flatten()
                    {
                        seen.entry((account.clone(), reference))
                            .or_default()
                            .insert(entry.clone());
                    }
                }
            }
            let merged: usize = seen.values().map(|e| e.len().saturating_sub(1)).sum();
            if merged > 0 {
                found.insert(file, merged);
            }
        }
        found
    }

    /// Why references repeat in the shared files, by what the field holds.
    const PLACEHOLDER: &str =
        "the reference subfield holds a placeholder (`EREF`, `KREF+`, `N`), not a reference";
    const COUNTERPARTY: &str = "the bank puts the counterparty's account number in the reference: every transfer with one counterparty shares it";
    const BATCH: &str = "the bank's reference names a batch or message (`TFNr … MSGID`, `//55555`, `//1234`), shared by its entries and across statements";

    /// Every shared file where references repeat on distinct entries, and why.
    const REUSED: &[(&str, &[&str])] = &[
        (
            "mt940-rs/tests/data/mt940/full/betterplace/sepa_mt9401.sta",
            &[PLACEHOLDER, BATCH],
        ),
        ("mt940-rs/tests/data/mt940/full/cmxl/mt940_1.sta", &[BATCH]),
        (
            "mt940-rs/tests/data/mt940/full/danskebank/MT940_DK_Example.sta",
            &[BATCH],
        ),
        (
            "mt940-rs/tests/data/mt940/full/danskebank/MT940_FI_Example.sta",
            &[BATCH],
        ),
        (
            "mt940-rs/tests/data/mt940/full/danskebank/MT940_NO_Example.sta",
            &[BATCH],
        ),
        (
            "mt940-rs/tests/data/mt940/full/danskebank/MT940_SE_Example.sta",
            &[BATCH],
        ),
        (
            "mt940-rs/tests/data/mt942/full/mBank/mt942.sta",
            &[PLACEHOLDER],
        ),
        ("mt940-wolph/ASNB/mt940.txt", &[COUNTERPARTY]),
        (
            "mt940-wolph/ASNB/mt940_with_spaces_for_entry_date.txt",
            &[COUNTERPARTY],
        ),
        (
            "mt940-wolph/betterplace/sepa_mt9401.sta",
            &[PLACEHOLDER, BATCH],
        ),
        ("mt940-wolph/betterplace/sepa_snippet.sta", &[PLACEHOLDER]),
        ("mt940-wolph/cmxl/mt940.sta", &[PLACEHOLDER, BATCH]),
        ("mt940-wolph/jejik/postfinance.sta", &[BATCH]),
        ("mt940-wolph/jejik/rabobank-iban.sta", &[PLACEHOLDER]),
        ("mt940-wolph/jejik/sns.sta", &[COUNTERPARTY]),
        ("mt940-wolph/sberbank/171011_01234945.sta", &[PLACEHOLDER]),
        (
            "zilverline-mt940/spec/fixtures/abn/moneyou.txt",
            &[COUNTERPARTY],
        ),
        (
            "zilverline-mt940/spec/fixtures/import-16-06-2014.txt",
            &[PLACEHOLDER],
        ),
        (
            "zilverline-mt940/spec/fixtures/ing_structured.txt",
            &[BATCH],
        ),
        (
            "zilverline-mt940/spec/fixtures/rabobank.txt",
            &[COUNTERPARTY],
        ),
        (
            "zilverline-mt940/spec/fixtures/rabobank_mt940_structured.txt",
            &[PLACEHOLDER],
        ),
        (
            "zilverline-mt940/spec/fixtures/rabobank_mt940_structured_multi_line.txt",
            &[PLACEHOLDER],
        ),
        (
            "zilverline-mt940/spec/fixtures/sns/sns.txt",
            &[COUNTERPARTY],
        ),
        (
            "zilverline-mt940/spec/fixtures/van_lanschot/van_lanschot.txt",
            &[COUNTERPARTY],
        ),
    ];

    #[test]
    fn every_reused_reference_in_the_shared_files_is_listed_and_its_entries_stay_apart() {
        let reused = reused_references();
        let listed: Vec<&str> = REUSED.iter().map(|(file, _)| *file).collect();
        let found: Vec<&str> = reused.keys().map(String::as_str).collect();
        assert_eq!(found, listed, "files whose references repeat: {reused:#?}");
        for (file, merged) in &reused {
            let statements = parse(&testdata_bytes(file)).unwrap();
            let key = |t: &SnapshotTransaction| {
                format!(
                    "{}|{}|{:?}|{:?}",
                    t.date, t.amount, t.merchant, t.description
                )
            };
            let ids: HashSet<(&str, &str)> = statements
                .iter()
                .flat_map(|s| {
                    s.transactions
                        .iter()
                        .map(|t| (s.account_id.as_str(), t.provider_id.as_str()))
                })
                .collect();
            let entries: HashSet<(&str, String)> = statements
                .iter()
                .flat_map(|s| {
                    s.transactions
                        .iter()
                        .map(|t| (s.account_id.as_str(), key(t)))
                })
                .collect();
            assert!(
                ids.len() >= entries.len(),
                "{file}: {merged} entries sharing a reference merged"
            );
        }
    }
}
