//! Dutch texts: the SEPA remittance structures of ABN AMRO and Rabobank
//! exports (`/TRTP/SEPA OVERBOEKING/IBAN/…/BIC/…/NAME/…/REMI/…/EREF/…`,
//! `/TRTP/SEPA Incasso algemeen doorlopend/CSID/…`, `/TRTP/iDEAL/…`),
//! ABN-style card lines (`BEA, Betaalpas …,PAS123`), cash machines
//! (`GEA`) and ING's `Naam: … Omschrijving: …` narratives; about half
//! with the ISO 20022 bank transaction code a camt export gives.

use super::{Gen, Party, Style, Text, p, typical_cents};
use tributary_domain::enrich::hints::CategoryHint;

const MONTHS: [&str; 12] = [
    "januari",
    "februari",
    "maart",
    "april",
    "mei",
    "juni",
    "juli",
    "augustus",
    "september",
    "oktober",
    "november",
    "december",
];

const SHOPS: &[Party] = &[
    p("Albert Heijn", "ALBERT HEIJN", "groceries.supermarkets", 5411),
    p("Jumbo", "JUMBO", "groceries.supermarkets", 5411),
    p("Lidl", "LIDL", "groceries.supermarkets", 5411),
    p("Dirk", "DIRK VDBROEK", "groceries.supermarkets", 5411),
    p("Plus", "PLUS", "groceries.supermarkets", 5411),
    p("Kruidvat", "KRUIDVAT", "health.pharmacy", 5912),
    p("HEMA", "HEMA", "shopping.general", 5311),
    p("Action", "ACTION", "shopping.general", 5331),
    p("Gamma", "GAMMA", "shopping.home", 5200),
    p("IKEA", "IKEA BV", "shopping.home", 5712),
    p("Shell", "SHELL", "transport.fuel", 5541),
    p("NS", "NS-AMSTERDAM C.", "transport.public", 4112),
    p("Bakkerij Bart", "", "food_and_drink.cafes", 5462),
    p("Bakkerij De Zon", "", "food_and_drink.cafes", 5462),
    p("Slagerij Van Dam", "", "groceries.specialty", 5422),
    p("Cafe De Jaren", "", "food_and_drink.bars", 5813),
    p("Eetcafe De Buurvrouw", "", "food_and_drink.restaurants", 5812),
    p("Restaurant De Kas", "", "food_and_drink.restaurants", 5812),
    p("Kaasboer Henk", "", "groceries.specialty", 5499),
    p("Bloemenhuis Marijke", "", "shopping.other", 5992),
    p("Apotheek Zuid", "", "health.pharmacy", 5912),
    p("Boekhandel Broese", "", "education.books", 5942),
    p("Febo", "FEBO", "food_and_drink.fast_food", 5814),
    p("Fietsenmaker Jansen", "", "transport.other", 5940),
];

const CITIES: &[&str] = &[
    "AMSTERDAM",
    "UTRECHT",
    "ROTTERDAM",
    "DEN HAAG",
    "EINDHOVEN",
    "GRONINGEN",
    "HAARLEM",
    "LEIDEN",
];

/// Collected by direct debit: name, creditor's own name, what, remittance.
const CREDITORS: &[(Party, &str)] = &[
    (
        p(
            "Vattenfall",
            "Vattenfall Klantenservice N.V.",
            "utilities.electricity",
            0,
        ),
        "Termijnbedrag # Klantnr #",
    ),
    (
        p("Eneco", "Eneco Consumenten B.V.", "utilities.electricity", 0),
        "Voorschot energie #",
    ),
    (
        p("Essent", "ESSENT RETAIL ENERGIE BV", "utilities.electricity", 0),
        "Maandbedrag #",
    ),
    (
        p("Ziggo", "Ziggo Services BV", "telecom_and_internet.internet", 0),
        "Factuur # Ziggo",
    ),
    (
        p("KPN", "KPN B.V.", "telecom_and_internet.internet", 0),
        "KPN factuur #",
    ),
    (
        p("Odido", "Odido Netherlands B.V.", "telecom_and_internet.mobile", 0),
        "Odido factuur #",
    ),
    (
        p(
            "Zilveren Kruis",
            "Zilveren Kruis Zorgverzekeringen N.V.",
            "insurance.health",
            0,
        ),
        "Premie zorgverzekering #",
    ),
    (
        p(
            "Centraal Beheer",
            "Centraal Beheer",
            "insurance.vehicle",
            0,
        ),
        "Autoverzekering polis #",
    ),
    (
        p("Waternet", "Waternet", "utilities.water", 0),
        "Drinkwater klantnr #",
    ),
    (
        p("Basic-Fit", "Basic-Fit Nederland B.V.", "health.fitness", 0),
        "Lidmaatschap #",
    ),
    (
        p("Videoland", "Videoland", "subscriptions.streaming", 0),
        "Abonnement #",
    ),
    (
        p(
            "De Volkskrant",
            "DPG Media B.V.",
            "subscriptions.news",
            0,
        ),
        "Abonnement de Volkskrant #",
    ),
    (
        p("DUO", "DUO Hoofdkantoor", "education.tuition", 0),
        "Collegegeld # Universiteit Utrecht",
    ),
];

