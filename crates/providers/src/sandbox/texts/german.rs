//! German texts: the narratives of bank exports (SEPA-Basislastschrift
//! with EREF+/MREF+/CRED+/SVWZ+, Gutschrift, Lohn/Gehalt, Dauerauftrag,
//! girocard payments, Geldautomat, Abschluss), and the same transactions
//! as MT940 `:86:` fields: a business transaction code, `?00` booking
//! text, `?20`..`?29` remittance, `?30` BIC, `?31` IBAN and the name in
//! `?32`, continued in `?33`.

use super::{Gen, Party, Style, Text, p, typical_cents};
use tributary_domain::enrich::hints::CategoryHint;

const MONTHS: [&str; 12] = [
    "Januar",
    "Februar",
    "Maerz",
    "April",
    "Mai",
    "Juni",
    "Juli",
    "August",
    "September",
    "Oktober",
    "November",
    "Dezember",
];

/// Shops paid by girocard: the name, and the company name on the
/// terminal where it differs from capitals.
const SHOPS: &[Party] = &[
    p("Rewe", "REWE Markt GmbH", "groceries.supermarkets", 5411),
    p("Edeka", "EDEKA CENTER", "groceries.supermarkets", 5411),
    p("Lidl", "LIDL DIENSTL", "groceries.supermarkets", 5411),
    p("Aldi", "ALDI SUED", "groceries.supermarkets", 5411),
    p("Netto", "NETTO MARKEN-DISCOUNT", "groceries.supermarkets", 5411),
    p("Kaufland", "", "groceries.supermarkets", 5411),
    p("Penny", "PENNY MARKT", "groceries.supermarkets", 5411),
    p("dm", "DM-DROGERIE MARKT", "health.pharmacy", 5912),
    p("Rossmann", "ROSSMANN", "health.pharmacy", 5912),
    p("Aral", "ARAL STATION", "transport.fuel", 5541),
    p("Shell", "SHELL", "transport.fuel", 5541),
    p("MediaMarkt", "MEDIA MARKT", "shopping.electronics", 5732),
    p("IKEA", "IKEA DEUTSCHLAND", "shopping.home", 5712),
    p("Hornbach", "HORNBACH BAUMARKT AG", "shopping.home", 5200),
    p("OBI", "OBI BAUMARKT", "shopping.home", 5200),
    p("H&M", "H&M", "shopping.clothing", 5651),
    p("Decathlon", "DECATHLON DEUTSCHLAND", "shopping.other", 5941),
    p("Deutsche Bahn", "DB Vertrieb GmbH", "transport.public", 4112),
    p("McDonald's", "MCDONALDS", "food_and_drink.fast_food", 5814),
    p("Burger King", "", "food_and_drink.fast_food", 5814),
    p("Bäckerei Schmidt", "", "food_and_drink.cafes", 5462),
    p("Backhaus Kamps", "", "food_and_drink.cafes", 5462),
    p("Metzgerei Huber", "", "groceries.specialty", 5422),
    p("Café Extrablatt", "", "food_and_drink.cafes", 5814),
    p("Pizzeria Da Luigi", "", "food_and_drink.restaurants", 5812),
    p("Gasthaus Zur Linde", "", "food_and_drink.restaurants", 5812),
    p("Apotheke am Markt", "", "health.pharmacy", 5912),
    p("Buchhandlung Lehmann", "", "education.books", 5942),
    p("Blumen Koch", "", "shopping.other", 5992),
    p("Zahnarztpraxis Dr. Klein", "", "health.dental", 8021),
    p("Kino Babylon", "", "entertainment.events", 7832),
    p("Eiscafe Venezia", "", "food_and_drink.cafes", 5814),
    p("Getränke Hoffmann", "", "groceries.specialty", 5921),
];

const CITIES: &[&str] = &[
    "Berlin",
    "Hamburg",
    "Muenchen",
    "Koeln",
    "Frankfurt",
    "Stuttgart",
    "Leipzig",
    "Dresden",
    "Hannover",
    "Nuernberg",
];

