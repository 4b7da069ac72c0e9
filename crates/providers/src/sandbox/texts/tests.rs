use super::*;
use tributary_domain::taxonomy::Subcategory;

#[test]
fn the_same_seed_gives_the_same_records() {
    let a = generate(7, 300);
    let b = generate(7, 300);
    assert_eq!(a.len(), 300);
    for (a, b) in a.iter().zip(&b) {
        assert_eq!(a.transaction, b.transaction);
        assert_eq!(a.truth, b.truth);
    }
    let c = generate(8, 300);
    assert!(a.iter().zip(&c).any(|(a, c)| a.transaction != c.transaction));
}

#[test]
fn every_truth_is_a_subcategory_and_every_dialect_takes_its_turn() {
    let records = generate(1, 900);
    for record in &records {
        assert!(
            Subcategory::from_id(record.truth.subcategory).is_some(),
            "{}",
            record.truth.subcategory
        );
        assert!(record.transaction.description.as_deref().is_some_and(|d| !d.is_empty()));
        assert!(!record.transaction.amount.is_zero());
    }
    for dialect in Dialect::ALL {
        assert_eq!(records.iter().filter(|r| r.dialect == dialect).count(), 100);
    }
}

#[test]
fn ibans_carry_right_check_digits() {
    // The example IBAN of the German banking industry.
    assert_eq!(iban_check("DE", "370400440532013000"), 89);
    let mut g = Gen {
        rng: ChaCha8Rng::seed_from_u64(3),
    };
    let iban = g.iban("NL", "ABNA", 14);
    assert_eq!(iban.len(), 18);
    assert_eq!(iban_check("NL", &iban[4..]), iban[2..4].parse::<u32>().unwrap());
}

#[test]
fn bank_spellings_drop_or_transliterate_accents() {
    assert_eq!(upper("Bäckerei Schäfer", Style::German), "BAECKEREI SCHAEFER");
    assert_eq!(upper("Café de Flore", Style::Plain), "CAFE DE FLORE");
    assert_eq!(upper("João da Silva", Style::Accented), "JOÃO DA SILVA");
}