/// Paid through iDEAL: who, the acquirer's or shop's name, what.
const IDEAL: &[(&str, &str, &str)] = &[
    ("bol.com", "bol.com b.v.", "shopping.online"),
    ("Coolblue", "Coolblue B.V.", "shopping.electronics"),
    ("Zalando", "Zalando SE", "shopping.clothing"),
    ("Thuisbezorgd", "Thuisbezorgd.nl via Stichting Mollie Payments", "food_and_drink.delivery"),
    ("Wehkamp", "Wehkamp Retail Group B.V.", "shopping.online"),
    ("NS", "NS Reizigers B.V.", "transport.public"),
];

const EMPLOYERS: &[(&str, &str)] = &[
    ("Acme Nederland", "ACME NEDERLAND B.V."),
    ("Philips", "Philips Nederland B.V."),
    ("Van der Berg Installatietechniek", "VAN DER BERG INSTALLATIETECHNIEK"),
    ("Gemeente Utrecht", "GEMEENTE UTRECHT"),
    ("Bakker Logistiek", "BAKKER LOGISTIEK BV"),
];

const PEOPLE: &[&str] = &[
    "J. de Vries",
    "M. Jansen",
    "S. van Dijk",
    "Pieter Bakker",
    "Sanne Visser",
    "Daan Smit",
    "Emma de Boer",
    "L. Mulder",
    "Fleur Bos",
    "Ruben Meijer",
];

const LANDLORDS: &[&str] = &["J. de Vries", "Woonstichting De Key", "Vesteda", "H. Kuipers"];

const BICS: &[&str] = &["ABNANL2A", "INGBNL2A", "RABONL2U", "SNSBNL2A", "TRIONL2U", "BUNQNL2A"];

