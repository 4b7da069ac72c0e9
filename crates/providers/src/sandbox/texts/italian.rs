//! Italian texts: card lines (`PAGAMENTO POS … ESSELUNGA`, Intesa's
//! `PAGAMENTO POS 12,50 EUR DEL 12.03.2024 A (ITA) …`), `ADDEBITO SDD`
//! direct debits, `BONIFICO` transfers with `CAUSALE`, `PRELIEVO
//! BANCOMAT`, fees, F24 taxes and `GIROCONTO`.

use super::{Gen, Party, Style, Text, p, typical_cents};
use tributary_domain::enrich::hints::CategoryHint;

const MONTHS: [&str; 12] = [
    "GENNAIO",
    "FEBBRAIO",
    "MARZO",
    "APRILE",
    "MAGGIO",
    "GIUGNO",
    "LUGLIO",
    "AGOSTO",
    "SETTEMBRE",
    "OTTOBRE",
    "NOVEMBRE",
    "DICEMBRE",
];

const SHOPS: &[Party] = &[
    p("Esselunga", "", "groceries.supermarkets", 5411),
    p("Conad", "CONAD CITY", "groceries.supermarkets", 5411),
    p("Coop", "COOP LOMBARDIA", "groceries.supermarkets", 5411),
    p("Carrefour", "CARREFOUR EXPRESS", "groceries.supermarkets", 5411),
    p("Lidl", "LIDL ITALIA", "groceries.supermarkets", 5411),
    p("Eurospin", "", "groceries.supermarkets", 5411),
    p("Autogrill", "", "food_and_drink.fast_food", 5814),
    p("Eni", "ENI STATION", "transport.fuel", 5541),
    p("Trenitalia", "", "transport.public", 4112),
    p("Italo", "ITALO SPA", "transport.public", 4112),
    p("MediaWorld", "", "shopping.electronics", 5732),
    p("Zara", "", "shopping.clothing", 5651),
    p("Farmacia Comunale", "", "health.pharmacy", 5912),
    p("Bar Centrale", "", "food_and_drink.bars", 5813),
    p("Bar Sport", "", "food_and_drink.bars", 5813),
    p("Pasticceria Rossi", "", "food_and_drink.cafes", 5462),
    p("Trattoria da Gino", "", "food_and_drink.restaurants", 5812),
    p("Pizzeria Bella Napoli", "", "food_and_drink.restaurants", 5812),
    p("Salumeria Bianchi", "", "groceries.specialty", 5499),
    p("La Feltrinelli", "", "education.books", 5942),
    p("Ferramenta Colombo", "", "shopping.home", 5251),
    p("Ottica Ferri", "", "health.other", 8043),
    p("Gelateria Dondoli", "", "food_and_drink.cafes", 5814),
];

const CITIES: &[&str] = &[
    "MILANO", "ROMA", "TORINO", "BOLOGNA", "FIRENZE", "NAPOLI", "VERONA",
];

const CREDITORS: &[Party] = &[
    p("Enel", "ENEL ENERGIA S.P.A.", "utilities.electricity", 0),
    p("Eni Plenitude", "ENI PLENITUDE SPA", "utilities.heating", 0),
    p("A2A", "A2A ENERGIA SPA", "utilities.electricity", 0),
    p("TIM", "TELECOM ITALIA SPA", "telecom_and_internet.internet", 0),
    p("Vodafone", "VODAFONE ITALIA SPA", "telecom_and_internet.mobile", 0),
    p("WindTre", "WIND TRE SPA", "telecom_and_internet.mobile", 0),
    p("Fastweb", "FASTWEB SPA", "telecom_and_internet.internet", 0),
    p("Iliad", "ILIAD ITALIA SPA", "telecom_and_internet.mobile", 0),
    p("Generali", "ASSICURAZIONI GENERALI SPA", "insurance.other", 0),
    p("UnipolSai", "UNIPOLSAI ASSICURAZIONI", "insurance.vehicle", 0),
    p("Acea", "ACEA ATO 2 SPA", "utilities.water", 0),
    p("Netflix", "NETFLIX INTERNATIONAL BV", "subscriptions.streaming", 0),
];

const EMPLOYERS: &[(&str, &str)] = &[
    ("Acme Italia", "ACME ITALIA SRL"),
    ("Ferrari Costruzioni", "FERRARI COSTRUZIONI SPA"),
    ("Comune di Milano", "COMUNE DI MILANO"),
    ("Studio Greco", "STUDIO GRECO SRL"),
];

const PEOPLE: &[&str] = &[
    "Marco Rossi",
    "Giulia Bianchi",
    "Luca Romano",
    "Francesca Colombo",
    "Alessandro Ricci",
    "Chiara Marino",
    "Matteo Greco",
    "Sara Conti",
];

