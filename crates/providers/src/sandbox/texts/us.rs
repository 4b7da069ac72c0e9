//! US card and ACH texts: card descriptors with processors and wallets,
//! store numbers, city and state (collapsed, or in the fixed-width fields
//! of the descriptor), payroll and bill-pay ACH entries, Zelle and Venmo,
//! cash machines, fees and transfers to savings.

use super::{Gen, Party, Style, Text, cut, p, typical_cents};
use tributary_domain::enrich::hints::CategoryHint;

/// Chains: their terminals write their own name, often with a store
/// number.
const CHAINS: &[Party] = &[
    p("Starbucks", "", "food_and_drink.cafes", 5814),
    p("Blue Bottle", "BLUE BOTTLE COFFEE", "food_and_drink.cafes", 5814),
    p("Peet's Coffee", "", "food_and_drink.cafes", 5814),
    p("Dunkin'", "DUNKIN", "food_and_drink.fast_food", 5814),
    p("McDonald's", "", "food_and_drink.fast_food", 5814),
    p("Chipotle", "CHIPOTLE", "food_and_drink.fast_food", 5814),
    p("Taco Bell", "", "food_and_drink.fast_food", 5814),
    p("Chick-fil-A", "", "food_and_drink.fast_food", 5814),
    p("Shake Shack", "", "food_and_drink.fast_food", 5814),
    p("Panera Bread", "", "food_and_drink.fast_food", 5814),
    p("Olive Garden", "", "food_and_drink.restaurants", 5812),
    p("Whole Foods", "WHOLEFDS MKT", "groceries.supermarkets", 5411),
    p("Trader Joe's", "", "groceries.supermarkets", 5411),
    p("Safeway", "", "groceries.supermarkets", 5411),
    p("Kroger", "", "groceries.supermarkets", 5411),
    p("Sprouts", "SPROUTS FARMERS MAR", "groceries.supermarkets", 5411),
    p("Costco", "COSTCO WHSE", "shopping.general", 5300),
    p("Walmart", "WAL-MART SUPERCENTER", "shopping.general", 5311),
    p("Target", "", "shopping.general", 5310),
    p("Home Depot", "THE HOME DEPOT", "shopping.home", 5200),
    p("Best Buy", "", "shopping.electronics", 5732),
    p("Barnes & Noble", "", "education.books", 5942),
    p("Walgreens", "", "health.pharmacy", 5912),
    p("CVS", "CVS/PHARMACY", "health.pharmacy", 5912),
    p("Shell", "SHELL OIL", "transport.fuel", 5541),
    p("Chevron", "", "transport.fuel", 5541),
    p("Mobil", "", "transport.fuel", 5541),
    p("Planet Fitness", "", "health.fitness", 7997),
    p("AMC Theatres", "AMC", "entertainment.events", 7832),
];

/// Local shops, often behind a processor (Square, Toast).
const LOCAL: &[Party] = &[
    p("Joe's Pizza", "", "food_and_drink.restaurants", 5812),
    p("Lucky Dragon", "", "food_and_drink.restaurants", 5812),
    p("Mission Taqueria", "", "food_and_drink.restaurants", 5812),
    p("Sunrise Diner", "", "food_and_drink.restaurants", 5812),
    p("Golden Gate Deli", "", "food_and_drink.restaurants", 5812),
    p("Bella Napoli", "", "food_and_drink.restaurants", 5812),
    p("Tartine Bakery", "", "food_and_drink.cafes", 5462),
    p("Corner Brew", "", "food_and_drink.cafes", 5814),
    p("Ritual Coffee", "", "food_and_drink.cafes", 5814),
    p("Little Owl Coffee", "", "food_and_drink.cafes", 5814),
    p("The Rusty Anchor", "", "food_and_drink.bars", 5813),
    p("Oak & Barrel Pub", "", "food_and_drink.bars", 5813),
    p("Green Leaf Grocery", "", "groceries.supermarkets", 5411),
    p("Fresh Valley Market", "", "groceries.supermarkets", 5411),
    p("Hank's Butcher Shop", "", "groceries.specialty", 5499),
    p("Bloom Flower Studio", "", "shopping.other", 5992),
    p("Second Chapter Books", "", "education.books", 5942),
    p("Brightside Dental", "", "health.dental", 8021),
    p("Riverside Auto Repair", "", "transport.vehicle", 7538),
    p("Sparkle Car Wash", "", "transport.vehicle", 7542),
    p("Main Street Hardware", "", "shopping.home", 5251),
    p("Yoga Loft", "", "health.fitness", 7997),
];