pub(super) fn record(g: &mut Gen) -> Text {
    #[derive(Clone, Copy)]
    enum Kind {
        Card,
        DirectDebit,
        Ideal,
        Salary,
        Rent,
        Person,
        Tikkie,
        Cash,
        Fee,
        Tax,
        Savings,
    }
    let (day, month) = g.day_month();
    let month_name = MONTHS[(month - 1) as usize];
    let eref = g.code(14);
    let bank = *g.pick(&["ABNA", "INGB", "RABO", "SNSB", "TRIO"]);
    let iban = g.iban("NL", bank, 14);
    let bic = *g.pick(BICS);
    let (mut text, code) = match g.weighted(&[
        (40, Kind::Card),
        (17, Kind::DirectDebit),
        (6, Kind::Ideal),
        (6, Kind::Salary),
        (5, Kind::Rent),
        (6, Kind::Person),
        (3, Kind::Tikkie),
        (5, Kind::Cash),
        (3, Kind::Fee),
        (3, Kind::Tax),
        (5, Kind::Savings),
    ]) {
        Kind::Card => {
            let shop = *g.pick(SHOPS);
            let name = shop.written(Style::Plain);
            let city = *g.pick(CITIES);
            let pas = g.digits(3);
            // ABN AMRO writes the shop's number or the first letters of
            // its place between the name and the card (`… MIDD,PAS999`).
            let place = match g.chance(50) {
                true => g.digits(4),
                false => city.chars().take(4).collect(),
            };
            let nr = g.code(6);
            let time = format!("{:02}:{:02}", g.between(7, 22), g.between(0, 59));
            let description = match g.between(0, 3) {
                0 => format!(
                    "BEA, Betaalpas {name} {place},PAS{pas} NR:{nr}, {day:02}.{month:02}.24/{time} {city}"
                ),
                1 => format!(
                    "BEA, Apple Pay {name} {place},PAS{pas} NR:{nr}, {day:02}.{month:02}.24/{time} {city}"
                ),
                2 => format!("BEA   NR:{nr} {day:02}.{month:02}.24/{} {name} {place},PAS{pas}", time.replace(':', ".")),
                _ => format!(
                    "Naam: {name} {city} Omschrijving: Pasvolgnr: 00{} {day:02}-{month:02}-2024 {time} Transactie: {} Term: {}",
                    g.between(1, 3),
                    g.code(8),
                    g.code(8)
                ),
            };
            let text = Text::new(
                description,
                -typical_cents(g, shop.sub),
                Some(shop.name),
                shop.sub,
            );
            let text = match g.chance(25) {
                true => text.hint(CategoryHint::Mcc(shop.mcc)),
                false => text,
            };
            (text, "PMNT/CCRD/POSD")
        }
        Kind::DirectDebit => {
            let (creditor, purpose) = *g.pick(CREDITORS);
            let purpose = purpose.replace('#', &g.digits(10));
            let csid = format!("NL{}ZZZ{}", g.digits(2), g.digits(12));
            let description = match g.chance(70) {
                true => format!(
                    "/TRTP/SEPA Incasso algemeen doorlopend/CSID/{csid}/NAME/{}/MARF/{}/REMI/{purpose}/IBAN/{iban}/BIC/{bic}/EREF/{eref}",
                    creditor.text,
                    g.code(12)
                ),
                false => format!(
                    "SEPA Incasso algemeen doorlopend Incassant: {csid} Naam: {} Machtiging: {} Omschrijving: {purpose} IBAN: {iban}",
                    creditor.text,
                    g.code(12)
                ),
            };
            (
                Text::new(
                    description,
                    -typical_cents(g, creditor.sub),
                    Some(creditor.name),
                    creditor.sub,
                ),
                "PMNT/IDDT/ESDD",
            )
        }
        Kind::Ideal => {
            let (name, written, sub) = *g.pick(IDEAL);
            let order = g.digits(10);
            (
                Text::new(
                    format!(
                        "/TRTP/iDEAL/IBAN/{iban}/BIC/{bic}/NAME/{written}/REMI/{order} {}/EREF/{day:02}-{month:02}-2024 {} {}",
                        g.code(16),
                        g.digits(2),
                        g.digits(16)
                    ),
                    -typical_cents(g, sub),
                    Some(name),
                    sub,
                ),
                "PMNT/ICDT/ESCT",
            )
        }
        Kind::Salary => {
            let (employer, written) = *g.pick(EMPLOYERS);
            let remi = match g.chance(50) {
                true => format!("Salaris {month_name} 2024"),
                false => format!("SALARIS {month:02}-2024 PERSNR {}", g.digits(5)),
            };
            let text = Text::new(
                format!(
                    "/TRTP/SEPA OVERBOEKING/IBAN/{iban}/BIC/{bic}/NAME/{written}/REMI/{remi}/EREF/{eref}"
                ),
                typical_cents(g, "income.salary"),
                Some(employer),
                "income.salary",
            );
            (text, "PMNT/RCDT/SALA")
        }
        Kind::Rent => {
            let landlord = *g.pick(LANDLORDS);
            let written = match g.chance(50) {
                true => landlord.to_uppercase(),
                false => landlord.to_owned(),
            };
            let remi = match g.chance(50) {
                true => format!("Huur {month_name} 2024"),
                false => format!("HUUR {} {month:02}-2024", g.digits(6)),
            };
            (
                Text::new(
                    format!(
                        "/TRTP/SEPA OVERBOEKING/IBAN/{iban}/BIC/{bic}/NAME/{written}/REMI/{remi}/EREF/NOTPROVIDED"
                    ),
                    -typical_cents(g, "housing.rent"),
                    Some(landlord),
                    "housing.rent",
                ),
                "PMNT/ICDT/ESCT",
            )
        }
        Kind::Person => {
            let person = *g.pick(PEOPLE);
            let out = g.chance(65);
            let remi = *g.pick(&[
                "Verjaardagscadeau",
                "Etentje zaterdag",
                "Voorschot vakantie",
                "Marktplaats fiets",
                "Terug van concert",
            ]);
            let written = match g.chance(50) {
                true => person.to_uppercase(),
                false => person.to_owned(),
            };
            let cents = g.between(1_000, 25_000);
            let description = match g.chance(60) {
                true => format!(
                    "/TRTP/SEPA OVERBOEKING/IBAN/{iban}/BIC/{bic}/NAME/{written}/REMI/{remi}/EREF/NOTPROVIDED"
                ),
                false => format!("{iban} {bic} {written} {remi}"),
            };
            match out {
                true => (
                    Text::new(description, -cents, Some(person), "transfer.to_others"),
                    "PMNT/ICDT/ESCT",
                ),
                false => (
                    Text::new(description, cents, Some(person), "transfer.from_others"),
                    "PMNT/RCDT/ESCT",
                ),
            }
        }
        Kind::Tikkie => {
            let person = *g.pick(PEOPLE);
            let purpose = *g.pick(&["Pizza", "Boodschappen", "Bioscoop", "Weekendje weg"]);
            (
                Text::new(
                    format!(
                        "/TRTP/SEPA OVERBOEKING/IBAN/NL25ABNA0552447255/BIC/ABNANL2A/NAME/AAB INZ TIKKIE/REMI/Tikkie ID {}, {purpose}, {person}, {iban}/EREF/{eref}",
                        g.digits(12)
                    ),
                    g.between(500, 6_000),
                    Some(person),
                    "transfer.from_others",
                ),
                "PMNT/RCDT/ESCT",
            )
        }
        Kind::Cash => {
            let city = *g.pick(CITIES);
            let time = format!("{:02}:{:02}", g.between(7, 22), g.between(0, 59));
            (
                Text::new(
                    format!(
                        "GEA, Betaalpas Geldmaat {city},PAS{} NR:{}, {day:02}.{month:02}.24/{time} {city}",
                        g.digits(3),
                        g.code(6)
                    ),
                    -typical_cents(g, "cash.withdrawal"),
                    None,
                    "cash.withdrawal",
                ),
                "PMNT/CCRD/CWDL",
            )
        }
        Kind::Fee => {
            let (description, sub) = *g.pick(&[
                ("ABN AMRO Bank N.V. Basic Package 3,25", "fees_and_charges.bank"),
                ("Kosten BetaalPakket", "fees_and_charges.bank"),
                ("Kosten gebruik betaalrekening", "fees_and_charges.bank"),
                ("Debetrente", "fees_and_charges.interest"),
            ]);
            (
                Text::new(description.to_owned(), -typical_cents(g, sub), None, sub),
                "ACMT/MDOP/CHRG",
            )
        }
        Kind::Tax => {
            let (name, written, remi, sub) = *g.pick(&[
                ("Belastingdienst", "BELASTINGDIENST", "Inkomstenbelasting 2023 aanslag", "taxes.income"),
                ("Belastingdienst", "BELASTINGDIENST", "Motorrijtuigenbelasting", "taxes.other"),
                ("Gemeente Amsterdam", "GEMEENTE AMSTERDAM", "Gemeentelijke belastingen 2024", "taxes.property"),
            ]);
            (
                Text::new(
                    format!(
                        "/TRTP/SEPA OVERBOEKING/IBAN/{iban}/BIC/{bic}/NAME/{written}/REMI/{remi} {}/EREF/{eref}",
                        g.digits(16)
                    ),
                    -typical_cents(g, sub),
                    Some(name),
                    sub,
                ),
                "PMNT/ICDT/ESCT",
            )
        }
        Kind::Savings => {
            let own = *g.pick(PEOPLE);
            let (description, cents) = match g.between(0, 2) {
                0 => (
                    format!("Naar Oranje Spaarrekening V{}", g.digits(8)),
                    -g.between(5_000, 80_000),
                ),
                1 => (
                    format!(
                        "/TRTP/SEPA OVERBOEKING/IBAN/{iban}/BIC/{bic}/NAME/{}/REMI/Naar spaarrekening/EREF/NOTPROVIDED",
                        own.to_uppercase()
                    ),
                    -g.between(5_000, 80_000),
                ),
                _ => (
                    format!("Van Oranje Spaarrekening V{}", g.digits(8)),
                    g.between(5_000, 80_000),
                ),
            };
            (
                Text::new(description, cents, None, "transfer.own_accounts"),
                "PMNT/ICDT/ESCT",
            )
        }
    };
    // A camt export gives the bank transaction code; a text export not.
    if g.chance(50) {
        text = text.hint(CategoryHint::BankTransactionCode(code.to_owned()));
    }
    text
}