/// Who collects by direct debit: the name people write, how the creditor
/// names itself, what it is, and its remittance.
const CREDITORS: &[(Party, &str)] = &[
    (
        p("Vodafone", "Vodafone GmbH", "telecom_and_internet.mobile", 0),
        "Kundennummer # Rechnung vom #",
    ),
    (
        p(
            "Telekom",
            "Telekom Deutschland GmbH",
            "telecom_and_internet.internet",
            0,
        ),
        "Festnetz Kundenkonto # RG #",
    ),
    (
        p(
            "O2",
            "Telefonica Germany GmbH & Co. OHG",
            "telecom_and_internet.mobile",
            0,
        ),
        "Kd-Nr. # Mobilfunk Rechnung #",
    ),
    (
        p(
            "E.ON",
            "E.ON Energie Deutschland GmbH",
            "utilities.electricity",
            0,
        ),
        "Abschlag Strom Vertragskonto #",
    ),
    (
        p(
            "Vattenfall",
            "Vattenfall Europe Sales GmbH",
            "utilities.electricity",
            0,
        ),
        "Abschlag # Vertrag #",
    ),
    (
        p(
            "Stadtwerke München",
            "Stadtwerke Muenchen GmbH",
            "utilities.electricity",
            0,
        ),
        "Abschlag Strom Gas Vertragskonto #",
    ),
    (
        p(
            "Allianz",
            "Allianz Versicherungs-AG",
            "insurance.home",
            0,
        ),
        "Hausratversicherung Vers.-Nr. #",
    ),
    (
        p(
            "HUK-Coburg",
            "HUK-COBURG Allgemeine Versicherung AG",
            "insurance.vehicle",
            0,
        ),
        "Kfz-Versicherung Vertrag #",
    ),
    (
        p(
            "Techniker Krankenkasse",
            "Techniker Krankenkasse",
            "insurance.health",
            0,
        ),
        "Beitrag # Mitgliedsnr #",
    ),
    (
        p(
            "ARD ZDF Deutschlandradio Beitragsservice",
            "ARD ZDF Deutschlandradio Beitragsservice",
            "telecom_and_internet.tv_and_landline",
            0,
        ),
        "Rundfunkbeitrag Beitragsnummer #",
    ),
    (
        p(
            "Netflix",
            "Netflix International B.V.",
            "subscriptions.streaming",
            0,
        ),
        "Netflix Monthly Subscription #",
    ),
    (
        p("Spotify", "Spotify AB", "subscriptions.streaming", 0),
        "Spotify Premium P#",
    ),
    (
        p(
            "Urban Sports Club",
            "Urban Sports GmbH",
            "health.fitness",
            0,
        ),
        "Mitgliedschaft # Urban Sports Club",
    ),
    (
        p(
            "Deutsche Bahn",
            "DB Vertrieb GmbH",
            "transport.public",
            0,
        ),
        "Deutschlandticket Abo #",
    ),
    (
        p("1&1", "1&1 Telecom GmbH", "telecom_and_internet.internet", 0),
        "DSL Kundennummer # Rechnung #",
    ),
    (
        p(
            "Kita Sonnenschein",
            "Kita Sonnenschein e.V.",
            "education.childcare",
            0,
        ),
        "Betreuungsbeitrag Kind #",
    ),
];

/// Shops paid through PayPal by direct debit: PayPal's narrative names
/// them in the remittance.
const PAYPAL_SHOPS: &[(&str, &str, &str)] = &[
    ("Spotify", "SPOTIFY", "subscriptions.streaming"),
    ("Zalando", "Zalando SE", "shopping.clothing"),
    ("eBay", "eBay S.a.r.l.", "shopping.online"),
    ("Lieferando", "Lieferando.de", "food_and_drink.delivery"),
    ("Steam", "Steam Games", "entertainment.games"),
];

const EMPLOYERS: &[(&str, &str)] = &[
    ("Siemens", "SIEMENS AG"),
    ("Robert Bosch", "ROBERT BOSCH GMBH"),
    ("Deutsche Post", "DEUTSCHE POST AG"),
    ("Hofmann Software", "Hofmann Software GmbH"),
    ("Krause & Partner", "KRAUSE & PARTNER STEUERBERATUNG"),
    ("Stadt Leipzig", "STADT LEIPZIG"),
];

