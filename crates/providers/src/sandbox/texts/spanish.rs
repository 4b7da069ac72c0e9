//! Spanish texts: card lines (`COMPRA TARJ. 5402XXXXXXXX1234 MERCADONA
//! VALENCIA`, `PAGO CON TARJETA EN …`, `COMPRA EN …, CON LA TARJETA …`),
//! `RECIBO` direct debits, `TRANSFERENCIA` lines with `CONCEPTO`, Bizum,
//! cash machines (`REINTEGRO CAJERO`), fees, taxes and `TRASPASO`.

use super::{Gen, Party, Style, Text, p, typical_cents};
use tributary_domain::enrich::hints::CategoryHint;

const MONTHS: [&str; 12] = [
    "ENERO",
    "FEBRERO",
    "MARZO",
    "ABRIL",
    "MAYO",
    "JUNIO",
    "JULIO",
    "AGOSTO",
    "SEPTIEMBRE",
    "OCTUBRE",
    "NOVIEMBRE",
    "DICIEMBRE",
];

const SHOPS: &[Party] = &[
    p("Mercadona", "", "groceries.supermarkets", 5411),
    p("Carrefour", "CARREFOUR EXPRESS", "groceries.supermarkets", 5411),
    p("Dia", "SUPERMERCADOS DIA", "groceries.supermarkets", 5411),
    p("Lidl", "", "groceries.supermarkets", 5411),
    p("Eroski", "", "groceries.supermarkets", 5411),
    p("Alcampo", "", "groceries.supermarkets", 5411),
    p("El Corte Inglés", "", "shopping.general", 5311),
    p("Zara", "", "shopping.clothing", 5651),
    p("Primark", "", "shopping.clothing", 5651),
    p("Repsol", "E.S. REPSOL", "transport.fuel", 5541),
    p("Cepsa", "ESTACION DE SERVICIO CEPSA", "transport.fuel", 5541),
    p("Renfe", "RENFE VIAJEROS", "transport.public", 4112),
    p("Glovo", "GLOVO APP", "food_and_drink.delivery", 5814),
    p("Burger King", "", "food_and_drink.fast_food", 5814),
    p("Farmacia López", "", "health.pharmacy", 5912),
    p("Bar Manolo", "", "food_and_drink.bars", 5813),
    p("Cafetería La Esquina", "", "food_and_drink.cafes", 5814),
    p("Restaurante Casa Pepe", "", "food_and_drink.restaurants", 5812),
    p("Panadería San Roque", "", "food_and_drink.cafes", 5462),
    p("Frutería María", "", "groceries.specialty", 5499),
    p("Carnicería Hermanos Ruiz", "", "groceries.specialty", 5422),
    p("Librería Castro", "", "education.books", 5942),
    p("Ferretería Gómez", "", "shopping.home", 5251),
    p("Taberna El Sur", "", "food_and_drink.bars", 5813),
];

const CITIES: &[&str] = &[
    "MADRID", "BARCELONA", "VALENCIA", "SEVILLA", "BILBAO", "MALAGA", "ZARAGOZA",
];

const CREDITORS: &[Party] = &[
    p(
        "Iberdrola",
        "IBERDROLA CLIENTES, S.A.U.",
        "utilities.electricity",
        0,
    ),
    p("Endesa", "ENDESA ENERGIA S.A.U.", "utilities.electricity", 0),
    p("Naturgy", "NATURGY IBERIA S.A.", "utilities.heating", 0),
    p(
        "Movistar",
        "TELEFONICA DE ESPANA SAU",
        "telecom_and_internet.internet",
        0,
    ),
    p("Vodafone", "VODAFONE ESPANA SAU", "telecom_and_internet.mobile", 0),
    p("Orange", "ORANGE ESPAGNE SAU", "telecom_and_internet.mobile", 0),
    p("Mapfre", "MAPFRE ESPANA", "insurance.vehicle", 0),
    p(
        "Mutua Madrileña",
        "MUTUA MADRILENA AUTOMOVILISTA",
        "insurance.vehicle",
        0,
    ),
    p("Sanitas", "SANITAS SA DE SEGUROS", "insurance.health", 0),
    p("Canal de Isabel II", "CANAL DE ISABEL II", "utilities.water", 0),
    p("Netflix", "NETFLIX.COM", "subscriptions.streaming", 0),
    p("Spotify", "SPOTIFY AB", "subscriptions.streaming", 0),
    p("Basic-Fit", "BASIC FIT SPAIN SA", "health.fitness", 0),
];

const EMPLOYERS: &[(&str, &str)] = &[
    ("Acme Ibérica", "ACME IBERICA SL"),
    ("Construcciones Navarro", "CONSTRUCCIONES NAVARRO SA"),
    ("Ayuntamiento de Valencia", "AYUNTAMIENTO DE VALENCIA"),
    ("Logística Sánchez", "LOGISTICA SANCHEZ SL"),
];

const PEOPLE: &[&str] = &[
    "María García",
    "Javier Fernández",
    "Lucía Martínez",
    "Carlos Sánchez",
    "Ana López",
    "David Romero",
    "Laura Torres",
    "Pablo Navarro",
];

