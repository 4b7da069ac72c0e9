use super::hints::{CategoryHint, Hints};
use super::keywords::KEYWORDS;
use super::merchants::MERCHANTS;
use super::*;
use crate::taxonomy::Subcategory;

fn merchant(provider: Option<&str>, description: &str) -> Option<String> {
    merchant::clean(provider, Some(description).filter(|d| !d.is_empty())).map(|p| p.name)
}

fn category(description: &str, amount: i64) -> (&'static str, Source) {
    let hints = Hints::default();
    let e = enrich(&Raw {
        merchant: None,
        description: Some(description),
        amount: Decimal::new(amount, 0),
        hints: &hints,
    });
    (e.subcategory.id, e.source)
}

#[test]
fn the_issues_examples_read_as_people_write_them() {
    assert_eq!(
        merchant(None, "CARD 4411 SQ *BLUE BOTTLE 12/03 OAKLAND CA").as_deref(),
        Some("Blue Bottle")
    );
    assert_eq!(
        merchant(
            None,
            "NL08ABNA9999999999 international card services 0000000000 Betaling aan I CS \
             99999999999 ICS Referentie: 2020-01-31 21:27"
        )
        .as_deref(),
        Some("International Card Services")
    );
    // Only wrapping: the text itself, never null.
    assert_eq!(
        merchant(None, "SEPA-Basislastschrift").as_deref(),
        Some("SEPA-Basislastschrift")
    );
    // The provider's counterparty wins over the text.
    assert_eq!(
        merchant(Some("STADTWERKE MUENCHEN GMBH"), "SEPA-Basislastschrift").as_deref(),
        Some("Stadtwerke Muenchen")
    );
}

#[test]
fn wrappers_numbers_and_legal_forms_are_taken_off() {
    for (text, name) in [
        ("PAYPAL *NETFLIX 4029357733 NL", "Netflix"),
        ("SumUp *Bäckerei Schmidt Berlin", "Bäckerei Schmidt Berlin"),
        ("ZETTLE_*KAFFEEBAR 3", "Kaffeebar"),
        ("AMAZON.COM*AB12CD34E AMZN.COM/BILL WA", "Amazon"),
        ("AMZN Mktp DE*2X4YZ", "Amazon"),
        (
            "BEA NR:XXXX 01.02.20/12.34 ALBERT HEIJN 1234,PAS123",
            "Albert Heijn",
        ),
        (
            "/TRTP/SEPA OVERBOEKING/IBAN/NL12ABNA0123456789/BIC/ABNANL2A/NAME/J. DE VRIES/REMI/huur",
            "J. de Vries",
        ),
        (
            "Naam: Coolblue B.V. Omschrijving: order 123 IBAN: NL12ABNA0123456789",
            "Coolblue",
        ),
        ("KARTENZAHLUNG girocard 2024-05-03 REWE Markt GmbH", "Rewe"),
        ("COMPRA TARJETA 1234 MERCADONA VALENCIA", "Mercadona"),
        // The place joined by a hyphen, and the word for card after it.
        (
            "COMPRA TARJETA 0648 RESTAURANTE CASA PEPE-MADRID",
            "Restaurante Casa Pepe",
        ),
        (
            "FACTURE CARTE DU 060124 CINEMA LE CHAMPO LILLE CARTE 4974XXXXXXXX5749",
            "Cinema le Champo",
        ),
        // A hyphen inside a name stays.
        ("SQ *COCA-COLA STORE", "Coca-Cola Store"),
        ("Vodafone GmbH", "Vodafone"),
        ("KPN B.V.", "KPN"),
        ("bol.com", "bol.com"),
    ] {
        assert_eq!(merchant(None, text).as_deref(), Some(name), "{text}");
    }
}

#[test]
fn a_record_without_text_has_no_merchant() {
    assert_eq!(merchant(None, ""), None);
    assert_eq!(merchant(Some("  "), "   "), None);
}

#[test]
fn a_bank_transfer_of_ones_own_in_french_is_one() {
    assert_eq!(
        category("VIR INTERNE VERS LDDS", -15_369).0,
        "transfer.own_accounts"
    );
}