const PEOPLE: &[&str] = &[
    "Hans Weber",
    "Anna Schneider",
    "Thomas Wagner",
    "Julia Becker",
    "Stefan Fischer",
    "Katrin Wolf",
    "Jürgen Schäfer",
    "Lena Neumann",
    "Markus Braun",
    "Sabine Zimmermann",
];

/// Landlords: people and housing companies.
const LANDLORDS: &[&str] = &[
    "Vonovia",
    "Deutsche Wohnen",
    "Hausverwaltung Berger",
    "Ingrid Hoffmann",
    "Peter Krüger",
];

const BICS: &[&str] = &[
    "COBADEFFXXX",
    "DEUTDEDBXXX",
    "BYLADEM1001",
    "INGDDEFFXXX",
    "SSKMDEMMXXX",
    "GENODEF1M04",
];

/// What one German transaction is, before either dialect writes it.
struct Entry {
    /// The booking text (`?00` in MT940).
    booking: &'static str,
    /// The business transaction code.
    gvc: u16,
    /// The name as the bank writes it; `None`: no counterparty field.
    name: Option<String>,
    /// The remittance (`SVWZ+`).
    remittance: String,
    /// The whole narrative, as a bank export writes it.
    narrative: String,
    cents: i64,
    merchant: Option<String>,
    sub: &'static str,
    mcc: Option<u16>,
}

/// One record of a bank export's narrative.
pub(super) fn narrative(g: &mut Gen) -> Text {
    let entry = entry(g);
    let mut text = Text::new(
        entry.narrative,
        entry.cents,
        entry.merchant.as_deref(),
        entry.sub,
    );
    // Read through a PSD2 interface, a debit or credit often comes with
    // the other party's name in its own field, and a card payment
    // sometimes with the merchant category code.
    if entry.mcc.is_none() && g.chance(25) {
        text.provider_merchant = entry.name;
    }
    if let Some(mcc) = entry.mcc.filter(|_| g.chance(25)) {
        text = text.hint(CategoryHint::Mcc(mcc));
    }
    text
}

/// The same kinds of record as an MT940 `:86:` field.
pub(super) fn mt940(g: &mut Gen) -> Text {
    let entry = entry(g);
    let mut field = format!("{:03}?00{}?10{}", entry.gvc, entry.booking, g.digits(4));
    // The remittance in subfields of 27 characters from ?20.
    let chars: Vec<char> = entry.remittance.chars().collect();
    for (index, part) in chars.chunks(27).take(10).enumerate() {
        let part: String = part.iter().collect();
        field.push_str(&format!("?2{index}{part}"));
    }
    if let Some(name) = &entry.name {
        field.push_str(&format!(
            "?30{}?31{}",
            g.pick(BICS),
            g.iban("DE", "", 18)
        ));
        let chars: Vec<char> = name.chars().collect();
        let first: String = chars.iter().take(27).collect();
        field.push_str(&format!("?32{first}"));
        if chars.len() > 27 {
            let rest: String = chars.iter().skip(27).take(27).collect();
            field.push_str(&format!("?33{rest}"));
        }
    }
    field.push_str("?34000");
    Text::new(field, entry.cents, entry.merchant.as_deref(), entry.sub)
        .hint(CategoryHint::Gvc(entry.gvc))
}