pub(super) fn record(g: &mut Gen) -> Text {
    #[derive(Clone, Copy)]
    enum Kind {
        Card,
        Recibo,
        Salary,
        Rent,
        Bizum,
        Transfer,
        Cash,
        Fee,
        Tax,
        Savings,
    }
    let (day, month) = g.day_month();
    let month_name = MONTHS[(month - 1) as usize];
    match g.weighted(&[
        (42, Kind::Card),
        (18, Kind::Recibo),
        (6, Kind::Salary),
        (5, Kind::Rent),
        (6, Kind::Bizum),
        (3, Kind::Transfer),
        (6, Kind::Cash),
        (4, Kind::Fee),
        (2, Kind::Tax),
        (4, Kind::Savings),
    ]) {
        Kind::Card => {
            let shop = *g.pick(SHOPS);
            let name = shop.written(Style::Plain);
            let city = *g.pick(CITIES);
            let card = format!("{}XXXXXXXX{}", g.digits(4), g.digits(4));
            let description = match g.between(0, 3) {
                0 => format!("COMPRA TARJ. {card} {name} {city}"),
                1 => format!("PAGO CON TARJETA {name} {city}"),
                2 => format!(
                    "COMPRA EN {name}, CON LA TARJETA : {card} EL 2024-{month:02}-{day:02}"
                ),
                _ => format!("COMPRA TARJETA {} {name}-{city}", g.digits(4)),
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
        Kind::Recibo => {
            let creditor = *g.pick(CREDITORS);
            let description = match g.between(0, 2) {
                0 => format!("RECIBO {} Nº RECIBO {}", creditor.text, g.digits(16)),
                1 => format!(
                    "RECIBO {} REF. MANDATO {} {month_name} 2024",
                    creditor.text,
                    g.code(12)
                ),
                _ => format!("ADEUDO RECIBO {}", creditor.text),
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
            let description = match g.chance(50) {
                true => format!("TRANSFERENCIA DE {written}, CONCEPTO NOMINA {month_name} 2024."),
                false => format!("NOMINA {written} {month:02}/2024"),
            };
            Text::new(
                description,
                typical_cents(g, "income.salary"),
                Some(employer),
                "income.salary",
            )
        }
        Kind::Rent => {
            let landlord = *g.pick(&["Antonio Ruiz", "Inmobiliaria Sol", "Carmen Díaz"]);
            let written = super::upper(landlord, Style::Plain);
            let description = format!(
                "TRANSFERENCIA A FAVOR DE {written} CONCEPTO: ALQUILER {month_name}"
            );
            Text::new(
                description,
                -typical_cents(g, "housing.rent"),
                Some(landlord),
                "housing.rent",
            )
        }
        Kind::Bizum => {
            let person = *g.pick(PEOPLE);
            let written = super::upper(person, Style::Plain);
            let concept = *g.pick(&["CENA", "REGALO", "LOTERIA", "ENTRADAS"]);
            let cents = g.between(500, 8_000);
            match g.chance(60) {
                true => Text::new(
                    format!("BIZUM ENVIADO A {written} {concept}"),
                    -cents,
                    Some(person),
                    "transfer.to_others",
                ),
                false => Text::new(
                    format!("BIZUM DE {written} CONCEPTO {concept}"),
                    cents,
                    Some(person),
                    "transfer.from_others",
                ),
            }
        }
        Kind::Transfer => {
            let person = *g.pick(PEOPLE);
            let written = super::upper(person, Style::Plain);
            Text::new(
                format!("TRANSFERENCIA A {written} CONCEPTO: VIAJE"),
                -g.between(2_000, 40_000),
                Some(person),
                "transfer.to_others",
            )
        }
        Kind::Cash => {
            let city = *g.pick(CITIES);
            let description = match g.between(0, 2) {
                0 => format!(
                    "REINTEGRO CAJERO {} {city}",
                    g.pick(&["CAIXABANK", "BBVA", "SANTANDER", "SABADELL"])
                ),
                1 => format!("RETIRADA DE EFECTIVO EN CAJERO {}", g.digits(4)),
                _ => format!("DISPOSICION EN CAJERO {day:02}/{month:02} {city}"),
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
                ("COMISION MANTENIMIENTO", "fees_and_charges.bank"),
                ("COMISION ADMINISTRACION CUENTA", "fees_and_charges.bank"),
                ("COMISION POR DESCUBIERTO", "fees_and_charges.late"),
                ("CUOTA TARJETA CREDITO", "fees_and_charges.bank"),
            ]);
            Text::new(description.to_owned(), -typical_cents(g, sub), None, sub)
        }
        Kind::Tax => {
            let (description, sub) = *g.pick(&[
                ("IMPUESTOS AEAT MOD 130 #", "taxes.income"),
                ("PAGO DE IMPUESTOS AGENCIA TRIBUTARIA #", "taxes.other"),
            ]);
            let description = description.replace('#', &g.digits(13));
            Text::new(
                description,
                -typical_cents(g, sub),
                Some("Agencia Tributaria"),
                sub,
            )
        }
        Kind::Savings => {
            let (description, cents) = *g.pick(&[
                ("TRASPASO A CUENTA AHORRO", -1),
                ("TRASPASO DESDE CUENTA AHORRO", 1),
                ("TRASPASO A CUENTA NARANJA", -1),
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