const CITIES: &[(&str, &str)] = &[
    ("OAKLAND", "CA"),
    ("SAN FRANCISCO", "CA"),
    ("LOS ANGELES", "CA"),
    ("NEW YORK", "NY"),
    ("BROOKLYN", "NY"),
    ("AUSTIN", "TX"),
    ("HOUSTON", "TX"),
    ("SEATTLE", "WA"),
    ("CHICAGO", "IL"),
    ("PORTLAND", "OR"),
    ("DENVER", "CO"),
    ("BOSTON", "MA"),
    ("ATLANTA", "GA"),
    ("MIAMI", "FL"),
];

const PEOPLE: &[&str] = &[
    "John Smith",
    "Maria Garcia",
    "David Johnson",
    "Emily Chen",
    "Michael Brown",
    "Sarah Miller",
    "James Wilson",
    "Priya Patel",
    "Robert Davis",
    "Laura Martinez",
    "Kevin Nguyen",
    "Ashley Thompson",
];

const EMPLOYERS: &[(&str, &str)] = &[
    ("Northwind Traders", "NORTHWIND TRADERS INC"),
    ("Globex", "GLOBEX CORPORATION"),
    ("Initech", "INITECH LLC"),
    ("Bluebird Health", "BLUEBIRD HEALTH INC"),
    ("Acme", "ACME CORP"),
    ("Summit Logistics", "SUMMIT LOGISTICS LLC"),
];

const LANDLORDS: &[&str] = &[
    "Greenview Property Management",
    "Parkside Apartments",
    "Oakwood Residential",
    "Harbor View Homes",
];

/// Bills paid by ACH: the name, its spelling, what it is.
const BILLERS: &[Party] = &[
    p("PG&E", "PGANDE", "utilities.electricity", 0),
    p("Con Edison", "CON ED OF NY", "utilities.electricity", 0),
    p("Duke Energy", "", "utilities.electricity", 0),
    p("Comcast", "COMCAST CABLE", "telecom_and_internet.internet", 0),
    p("AT&T", "ATT", "telecom_and_internet.mobile", 0),
    p("Verizon", "VERIZON WIRELESS", "telecom_and_internet.mobile", 0),
    p("T-Mobile", "", "telecom_and_internet.mobile", 0),
    p("Geico", "GEICO", "insurance.vehicle", 0),
    p("State Farm", "STATE FARM RO 27", "insurance.other", 0),
    p("Progressive", "PROGRESSIVE INS", "insurance.vehicle", 0),
];

/// Online services, as their own descriptors write them.
const ONLINE: &[(&str, &str, &str)] = &[
    (
        "Apple",
        "APPLE.COM/BILL 866-712-7753 CA",
        "subscriptions.software",
    ),
    (
        "Google",
        "GOOGLE *Google One g.co/helppay# CA",
        "subscriptions.software",
    ),
    (
        "YouTube Premium",
        "GOOGLE *YouTubePremium g.co/helppay# CA",
        "subscriptions.streaming",
    ),
    ("Netflix", "NETFLIX.COM LOS GATOS CA", "subscriptions.streaming"),
    ("Spotify", "SPOTIFY USA 877-7781161", "subscriptions.streaming"),
    ("Hulu", "HLU*Hulu 1234567890-U", "subscriptions.streaming"),
    ("Disney+", "DISNEY PLUS 888-905-7888 CA", "subscriptions.streaming"),
    ("OpenAI", "OPENAI *CHATGPT SUBSCR", "subscriptions.software"),
    ("Uber", "UBER *TRIP HELP.UBER.COM CA", "transport.taxi"),
    ("Uber Eats", "UBER *EATS", "food_and_drink.delivery"),
    ("Lyft", "LYFT *RIDE SUN 10PM", "transport.taxi"),
    ("DoorDash", "DOORDASH*JOES PIZZA", "food_and_drink.delivery"),
    ("Amazon", "AMZN Mktp US*#", "shopping.online"),
    ("Amazon", "Amazon.com*#", "shopping.online"),
];

/// Sold through PayPal: the descriptor's name and who it is.
const PAYPAL: &[(&str, &str, &str)] = &[
    ("eBay", "EBAY", "shopping.online"),
    ("Etsy", "ETSY", "shopping.online"),
    ("Steam", "STEAM GAMES", "entertainment.games"),
    ("Nintendo", "NINTENDO", "entertainment.games"),
    ("Airbnb", "AIRBNB", "travel.lodging"),
    ("Walmart", "WALMART", "shopping.general"),
];