fn entry(g: &mut Gen) -> Entry {
    #[derive(Clone, Copy)]
    enum Kind {
        Card,
        DirectDebit,
        PayPal,
        Salary,
        Rent,
        ToPerson,
        FromPerson,
        Cash,
        Fee,
        Tax,
        Savings,
    }
    let (day, month) = g.day_month();
    let date = format!("{day:02}.{month:02}.2024");
    let eref = g.code(16);
    let mref = g.code(10);
    let cred = format!("DE{}ZZZ{}", g.digits(2), g.digits(8));
    match g.weighted(&[
        (40, Kind::Card),
        (18, Kind::DirectDebit),
        (4, Kind::PayPal),
        (6, Kind::Salary),
        (5, Kind::Rent),
        (6, Kind::ToPerson),
        (3, Kind::FromPerson),
        (6, Kind::Cash),
        (3, Kind::Fee),
        (2, Kind::Tax),
        (5, Kind::Savings),
    ]) {
        Kind::Card => {
            let shop = *g.pick(SHOPS);
            let name = shop.written(Style::German);
            let city = *g.pick(CITIES);
            let time = format!("{:02}:{:02}", g.between(7, 21), g.between(0, 59));
            let narrative = match g.between(0, 3) {
                0 => format!(
                    "KARTENZAHLUNG {name}//{city}/DE 2024-{month:02}-{day:02}T{time}:00 KFN 0 VJ {}",
                    g.between(2512, 2912)
                ),
                1 => format!("Kartenzahlung girocard {date} {name}"),
                2 => format!(
                    "SEPA-ELV-Lastschrift {name} ELV{} {day:02}.{month:02} {} ME0",
                    g.digits(8),
                    time.replace(':', ".")
                ),
                _ => format!(
                    "Kartenzahlung {name} {city} {date} Karte Nr. XXXX{}",
                    g.digits(4)
                ),
            };
            let remittance = format!(
                "{name}//{city}/DE 2024-{month:02}-{day:02}T{time}:00 KFN 0 VJ 2612"
            );
            Entry {
                booking: "KARTENZAHLUNG",
                gvc: 106,
                name: Some(name),
                remittance,
                narrative,
                cents: -typical_cents(g, shop.sub),
                merchant: Some(shop.name.to_owned()),
                sub: shop.sub,
                mcc: Some(shop.mcc),
            }
        }
        Kind::DirectDebit => {
            let (creditor, purpose) = *g.pick(CREDITORS);
            let name = match g.chance(50) {
                true => creditor.text.to_owned(),
                false => creditor.text.to_uppercase(),
            };
            let purpose = fill(g, purpose);
            let remittance = format!("EREF+{eref}MREF+{mref}CRED+{cred}SVWZ+{purpose}");
            let narrative = match g.between(0, 2) {
                0 => format!(
                    "SEPA-BASISLASTSCHRIFT {name} EREF+{eref} MREF+{mref} CRED+{cred} SVWZ+{purpose}"
                ),
                1 => format!(
                    "Lastschrift / Belastung {name} {purpose} End-to-End-Ref.: {eref} Mandatsref: {mref} Gläubiger-ID: {cred} SEPA-BASISLASTSCHRIFT wiederholend"
                ),
                _ => format!(
                    "FOLGELASTSCHRIFT {name} {purpose} EREF: {eref} MREF: {mref} CRED: {cred} IBAN: {} BIC: {}",
                    g.iban("DE", "", 18),
                    g.pick(BICS)
                ),
            };
            Entry {
                booking: "FOLGELASTSCHRIFT",
                gvc: 105,
                name: Some(name),
                remittance,
                narrative,
                cents: -typical_cents(g, creditor.sub),
                merchant: Some(creditor.name.to_owned()),
                sub: creditor.sub,
                mcc: None,
            }
        }
        Kind::PayPal => {
            let (shop, written, sub) = *g.pick(PAYPAL_SHOPS);
            let code = g.digits(13);
            let purpose = format!("{code} PP.{} . {written}, Ihr Einkauf bei {written}", g.digits(4));
            let name = "PayPal (Europe) S.a.r.l. et Cie., S.C.A.".to_owned();
            Entry {
                booking: "FOLGELASTSCHRIFT",
                gvc: 105,
                remittance: format!("EREF+{code}MREF+{mref}CRED+LU96ZZZ0000000000000000058SVWZ+{purpose}"),
                narrative: format!(
                    "SEPA-BASISLASTSCHRIFT {name} EREF+{code} MREF+{mref} CRED+LU96ZZZ0000000000000000058 SVWZ+{purpose}"
                ),
                name: Some(name),
                cents: -typical_cents(g, sub),
                merchant: Some(shop.to_owned()),
                sub,
                mcc: None,
            }
        }
        Kind::Salary => {
            let (employer, written) = *g.pick(EMPLOYERS);
            let month_name = MONTHS[(month - 1) as usize];
            let purpose = match g.chance(50) {
                true => format!("Lohn/Gehalt {month:02}/2024"),
                false => format!("Gehalt {month_name} 2024 Personalnr. {}", g.digits(5)),
            };
            let narrative = match g.between(0, 2) {
                0 => format!("LOHN/GEHALT {written} {purpose}"),
                1 => format!("GUTSCHRIFT {written} EREF+{eref} SVWZ+{purpose}"),
                _ => format!("SEPA-Gutschrift {written} {purpose} IBAN: {}", g.iban("DE", "", 18)),
            };
            Entry {
                booking: "LOHN/GEHALT",
                gvc: 153,
                name: Some(written.to_owned()),
                remittance: format!("EREF+{eref}SVWZ+{purpose}"),
                narrative,
                cents: typical_cents(g, "income.salary"),
                merchant: Some(employer.to_owned()),
                sub: "income.salary",
                mcc: None,
            }
        }
        Kind::Rent => {
            let landlord = *g.pick(LANDLORDS);
            let written = super::upper(landlord, Style::German);
            let month_name = MONTHS[(month - 1) as usize];
            let purpose = *g.pick(&[
                "Miete # Wohnung 3. OG links",
                "Miete #",
                "Kaltmiete und Nebenkosten #",
                "MIETE #",
            ]);
            let purpose = purpose.replace('#', &format!("{month_name} 2024"));
            let narrative = match g.between(0, 1) {
                0 => format!("DAUERAUFTRAG {written} {purpose}"),
                _ => format!(
                    "Dauerauftrag {} {written} {purpose}",
                    g.iban("DE", "", 18)
                ),
            };
            Entry {
                booking: "DAUERAUFTRAG",
                gvc: 117,
                name: Some(written),
                remittance: format!("SVWZ+{purpose}"),
                narrative,
                cents: -typical_cents(g, "housing.rent"),
                merchant: Some(landlord.to_owned()),
                sub: "housing.rent",
                mcc: None,
            }
        }
        Kind::ToPerson | Kind::FromPerson => {
            let out = g.weighted(&[(2, true), (1, false)]);
            let person = *g.pick(PEOPLE);
            let written = super::upper(person, Style::German);
            let purpose = *g.pick(&[
                "Geburtstagsgeschenk",
                "Danke fuers Essen",
                "Anteil Urlaub",
                "Konzertkarten",
                "Rueckzahlung",
                "Flohmarkt Fahrrad",
            ]);
            let time = format!("{:02}.{:02}", g.between(7, 22), g.between(0, 59));
            let (narrative, booking, gvc) = match (out, g.chance(50)) {
                (true, true) => (
                    format!("ONLINE-UEBERWEISUNG {written} {purpose} DATUM {date}, {time} UHR"),
                    "ONLINE-UEBERWEISUNG",
                    116,
                ),
                (true, false) => (
                    format!("SEPA-Ueberweisung an {written} {purpose} IBAN: {}", g.iban("DE", "", 18)),
                    "SEPA-UEBERWEISUNG",
                    116,
                ),
                (false, true) => (
                    format!("GUTSCHRIFT {written} {purpose}"),
                    "GUTSCHRIFT",
                    166,
                ),
                (false, false) => (
                    format!("SEPA-Gutschrift {written} EREF+NOTPROVIDED SVWZ+{purpose}"),
                    "SEPA-GUTSCHRIFT",
                    166,
                ),
            };
            let cents = g.between(1_000, 25_000);
            Entry {
                booking,
                gvc,
                name: Some(written),
                remittance: format!("SVWZ+{purpose}"),
                narrative,
                cents: if out { -cents } else { cents },
                merchant: Some(person.to_owned()),
                sub: if out {
                    "transfer.to_others"
                } else {
                    "transfer.from_others"
                },
                mcc: None,
            }
        }
        Kind::Cash => {
            let city = *g.pick(CITIES);
            let time = format!("{:02}.{:02}", g.between(7, 22), g.between(0, 59));
            let narrative = match g.between(0, 2) {
                0 => format!("GELDAUTOMAT {date} {time} Sparkasse {city}"),
                1 => format!(
                    "Bargeldauszahlung girocard GA NR{} BLZ{} 0 {day:02}.{month:02}/{time}",
                    g.digits(8),
                    g.digits(8)
                ),
                _ => format!("BARGELDAUSZAHLUNG Sparkasse//{city}/DE {date}"),
            };
            Entry {
                booking: "GELDAUTOMAT",
                gvc: 83,
                name: None,
                remittance: format!("GA NR{} BLZ{} 0 {date} {time}", g.digits(8), g.digits(8)),
                narrative,
                cents: -typical_cents(g, "cash.withdrawal"),
                merchant: None,
                sub: "cash.withdrawal",
                mcc: None,
            }
        }
        Kind::Fee => {
            let (narrative, sub) = *g.pick(&[
                ("Entgelt Kontofuehrung", "fees_and_charges.bank"),
                ("ABSCHLUSS Kontofuehrungsgebuehr", "fees_and_charges.bank"),
                ("Rechnungsabschluss Entgelte", "fees_and_charges.bank"),
                ("Entgelt Auslandseinsatz girocard", "fees_and_charges.foreign"),
                ("Sollzinsen Dispositionskredit", "fees_and_charges.interest"),
            ]);
            Entry {
                booking: "ABSCHLUSS",
                gvc: 805,
                name: None,
                remittance: narrative.to_owned(),
                narrative: narrative.to_owned(),
                cents: -typical_cents(g, sub),
                merchant: None,
                sub,
                mcc: None,
            }
        }
        Kind::Tax => {
            let city = *g.pick(CITIES);
            let steuernr = format!("{}/{}/{}", g.digits(2), g.digits(3), g.digits(5));
            let (purpose, sub) = *g.pick(&[
                ("EST-Vorauszahlung", "taxes.income"),
                ("Einkommensteuer 2023", "taxes.income"),
                ("Kfz-Steuer", "taxes.other"),
                ("Grundsteuer", "taxes.property"),
            ]);
            let (name, merchant) = match sub {
                "taxes.property" => (format!("Stadtkasse {city}"), format!("Stadtkasse {city}")),
                _ => (format!("Finanzamt {city}"), "Finanzamt".to_owned()),
            };
            let name = super::upper(&name, Style::German);
            let merchant = match sub {
                "taxes.property" => name_case(&merchant),
                _ => merchant,
            };
            Entry {
                booking: "SEPA-UEBERWEISUNG",
                gvc: 116,
                remittance: format!("SVWZ+StNr {steuernr} {purpose}"),
                narrative: format!("SEPA-Ueberweisung an {name} StNr {steuernr} {purpose}"),
                name: Some(name),
                cents: -typical_cents(g, sub),
                merchant: Some(merchant),
                sub,
                mcc: None,
            }
        }
        Kind::Savings => {
            let purpose = *g.pick(&[
                "Umbuchung auf Tagesgeld",
                "Uebertrag auf Sparkonto",
                "Sparen",
                "Umbuchung Tagesgeldkonto",
            ]);
            let narrative = match g.chance(50) {
                true => format!("DAUERAUFTRAG {purpose} {}", g.iban("DE", "", 18)),
                false => format!("UMBUCHUNG {purpose}"),
            };
            Entry {
                booking: "UMBUCHUNG",
                gvc: 116,
                name: None,
                remittance: format!("SVWZ+{purpose}"),
                narrative,
                cents: -g.between(5_000, 80_000),
                merchant: None,
                sub: "transfer.own_accounts",
                mcc: None,
            }
        }
    }
}

/// A city's office as people write it (`Stadtkasse Muenchen` is
/// `Stadtkasse München`).
fn name_case(name: &str) -> String {
    name.replace("Muenchen", "München")
        .replace("Koeln", "Köln")
        .replace("Nuernberg", "Nürnberg")
}

/// A template's `#`s as numbers.
fn fill(g: &mut Gen, template: &str) -> String {
    let mut out = String::new();
    for (index, part) in template.split('#').enumerate() {
        if index > 0 {
            out.push_str(&g.digits(8));
        }
        out.push_str(part);
    }
    out
}
