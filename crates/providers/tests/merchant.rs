//! The wire rule that `merchant` is null only when a record carries no
//! text, over every statement file in the shared test data, every format:
//! a record that imports with neither merchant nor description must hold
//! no text the reader could have given.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use tributary_providers::import;
use tributary_storage::testing::{testdata_bytes, testdata_files};

const STATEMENT_EXTENSIONS: [&str; 11] = [
    "xml", "sta", "txt", "mt940", "940", "942", "ofx", "qfx", "csv", "STA", "OFX",
];

/// Records read from each file carry no text at all, checked by reading
/// the files: only a transaction type code, a `NONREF` and an empty `:86:`,
/// or a UETR (a machine UUID). Any other textless record fails the test.
const TEXTLESS: [(&str, usize); 5] = [
    // `:61:…NMSCNONREF` then an empty `:86:` (twice).
    ("mt940-wolph/jejik/generic.sta", 2),
    // `:61:…NMSCNONREF` and nothing after it.
    ("mt940-wolph/self-provided/gv_codes.sta", 1),
    // `:61:…NZ10NONREF`, no `:86:`.
    ("mt940-wolph/betterplace/empty_entry_date.sta", 1),
    // `:61:020322CM20000,00S051` and `…NCHG`: type codes only.
    ("mt940-wolph/self-provided/raphaelm.sta", 7),
    // An entry whose only detail is `Refs/UETR`.
    ("genkgo-camt/data/camt054.v8-with-UETR.xml", 1),
];

#[test]
fn every_record_with_text_reads_with_a_merchant_or_a_description() {
    let files = testdata_files("", &STATEMENT_EXTENSIONS);
    let (mut read, mut records, mut textless) = (0, 0, Vec::new());
    for file in &files {
        let Ok(statements) = import::parse(&testdata_bytes(file), None) else {
            continue;
        };
        read += 1;
        for statement in statements {
            for t in statement.transactions {
                records += 1;
                if t.merchant.is_none() && t.description.is_none() {
                    textless.push(format!("{file}: {} {}", t.date, t.amount));
                }
            }
        }
    }
    eprintln!("{read} files read, {records} records");
    assert!(
        read >= 200 && records >= 1000,
        "{read} files, {records} records"
    );
    let mut unexpected = textless.clone();
    for (file, count) in TEXTLESS {
        let found = textless
            .iter()
            .filter(|record| record.starts_with(&format!("{file}: ")))
            .count();
        assert_eq!(
            found,
            count,
            "{file}: textless records\n{}",
            textless.join("\n")
        );
        unexpected.retain(|record| !record.starts_with(&format!("{file}: ")));
    }
    assert!(
        unexpected.is_empty(),
        "records with text read back with neither merchant nor description:\n{}",
        unexpected.join("\n")
    );
}