pub(super) fn record(g: &mut Gen) -> Text {
    #[derive(Clone, Copy)]
    enum Kind {
        Card,
        Online,
        PayPal,
        Salary,
        Rent,
        Bill,
        Zelle,
        Cash,
        Fee,
        Interest,
        Tax,
        Savings,
        CardPayment,
    }
    match g.weighted(&[
        (42, Kind::Card),
        (9, Kind::Online),
        (3, Kind::PayPal),
        (6, Kind::Salary),
        (4, Kind::Rent),
        (9, Kind::Bill),
        (6, Kind::Zelle),
        (5, Kind::Cash),
        (3, Kind::Fee),
        (2, Kind::Interest),
        (2, Kind::Tax),
        (5, Kind::Savings),
        (3, Kind::CardPayment),
    ]) {
        Kind::Card => card(g),
        Kind::Online => {
            let (name, text, sub) = *g.pick(ONLINE);
            let text = text.replace('#', &g.code(9));
            let cents = typical_cents(g, sub);
            Text::new(text, -cents, Some(name), sub)
        }
        Kind::PayPal => {
            let (name, text, sub) = *g.pick(PAYPAL);
            let cents = typical_cents(g, sub);
            let text = match g.chance(50) {
                true => format!("PAYPAL *{text} 402-935-7733 CA"),
                false => format!("PAYPAL *{} 4029357733", text.replace(' ', "")),
            };
            Text::new(text, -cents, Some(name), sub)
        }
        Kind::Salary => {
            let (name, text) = *g.pick(EMPLOYERS);
            let person = g.pick(PEOPLE).to_uppercase();
            let text = match g.between(0, 2) {
                0 => format!("{text} PAYROLL PPD ID: {}", g.digits(10)),
                1 => format!(
                    "{text} DES:PAYROLL ID:{} INDN:{person} CO ID:{} PPD",
                    g.code(10),
                    g.digits(10)
                ),
                _ => format!("{text} DIRECT DEP {}", g.digits(6)),
            };
            let cents = typical_cents(g, "income.salary");
            Text::new(text, cents, Some(name), "income.salary")
        }
        Kind::Rent => {
            let landlord = *g.pick(LANDLORDS);
            let written = landlord.to_uppercase();
            let month = g.between(1, 12);
            let text = match g.between(0, 2) {
                0 => format!("{written} WEB PMTS {}", g.code(6)),
                1 => format!("ONLINE PAYMENT {written} RENT {month:02}/24"),
                _ => format!("{written} DES:RENT ID:{} PPD", g.code(8)),
            };
            let cents = typical_cents(g, "housing.rent");
            Text::new(text, -cents, Some(landlord), "housing.rent")
        }
        Kind::Bill => {
            let biller = *g.pick(BILLERS);
            let written = biller.written(Style::Plain);
            let person = g.pick(PEOPLE).to_uppercase();
            let text = match g.between(0, 2) {
                0 => format!("{written} ONLINE PMT CKF{}POS", g.digits(9)),
                1 => format!(
                    "{written} DES:BILL PAY ID:{} INDN:{person} CO ID:{} PPD",
                    g.code(9),
                    g.digits(10)
                ),
                _ => format!("{written} WEB ONLINE {}", g.code(8)),
            };
            let cents = typical_cents(g, biller.sub);
            Text::new(text, -cents, Some(biller.name), biller.sub)
        }
        Kind::Zelle => {
            let person = *g.pick(PEOPLE);
            let written = person.to_uppercase();
            let cents = g.between(1_000, 30_000);
            match g.between(0, 3) {
                0 => Text::new(
                    format!("ZELLE PAYMENT TO {written} CONF# {}", g.code(9)),
                    -cents,
                    Some(person),
                    "transfer.to_others",
                ),
                1 => Text::new(
                    format!("ZELLE PAYMENT FROM {written} CONF# {}", g.code(9)),
                    cents,
                    Some(person),
                    "transfer.from_others",
                ),
                2 => Text::new(
                    format!("VENMO PAYMENT {} WEB ID: 3264681992", g.digits(10)),
                    -cents,
                    Some("Venmo"),
                    "transfer.to_others",
                ),
                _ => Text::new(
                    format!("VENMO CASHOUT {} PPD ID: 5264681992", g.digits(10)),
                    cents,
                    Some("Venmo"),
                    "transfer.from_others",
                ),
            }
        }
        Kind::Cash => {
            let (city, state) = *g.pick(CITIES);
            let (day, month) = g.day_month();
            let text = match g.between(0, 2) {
                0 => format!(
                    "ATM WITHDRAWAL {} {month:02}{day:02} {} MAIN ST {city} {state}",
                    g.digits(6),
                    g.between(1, 999)
                ),
                1 => format!(
                    "NON-CHASE ATM WITHDRAW {} {month:02}/{day:02} {city} {state}",
                    g.digits(6)
                ),
                _ => format!(
                    "BKOFAMERICA ATM {month:02}/{day:02} #{} WITHDRWL {city} {state}",
                    g.digits(9)
                ),
            };
            let cents = typical_cents(g, "cash.withdrawal");
            Text::new(text, -cents, None, "cash.withdrawal")
        }
        Kind::Fee => {
            let (text, sub) = *g.pick(&[
                ("MONTHLY SERVICE FEE", "fees_and_charges.bank"),
                ("OVERDRAFT FEE FOR A $23.95 ITEM", "fees_and_charges.late"),
                ("FOREIGN TRANSACTION FEE", "fees_and_charges.foreign"),
                ("NON-CHASE ATM FEE-WITH", "fees_and_charges.atm"),
                ("ATM FEE", "fees_and_charges.atm"),
            ]);
            let cents = typical_cents(g, sub);
            Text::new(text.to_owned(), -cents, None, sub)
        }
        Kind::Interest => {
            let text = *g.pick(&["INTEREST PAYMENT", "INTEREST EARNED", "Interest Paid"]);
            Text::new(
                text.to_owned(),
                g.between(5, 4_000),
                None,
                "income.interest",
            )
        }
        Kind::Tax => match g.chance(75) {
            true => Text::new(
                format!("IRS USATAXPYMT {}", g.digits(15)),
                -typical_cents(g, "taxes.income"),
                Some("IRS"),
                "taxes.income",
            ),
            false => Text::new(
                format!("IRS TREAS 310 TAX REF {}", g.digits(6)),
                typical_cents(g, "taxes.income"),
                Some("IRS"),
                "income.refunds",
            ),
        },
        Kind::Savings => {
            let account = g.digits(4);
            let cents = g.between(5_000, 100_000);
            match g.between(0, 2) {
                0 => Text::new(
                    format!(
                        "ONLINE TRANSFER TO SAV ...{account} TRANSACTION#: {}",
                        g.digits(10)
                    ),
                    -cents,
                    None,
                    "transfer.own_accounts",
                ),
                1 => Text::new(
                    format!("TRANSFER TO SAVINGS XXXXXX{account}"),
                    -cents,
                    None,
                    "transfer.own_accounts",
                ),
                _ => Text::new(
                    format!(
                        "ONLINE TRANSFER FROM CHK ...{account} TRANSACTION#: {}",
                        g.digits(10)
                    ),
                    cents,
                    None,
                    "transfer.own_accounts",
                ),
            }
        }
        Kind::CardPayment => {
            let (name, text) = *g.pick(&[
                ("Chase", "PAYMENT TO CHASE CARD ENDING IN #"),
                ("Citi", "CITI AUTOPAY PAYMENT #"),
                ("American Express", "AMEX EPAYMENT ACH PMT #"),
                ("Discover", "DISCOVER E-PAYMENT #"),
            ]);
            let text = text.replace('#', &g.digits(4));
            Text::new(
                text,
                -g.between(20_000, 300_000),
                Some(name),
                "transfer.credit_card_payment",
            )
        }
    }
}