#[test]
fn categories_come_from_codes_then_merchants_then_keywords() {
    let hints = Hints(vec![CategoryHint::Mcc(5812)]);
    let e = enrich(&Raw {
        merchant: Some("ALBERT HEIJN 1234"),
        description: None,
        amount: Decimal::new(-12, 0),
        hints: &hints,
    });
    assert_eq!(
        (e.subcategory.id, e.source),
        ("food_and_drink.restaurants", Source::Provider)
    );
    assert_eq!(e.merchant.as_deref(), Some("Albert Heijn"));

    assert_eq!(
        category("ALBERT HEIJN 1234 AMSTERDAM", -30),
        ("groceries.supermarkets", Source::Merchant)
    );
    assert_eq!(
        category("Miete Mai Wohnung 3", -900),
        ("housing.rent", Source::Keyword)
    );
    assert_eq!(
        category("Loyer juin", -700),
        ("housing.rent", Source::Keyword)
    );
    assert_eq!(
        category("Gehalt Mai ACME", 3000),
        ("income.salary", Source::Keyword)
    );
    // A salary keyword on money going out is not income.
    assert_ne!(category("Gehalt Mai ACME", -3000).0, "income.salary");
    assert_eq!(category("Zinsen", 3).0, "income.interest");
    assert_eq!(category("Zinsen", -3).0, "fees_and_charges.interest");
    assert_eq!(
        category("Prélèvement Électricité EDF", -60).0,
        "utilities.electricity"
    );
    assert_eq!(category("xyz 42", -5), (UNCATEGORIZED, Source::Nothing));
}

#[test]
fn every_table_entry_names_a_subcategory_that_exists() {
    for k in KEYWORDS {
        assert!(Subcategory::from_id(k.subcategory).is_some(), "{}", k.word);
        assert_eq!(
            fold(&[Some(k.word)]).trim(),
            k.word,
            "keywords are written folded"
        );
    }
    for m in MERCHANTS {
        if let Some(id) = m.subcategory {
            assert!(Subcategory::from_id(id).is_some(), "{}", m.name);
        }
        for s in m.spellings {
            assert_eq!(fold(&[Some(s)]).trim(), *s, "spellings are written folded");
        }
    }
    assert!(Subcategory::from_id(UNCATEGORIZED).is_some());
}

#[test]
fn folding_drops_case_accents_and_punctuation() {
    assert_eq!(
        fold(&[Some("Bäckerei-Müller, Straße"), Some("É")]),
        " backerei muller strasse \u{1} e "
    );
}

#[test]
fn labels_are_whole_words_of_the_text() {
    use super::merchant::label;
    assert_eq!(
        label("  Transfer to   Holiday Fund ").as_deref(),
        Some("Transfer to Holiday Fund")
    );
    assert_eq!(
        label("SEPA Überweisung an Stadtwerke München GmbH Abschlag November").as_deref(),
        Some("SEPA Überweisung an Stadtwerke München")
    );
    assert_eq!(label(&"x".repeat(60)).map(|l| l.len()), Some(40));
    assert_eq!(label(" \n "), None);
}

#[test]
fn no_keyword_spans_the_merchant_and_the_description() {
    // `… Savings` then `Transfer …` is not "savings transfer".
    let hints = Hints::default();
    let e = enrich(&Raw {
        merchant: Some("High-Yield Savings"),
        description: Some("Transfer to High-Yield Savings"),
        amount: Decimal::new(-200, 0),
        hints: &hints,
    });
    assert_ne!(e.subcategory.id, "transfer.own_accounts");
}

#[test]
fn a_payment_service_gives_way_to_the_merchant_its_text_names() {
    assert_eq!(
        merchant(
            Some("PayPal (Europe) S.a.r.l. et"),
            "Cie., S.C.A.SEPA-BASISLASTSCHRIFT SVWZ+ . SPOTIFY, Ihr Einkauf bei SPOTIFY"
        )
        .as_deref(),
        Some("Spotify")
    );
    // Naming no merchant the table knows, it stays the service.
    assert_eq!(
        merchant(Some("PAYPAL"), "ABBUCHUNG VOM PAYPAL-KONTO").as_deref(),
        Some("PayPal")
    );
}
