//! Enrichment's agreement with hand-written labels of real statement
//! files (docs/enrichment.md, "Quality"): for each labelled record of the
//! shared test data, whether the clean merchant and the top-level category
//! are the ones a person wrote. Prints the figures; fails below the
//! targets (merchant 90%, category 85%).
//!
//! `cargo test -p tributary-providers --test enrichment_quality -- --nocapture`

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use tributary_domain::enrich::{Raw, enrich};
use tributary_providers::import;
use tributary_storage::testing::testdata_bytes;

const LABELS: &str = include_str!("data/enrichment-labels.tsv");

struct Label<'a> {
    file: &'a str,
    record: usize,
    merchant: &'a str,
    category: &'a str,
}

fn labels() -> Vec<Label<'static>> {
    LABELS
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(fields.len(), 4, "a label has four fields: {line}");
            Label {
                file: fields[0],
                record: fields[1].parse().unwrap(),
                merchant: fields[2],
                category: fields[3],
            }
        })
        .collect()
}

#[test]
fn enrichment_agrees_with_the_hand_written_labels() {
    let labels = labels();
    let mut files: HashMap<&str, Vec<_>> = HashMap::new();
    for label in &labels {
        files.entry(label.file).or_insert_with(|| {
            import::parse(&testdata_bytes(label.file), None)
                .unwrap_or_else(|err| panic!("{}: {err}", label.file))
                .into_iter()
                .flat_map(|statement| statement.transactions)
                .collect()
        });
    }
    let (mut merchants, mut categories) = (0, 0);
    let mut misses = Vec::new();
    for label in &labels {
        let t = &files[label.file][label.record - 1];
        let e = enrich(&Raw {
            merchant: t.merchant.as_deref(),
            description: t.description.as_deref(),
            amount: t.amount,
            hints: &t.hints,
        });
        let merchant = e.merchant.as_deref().unwrap_or_default();
        let category = e.subcategory.category.name();
        merchants += usize::from(merchant == label.merchant);
        categories += usize::from(category == label.category);
        if merchant != label.merchant || category != label.category {
            misses.push(format!(
                "{} #{}: {merchant:?} {category:?}, labelled {:?} {:?}",
                label.file, label.record, label.merchant, label.category
            ));
        }
    }
    let total = labels.len();
    let share = |n: usize| n as f64 / total as f64;
    eprintln!(
        "{total} labelled records: merchant {merchants} agree ({:.1}%), category {categories} agree ({:.1}%)\n{}",
        share(merchants) * 100.0,
        share(categories) * 100.0,
        misses.join("\n")
    );
    assert!(total >= 100, "{total} labels");
    assert!(share(merchants) >= 0.90, "merchant agreement below 90%");
    assert!(share(categories) >= 0.85, "category agreement below 85%");
}
