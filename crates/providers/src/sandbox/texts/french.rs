//! French texts: card lines (`CB CARREFOUR 12/03`, `PAIEMENT PAR CARTE
//! X1234 …`, `FACTURE CARTE DU 120324 …`), `PRLV SEPA` direct debits,
//! `VIR SEPA RECU /DE … /MOTIF …` and other transfers, `RETRAIT DAB`, and
//! the bank's own fees.

use super::{Gen, Party, Style, Text, p, typical_cents};
use tributary_domain::enrich::hints::CategoryHint;

const MONTHS: [&str; 12] = [
    "JANVIER",
    "FEVRIER",
    "MARS",
    "AVRIL",
    "MAI",
    "JUIN",
    "JUILLET",
    "AOUT",
    "SEPTEMBRE",
    "OCTOBRE",
    "NOVEMBRE",
    "DECEMBRE",
];

const SHOPS: &[Party] = &[
    p("Carrefour", "CARREFOUR CITY", "groceries.supermarkets", 5411),
    p("Carrefour", "CARREFOUR MARKET", "groceries.supermarkets", 5411),
    p("Monoprix", "", "groceries.supermarkets", 5411),
    p("Franprix", "", "groceries.supermarkets", 5411),
    p("Auchan", "AUCHAN SUPERMARCHE", "groceries.supermarkets", 5411),
    p("E.Leclerc", "E.LECLERC", "groceries.supermarkets", 5411),
    p("Intermarché", "", "groceries.supermarkets", 5411),
    p("Lidl", "", "groceries.supermarkets", 5411),
    p("Picard", "PICARD SURGELES", "groceries.specialty", 5499),
    p("Fnac", "FNAC", "shopping.electronics", 5732),
    p("Decathlon", "", "shopping.other", 5941),
    p("SNCF", "SNCF INTERNET", "transport.public", 4112),
    p("RATP", "", "transport.public", 4111),
    p("TotalEnergies", "TOTALENERGIES", "transport.fuel", 5541),
    p("McDonald's", "MCDONALDS", "food_and_drink.fast_food", 5814),
    p("Paul", "PAUL", "food_and_drink.cafes", 5462),
    p("Boulangerie Dupont", "", "food_and_drink.cafes", 5462),
    p("Boulangerie Au Bon Pain", "", "food_and_drink.cafes", 5462),
    p("Pharmacie du Centre", "", "health.pharmacy", 5912),
    p("Pharmacie de la Gare", "", "health.pharmacy", 5912),
    p("Brasserie Lipp", "", "food_and_drink.restaurants", 5812),
    p("Le Petit Zinc", "", "food_and_drink.restaurants", 5812),
    p("Café de Flore", "", "food_and_drink.cafes", 5814),
    p("Boucherie Martin", "", "groceries.specialty", 5422),
    p("Librairie Gallimard", "", "education.books", 5942),
    p("Tabac de la Gare", "", "shopping.other", 5993),
    p("Cinéma Le Champo", "", "entertainment.events", 7832),
    p("Garage Renault Dupuis", "", "transport.vehicle", 7538),
];

const CITIES: &[&str] = &[
    "PARIS", "LYON", "MARSEILLE", "TOULOUSE", "NANTES", "LILLE", "BORDEAUX", "RENNES",
];

const CREDITORS: &[(Party, &str)] = &[
    (
        p("EDF", "EDF clients particuliers", "utilities.electricity", 0),
        "Facture #",
    ),
    (p("Engie", "ENGIE", "utilities.heating", 0), "ECHEANCE GAZ #"),
    (
        p("Orange", "ORANGE SA", "telecom_and_internet.internet", 0),
        "FACTURE INTERNET #",
    ),
    (
        p("Free", "FREE MOBILE", "telecom_and_internet.mobile", 0),
        "Free Mobile #",
    ),
    (
        p("SFR", "SFR", "telecom_and_internet.mobile", 0),
        "SFR MOBILE #",
    ),
    (
        p(
            "Bouygues Telecom",
            "BOUYGUES TELECOM",
            "telecom_and_internet.mobile",
            0,
        ),
        "Facture mobile #",
    ),
    (
        p("AXA", "AXA FRANCE IARD", "insurance.home", 0),
        "ASSURANCE HABITATION CONTRAT #",
    ),
    (
        p("MAIF", "MAIF", "insurance.vehicle", 0),
        "COTISATION AUTO #",
    ),
    (
        p("Veolia", "VEOLIA EAU", "utilities.water", 0),
        "FACTURE EAU #",
    ),
    (
        p("Basic-Fit", "BASIC FIT FRANCE", "health.fitness", 0),
        "ABONNEMENT #",
    ),
    (
        p("Canal+", "CANAL+", "subscriptions.streaming", 0),
        "ABONNEMENT CANAL+ #",
    ),
    (
        p("Netflix", "NETFLIX.COM", "subscriptions.streaming", 0),
        "NETFLIX #",
    ),
    (
        p("Harmonie Mutuelle", "HARMONIE MUTUELLE", "insurance.health", 0),
        "COTISATION MUTUELLE #",
    ),
];

const EMPLOYERS: &[(&str, &str)] = &[
    ("Acme France", "ACME FRANCE SAS"),
    ("Dupont Conseil", "DUPONT CONSEIL SARL"),
    ("Mairie de Lyon", "MAIRIE DE LYON"),
    ("Laboratoires Moreau", "LABORATOIRES MOREAU SA"),
];