/// A card purchase: a chain's or a local shop's descriptor in one of the
/// shapes US banks show.
fn card(g: &mut Gen) -> Text {
    let local = g.chance(45);
    let shop = *g.pick(if local { LOCAL } else { CHAINS });
    let mut name = shop.written(Style::Plain);
    // Many terminals drop the apostrophe (`JOES PIZZA`).
    if g.chance(40) {
        name = name.replace('\'', "");
    }
    let processor = match local {
        true => *g.pick(&["", "SQ *", "TST* ", "TST*", "SQ *"]),
        false => "",
    };
    let (city, state) = *g.pick(CITIES);
    let (day, month) = g.day_month();
    let store_digits = g.between(3, 5).unsigned_abs() as usize;
    let store = g.digits(store_digits);
    let text = match g.between(0, 7) {
        0 => format!("{processor}{name} {city} {state}"),
        // The descriptor's fixed-width fields: name 25, city 13, state.
        1 => format!(
            "{:<25}{:<13}{state}",
            cut(&format!("{processor}{name}"), 24),
            cut(city, 12)
        ),
        2 if !local => format!("{name} #{store} {city} {state}"),
        2 => format!("{processor}{name} {month:02}/{day:02} {city} {state}"),
        3 => format!("POS DEBIT {month:02}/{day:02} {processor}{name} {city} {state}"),
        4 => format!("DEBIT CARD PURCHASE - {processor}{name} {city} {state}"),
        5 => format!(
            "PURCHASE AUTHORIZED ON {month:02}/{day:02} {processor}{name} {city} {state} S{} CARD {}",
            g.digits(15),
            g.digits(4)
        ),
        6 => format!(
            "CHECKCARD {month:02}{day:02} {processor}{name} {city} {state} {}",
            g.digits(23)
        ),
        _ => format!(
            "CARD {} {processor}{name} {month:02}/{day:02} {city} {state}",
            g.digits(4)
        ),
    };
    let cents = typical_cents(g, shop.sub);
    let text = Text::new(text, -cents, Some(shop.name), shop.sub);
    // Card data through an aggregator carries the merchant category code
    // for about a third of purchases.
    match g.chance(33) {
        true => text.hint(CategoryHint::Mcc(shop.mcc)),
        false => text,
    }
}