pub(super) fn record(g: &mut Gen) -> Text {
    #[derive(Clone, Copy)]
    enum Kind {
        Card,
        DirectDebit,
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
    let month_name = MONTHS[(month - 1) as usize];
    match g.weighted(&[
        (42, Kind::Card),
        (18, Kind::DirectDebit),
        (6, Kind::Salary),
        (5, Kind::Rent),
        (5, Kind::ToPerson),
        (3, Kind::FromPerson),
        (6, Kind::Cash),
        (4, Kind::Fee),
        (2, Kind::Tax),
        (4, Kind::Savings),
    ]) {
        Kind::Card => {
            let shop = *g.pick(SHOPS);
            let name = shop.written(Style::Plain);
            let city = *g.pick(CITIES);
            let cents = typical_cents(g, shop.sub);
            let card = g.digits(4);
            let description = match g.between(0, 2) {
                0 => format!("PAGAMENTO POS {name} {city} {day:02}/{month:02}/2024 CARTA *{card}"),
                1 => format!(
                    "PAGAMENTO POS {},{:02} EUR DEL {day:02}.{month:02}.2024 A (ITA) {name} CARTA N. *{card}",
                    cents / 100,
                    cents % 100
                ),
                _ => format!("PAGAMENTO TRAMITE POS {day:02}/{month:02} {name}"),
            };
            let text = Text::new(description, -cents, Some(shop.name), shop.sub);
            match g.chance(25) {
                true => text.hint(CategoryHint::Mcc(shop.mcc)),
                false => text,
            }
        }
        Kind::DirectDebit => {
            let creditor = *g.pick(CREDITORS);
            let description = match g.between(0, 2) {
                0 => format!(
                    "ADDEBITO SDD {} CORE {} {day:02}/{month:02}/2024",
                    creditor.text,
                    g.code(12)
                ),
                1 => format!(
                    "ADDEBITO DIRETTO SDD {} FATTURA N. {}",
                    creditor.text,
                    g.digits(10)
                ),
                _ => format!("ADDEBITO SEPA DD PER FATTURA A VOSTRO CARICO {}", creditor.text),
            };
            Text::new(
                description,
                -typical_cents(g, creditor.sub),
                Some(creditor.name),
                creditor.sub,
            )
        }
        Kind::Salary => {
            let (employer, written) = *g.pick(EMPLOYERS);
            let description = match g.chance(60) {
                true => format!(
                    "BONIFICO A VOSTRO FAVORE DA {written} CAUSALE STIPENDIO {month_name} 2024"
                ),
                false => format!("ACCREDITO STIPENDIO {written} {month:02}/2024"),
            };
            Text::new(
                description,
                typical_cents(g, "income.salary"),
                Some(employer),
                "income.salary",
            )
        }
        Kind::Rent => {
            let landlord = *g.pick(&["Giuseppe Esposito", "Immobiliare Aurora", "Anna Gallo"]);
            let written = landlord.to_uppercase();
            Text::new(
                format!("BONIFICO SEPA A FAVORE DI {written} CAUSALE AFFITTO {month_name}"),
                -typical_cents(g, "housing.rent"),
                Some(landlord),
                "housing.rent",
            )
        }
        Kind::ToPerson => {
            let person = *g.pick(PEOPLE);
            let written = person.to_uppercase();
            let causale = *g.pick(&["REGALO", "CENA", "VACANZE", "QUOTA CALCETTO"]);
            let description = match g.chance(50) {
                true => format!("BONIFICO SEPA A FAVORE DI {written} CAUSALE {causale}"),
                false => format!("BONIFICO ISTANTANEO A {written} {causale}"),
            };
            Text::new(
                description,
                -g.between(1_000, 25_000),
                Some(person),
                "transfer.to_others",
            )
        }
        Kind::FromPerson => {
            let person = *g.pick(PEOPLE);
            let written = person.to_uppercase();
            Text::new(
                format!("BONIFICO A VOSTRO FAVORE DA {written} CAUSALE RIMBORSO CENA"),
                g.between(1_000, 25_000),
                Some(person),
                "transfer.from_others",
            )
        }
        Kind::Cash => {
            let city = *g.pick(CITIES);
            let description = match g.chance(50) {
                true => format!(
                    "PRELIEVO BANCOMAT {day:02}/{month:02}/2024 {}",
                    g.pick(&["INTESA SANPAOLO", "UNICREDIT", "BPM"])
                ),
                false => format!("PRELEVAMENTO CARTA {day:02}/{month:02} ATM {city}"),
            };
            Text::new(
                description,
                -typical_cents(g, "cash.withdrawal"),
                None,
                "cash.withdrawal",
            )
        }
        Kind::Fee => {
            let (description, sub) = *g.pick(&[
                ("CANONE MENSILE CONTO", "fees_and_charges.bank"),
                ("COMMISSIONI BONIFICO", "fees_and_charges.bank"),
                ("SPESE TENUTA CONTO", "fees_and_charges.bank"),
                ("IMPOSTA DI BOLLO", "taxes.other"),
            ]);
            Text::new(description.to_owned(), -typical_cents(g, sub), None, sub)
        }
        Kind::Tax => Text::new(
            format!(
                "PAGAMENTO DELEGA F24 AGENZIA DELLE ENTRATE {}",
                g.digits(10)
            ),
            -typical_cents(g, "taxes.income"),
            Some("Agenzia delle Entrate"),
            "taxes.income",
        ),
        Kind::Savings => {
            let (description, cents) = *g.pick(&[
                ("GIROCONTO A CONTO DEPOSITO", -1),
                ("GIROCONTO DA CONTO DEPOSITO", 1),
                ("GIROCONTO VERSO CONTO RISPARMIO", -1),
            ]);
            Text::new(
                description.to_owned(),
                cents * g.between(5_000, 80_000),
                None,
                "transfer.own_accounts",
            )
        }
    }
}