const PEOPLE: &[&str] = &[
    "Pierre Martin",
    "Marie Dubois",
    "Julien Bernard",
    "Camille Petit",
    "Nicolas Durand",
    "Sophie Leroy",
    "Thomas Moreau",
    "Chloé Lefebvre",
    "Antoine Girard",
    "Léa Fontaine",
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
            let card = g.digits(4);
            let description = match g.between(0, 4) {
                0 => format!("CB {name} {day:02}/{month:02}"),
                1 => format!("CB {name} {day:02}{month:02} {city}"),
                2 => format!("PAIEMENT PAR CARTE X{card} {name} {city} {day:02}/{month:02}"),
                3 => format!("CARTE X{card} {day:02}/{month:02} {name}"),
                _ => format!(
                    "FACTURE CARTE DU {day:02}{month:02}24 {name} {city} CARTE 4974XXXXXXXX{card}"
                ),
            };
            let text = Text::new(
                description,
                -typical_cents(g, shop.sub),
                Some(shop.name),
                shop.sub,
            );
            match g.chance(25) {
                true => text.hint(CategoryHint::Mcc(shop.mcc)),
                false => text,
            }
        }
        Kind::DirectDebit => {
            let (creditor, purpose) = *g.pick(CREDITORS);
            let purpose = purpose.replace('#', &g.digits(10));
            let ics = format!("FR{}ZZZ{}", g.digits(2), g.digits(6));
            let description = match g.between(0, 2) {
                0 => format!("PRLV SEPA {} {purpose}", creditor.text),
                1 => format!(
                    "PRLV SEPA {} ECH/{day:02}{month:02}24 ID EMETTEUR/{ics} MDT/{} REF/{} LIB/{purpose}",
                    creditor.text,
                    g.code(12),
                    g.code(10)
                ),
                _ => format!(
                    "PRELEVEMENT SEPA DE {} REF {}",
                    creditor.text,
                    g.code(12)
                ),
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
                    "VIR SEPA RECU /DE {written} /MOTIF SALAIRE {month_name} 2024 /REF {}",
                    g.code(12)
                ),
                false => format!("VIREMENT RECU {written} PAIE {month:02}/2024"),
            };
            Text::new(
                description,
                typical_cents(g, "income.salary"),
                Some(employer),
                "income.salary",
            )
        }
        Kind::Rent => {
            let landlord = *g.pick(&["Jean Lambert", "Foncia", "Nexity", "Martine Roux"]);
            let written = landlord.to_uppercase();
            let description = match g.chance(50) {
                true => format!("VIR PERMANENT {written} LOYER {month_name}"),
                false => format!(
                    "VIR SEPA EMIS /MOTIF LOYER {month_name} 2024 /BEN {written} /REFDO {}",
                    g.code(10)
                ),
            };
            Text::new(
                description,
                -typical_cents(g, "housing.rent"),
                Some(landlord),
                "housing.rent",
            )
        }
        Kind::ToPerson => {
            let person = *g.pick(PEOPLE);
            let written = super::upper(person, Style::Plain);
            let motif = *g.pick(&["CADEAU", "RESTAU", "VACANCES", "REMBOURSEMENT PLACE"]);
            let description = match g.chance(50) {
                true => format!("VIR SEPA EMIS /MOTIF {motif} /BEN {written} /REFDO {}", g.code(10)),
                false => format!("VIR INST {written} {motif}"),
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
            let written = super::upper(person, Style::Plain);
            let description = format!(
                "VIR SEPA RECU /DE {written} /MOTIF {} /REF {}",
                g.pick(&["ANNIVERSAIRE", "PART COURSES", "WEEKEND"]),
                g.code(10)
            );
            Text::new(
                description,
                g.between(1_000, 25_000),
                Some(person),
                "transfer.from_others",
            )
        }
        Kind::Cash => {
            let city = *g.pick(CITIES);
            let description = match g.between(0, 2) {
                0 => format!("RETRAIT DAB {day:02}/{month:02} {city}"),
                1 => format!(
                    "RETRAIT DAB {day:02}/{month:02}/24 {:02}H{:02} {} {city}",
                    g.between(7, 22),
                    g.between(0, 59),
                    g.pick(&["BNP PARIBAS", "LCL", "CREDIT AGRICOLE", "SOCIETE GENERALE"])
                ),
                _ => format!("RETRAIT CARTE X{} {day:02}/{month:02} {city}", g.digits(4)),
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
                ("FRAIS TENUE DE COMPTE", "fees_and_charges.bank"),
                ("COTISATION CARTE VISA PREMIER", "fees_and_charges.bank"),
                ("COMMISSION D'INTERVENTION", "fees_and_charges.late"),
                ("FRAIS PAIEMENT HORS ZONE EURO", "fees_and_charges.foreign"),
                ("INTERETS DEBITEURS", "fees_and_charges.interest"),
            ]);
            Text::new(description.to_owned(), -typical_cents(g, sub), None, sub)
        }
        Kind::Tax => {
            let (description, sub) = *g.pick(&[
                ("PRLV SEPA DGFIP IMPOT # PRELEVEMENT A LA SOURCE", "taxes.income"),
                ("PRLV SEPA DGFIP IMPOT TAXE FONCIERE #", "taxes.property"),
                ("PRLV SEPA DIRECTION GENERALE DES FINANCES PUBLIQUES #", "taxes.other"),
            ]);
            let description = description.replace('#', &g.digits(12));
            Text::new(description, -typical_cents(g, sub), Some("DGFiP"), sub)
        }
        Kind::Savings => {
            let (description, cents) = *g.pick(&[
                ("VIR LIVRET A", -1),
                ("VIREMENT VERS LIVRET A", -1),
                ("VIR INTERNE VERS LDDS", -1),
                ("VIR DE LIVRET A", 1),
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
