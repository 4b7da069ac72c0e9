//! NUL characters in a statement's text. A file is what a bank wrote, not
//! what a person typed, so it is not refused for them (as a request field
//! is, docs/errors.md `CONTROL_CHARACTER`): they are dropped from every
//! text the statement stores, and the import's notes say how many, so
//! nobody wonders why a description is shorter than in the file
//! (docs/imports.md). PostgreSQL cannot store NUL in text at all; SQLite
//! could, and both backends keep the same.

use super::statement::Statement;
use tributary_domain::snapshot::{Security, SnapshotTransaction};

/// `statement` without NUL in any of its texts, with a note when there
/// were some.
pub(crate) fn without_nul(mut statement: Statement) -> Statement {
    let removed = strip_statement(&mut statement);
    if removed > 0 {
        let note = note(&statement.account_id, removed);
        statement.notes.push(note);
    }
    statement
}

/// The note on `removed` NUL characters left out of an account's texts.
pub(crate) fn note(account: &str, removed: usize) -> String {
    format!(
        "account {account}: the file held {removed} NUL character(s) in its text, which were left out"
    )
}

/// Drops NUL from every text of the statement and its transactions; how
/// many there were.
pub(crate) fn strip_statement(statement: &mut Statement) -> usize {
    let mut removed = 0;
    let mut strip = |text: &mut String| removed += drop_nul(text);
    strip(&mut statement.account_id);
    strip(&mut statement.currency);
    statement.account_name.iter_mut().for_each(&mut strip);
    statement.servicer.iter_mut().for_each(&mut strip);
    let strip_security = |security: &mut Security, strip: &mut dyn FnMut(&mut String)| {
        strip(&mut security.name);
        strip(&mut security.currency);
        for identifier in [
            &mut security.ticker,
            &mut security.figi,
            &mut security.cusip,
            &mut security.isin,
        ] {
            identifier.iter_mut().for_each(&mut *strip);
        }
    };
    for holding in statement.holdings.iter_mut().flatten() {
        strip(&mut holding.currency);
        strip_security(&mut holding.security, &mut strip);
        strip_json(&mut holding.raw, &mut strip);
    }
    for activity in &mut statement.investment_transactions {
        strip(&mut activity.provider_id);
        strip(&mut activity.currency);
        activity.subtype.iter_mut().for_each(&mut strip);
        activity.description.iter_mut().for_each(&mut strip);
        if let Some(security) = &mut activity.security {
            strip_security(security, &mut strip);
        }
        strip_json(&mut activity.raw, &mut strip);
    }
    removed
        + statement
            .transactions
            .iter_mut()
            .map(strip_transaction)
            .sum::<usize>()
}

/// Drops NUL from a transaction's texts; how many there were.
pub(crate) fn strip_transaction(transaction: &mut SnapshotTransaction) -> usize {
    let mut removed = 0;
    let mut strip = |text: &mut String| removed += drop_nul(text);
    strip(&mut transaction.provider_id);
    strip(&mut transaction.currency);
    transaction
        .pending_provider_id
        .iter_mut()
        .for_each(&mut strip);
    transaction.merchant.iter_mut().for_each(&mut strip);
    transaction.description.iter_mut().for_each(&mut strip);
    removed
}

fn drop_nul(text: &mut String) -> usize {
    let before = text.len();
    if text.contains('\0') {
        text.retain(|c| c != '\0');
    }
    before - text.len()
}

/// Every key and string of a JSON value (a holding's `raw` record).
fn strip_json(value: &mut serde_json::Value, strip: &mut impl FnMut(&mut String)) {
    use serde_json::Value;
    match value {
        Value::String(text) => strip(text),
        Value::Array(items) => items.iter_mut().for_each(|item| strip_json(item, strip)),
        Value::Object(fields) => {
            let taken = std::mem::take(fields);
            for (mut key, mut item) in taken {
                strip(&mut key);
                strip_json(&mut item, strip);
                fields.insert(key, item);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::import::{Format, parse};

    /// A CSV file with NUL in a description and the account's name reads,
    /// without them, and says so.
    #[test]
    fn nul_in_a_statement_file_is_dropped_with_a_note() {
        let file = "Date,Description,Amount\n2026-01-02,Coffee\0 shop,-3.50\n2026-01-03,Sal\0\0ary,100.00\n";
        let statements = parse(file.as_bytes(), Some(Format::Csv)).expect("reads");
        let texts: Vec<String> = statements
            .iter()
            .flat_map(|s| &s.transactions)
            .filter_map(|t| t.description.clone())
            .collect();
        assert_eq!(texts, ["Coffee shop", "Salary"]);
        let notes: Vec<&String> = statements.iter().flat_map(|s| &s.notes).collect();
        assert!(
            notes
                .iter()
                .any(|n| n.contains("3 NUL character(s) in its text, which were left out")),
            "{notes:?}"
        );
        assert!(statements.iter().all(|s| !format!("{s:?}").contains("\\0")));
    }

    #[test]
    fn a_statement_without_nul_gets_no_note() {
        let file = "Date,Description,Amount\n2026-01-02,Coffee,-3.50\n";
        let statements = parse(file.as_bytes(), Some(Format::Csv)).expect("reads");
        let notes: Vec<&String> = statements.iter().flat_map(|s| &s.notes).collect();
        assert!(notes.iter().all(|n| !n.contains("NUL")), "{notes:?}");
    }
}
