//! What a provider or a statement says of a transaction's kind, and the
//! crosswalks from each such code to the taxonomy (docs/enrichment.md,
//! "Where a category comes from").
//!
//! A hint is kept with the transaction (as [`Hints::to_text`]'s words), so
//! re-enriching after the tables change needs nothing from the provider
//! again.

use rust_decimal::Decimal;
use std::fmt;

/// One code a provider or a statement gave for a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CategoryHint {
    /// Plaid's `personal_finance_category`: the detailed code
    /// (`FOOD_AND_DRINK_COFFEE`) where given, else the primary.
    Plaid(String),
    /// Akahu's category: the NZFCC category's name
    /// (`Cafes and restaurants`), or its personal-finance group's.
    Nzfcc(String),
    /// A card merchant category code (ISO 18245).
    Mcc(u16),
    /// An ISO 20022 bank transaction code, `DOMAIN/FAMILY/SUBFAMILY`
    /// (`PMNT/ICDT/ESCT`); a proprietary code is not one.
    BankTransactionCode(String),
    /// An ISO 20022 purpose code (`SALA`, `RENT`).
    Purpose(String),
    /// An OFX `TRNTYPE` (`INT`, `FEE`, `ATM`).
    OfxType(String),
    /// An OFX `SIC` (Standard Industrial Classification).
    Sic(u16),
    /// A German business transaction code (Geschäftsvorfallcode), the
    /// three digits that open a structured MT940 `:86:`.
    Gvc(u16),
}

impl CategoryHint {
    /// This hint's subcategory id, for a transaction of this amount (some
    /// codes mean one thing coming in and another going out: interest).
    pub fn subcategory(&self, amount: Decimal) -> Option<&'static str> {
        let incoming = amount.is_sign_positive() && !amount.is_zero();
        match self {
            CategoryHint::Plaid(code) => plaid(code),
            CategoryHint::Nzfcc(name) => nzfcc(name),
            CategoryHint::Mcc(code) => mcc(*code),
            CategoryHint::BankTransactionCode(code) => bank_transaction_code(code, incoming),
            CategoryHint::Purpose(code) => purpose(code, incoming),
            CategoryHint::OfxType(kind) => ofx_type(kind, incoming),
            // Retail SIC codes (52xx–59xx) are the ones card networks took
            // over as merchant category codes, with the same meaning; the
            // rest of SIC is not read.
            CategoryHint::Sic(code) if (5200..6000).contains(code) => mcc(*code),
            CategoryHint::Sic(_) => None,
            CategoryHint::Gvc(code) => gvc(*code, incoming),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            CategoryHint::Plaid(_) => "plaid",
            CategoryHint::Nzfcc(_) => "nzfcc",
            CategoryHint::Mcc(_) => "mcc",
            CategoryHint::BankTransactionCode(_) => "btc",
            CategoryHint::Purpose(_) => "purpose",
            CategoryHint::OfxType(_) => "ofx",
            CategoryHint::Sic(_) => "sic",
            CategoryHint::Gvc(_) => "gvc",
        }
    }

    /// A hint from its stored word (`mcc:5812`); `None` for a word this
    /// version does not know.
    fn parse(word: &str) -> Option<CategoryHint> {
        let (kind, value) = word.split_once(':')?;
        let text = || value.replace('_', " ");
        Some(match kind {
            "plaid" => CategoryHint::Plaid(value.to_owned()),
            "nzfcc" => CategoryHint::Nzfcc(text()),
            "mcc" => CategoryHint::Mcc(value.parse().ok()?),
            "btc" => CategoryHint::BankTransactionCode(value.to_owned()),
            "purpose" => CategoryHint::Purpose(value.to_owned()),
            "ofx" => CategoryHint::OfxType(value.to_owned()),
            "sic" => CategoryHint::Sic(value.parse().ok()?),
            "gvc" => CategoryHint::Gvc(value.parse().ok()?),
            _ => return None,
        })
    }
}

impl fmt::Display for CategoryHint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.kind())?;
        match self {
            CategoryHint::Plaid(code)
            | CategoryHint::BankTransactionCode(code)
            | CategoryHint::Purpose(code)
            | CategoryHint::OfxType(code) => f.write_str(code),
            // A name's spaces would split the stored words.
            CategoryHint::Nzfcc(name) => f.write_str(&name.replace(' ', "_")),
            CategoryHint::Mcc(code) | CategoryHint::Sic(code) | CategoryHint::Gvc(code) => {
                write!(f, "{code}")
            }
        }
    }
}

/// A transaction's hints, most specific first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hints(pub Vec<CategoryHint>);

impl Hints {
    /// The first subcategory any hint gives.
    pub fn subcategory(&self, amount: Decimal) -> Option<&'static str> {
        self.0.iter().find_map(|hint| hint.subcategory(amount))
    }

    /// The stored form: the hints' words, space-separated; `None` for none.
    pub fn to_text(&self) -> Option<String> {
        (!self.0.is_empty()).then(|| {
            self.0
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        })
    }

    /// The hints of a stored text; words this version does not know are
    /// skipped.
    pub fn from_text(text: Option<&str>) -> Hints {
        Hints(
            text.unwrap_or_default()
                .split_whitespace()
                .filter_map(CategoryHint::parse)
                .collect(),
        )
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn push(&mut self, hint: CategoryHint) {
        self.0.push(hint);
    }
}

/// Card merchant category codes (ISO 18245), by range and by code.
fn mcc(code: u16) -> Option<&'static str> {
    Some(match code {
        3000..=3350 | 4511 => "travel.flights",
        3351..=3500 | 7512 | 7513 | 7519 => "travel.car_rental",
        3501..=3999 | 7011 | 7012 | 7032 | 7033 => "travel.lodging",
        4111 | 4112 | 4131 => "transport.public",
        4121 => "transport.taxi",
        4784 | 7523 => "transport.parking",
        4411 | 4722 | 4723 => "travel.other",
        4457 | 4468 | 4582 | 4789 => "transport.other",
        4812 | 4814 => "telecom_and_internet.mobile",
        4816 => "telecom_and_internet.internet",
        4899 => "telecom_and_internet.tv_and_landline",
        4829 => "transfer.to_others",
        4900 => "utilities.other",
        5411 | 5300 => "groceries.supermarkets",
        5422 | 5441 | 5451 | 5499 | 5921 => "groceries.specialty",
        5462 => "food_and_drink.cafes",
        5811 | 5812 => "food_and_drink.restaurants",
        5813 => "food_and_drink.bars",
        5814 => "food_and_drink.fast_food",
        5541 | 5542 | 5552 | 5983 => "transport.fuel",
        5511 | 5521 | 5531 | 5532 | 5533 | 5571 | 5592 | 5598 | 5599 | 7531 | 7534 | 7535
        | 7538 | 7542 | 7549 => "transport.vehicle",
        5912 => "health.pharmacy",
        5047 | 5975 | 5976 | 8011 | 8031 | 8041 | 8042 | 8043 | 8049 | 8050 | 8062 | 8071
        | 8099 => "health.doctors",
        8021 => "health.dental",
        7941 | 7997 => "health.fitness",
        5310 | 5311 | 5331 | 5399 => "shopping.general",
        5611 | 5621 | 5631 | 5641 | 5651 | 5655 | 5661 | 5681 | 5691 | 5697 | 5698 | 5699
        | 5137 | 5139 => "shopping.clothing",
        5045 | 5722 | 5732 | 5734 | 5946 => "shopping.electronics",
        5039 | 5200 | 5211 | 5231 | 5251 | 5261 | 5712 | 5713 | 5714 | 5718 | 5719 => {
            "shopping.home"
        }
        5964..=5969 => "shopping.online",
        5815 | 5817 | 5818 => "subscriptions.other",
        5816 | 7993 | 7994 => "entertainment.games",
        5942 | 5943 | 5192 => "education.books",
        5994 => "subscriptions.news",
        5945 | 5970 | 5971 | 5972 | 5973 | 7932 | 7933 => "entertainment.hobbies",
        7829 | 7832 | 7841 | 7911 | 7922 | 7929 | 7991 | 7996 | 7998 | 7999 => {
            "entertainment.events"
        }
        6010 | 6011 => "cash.withdrawal",
        6211 => "investments.trades",
        5960 | 6300 | 6381 | 6399 => "insurance.other",
        8211 | 8220 | 8241 | 8244 | 8249 | 8299 => "education.tuition",
        8351 => "education.childcare",
        8398 | 8661 => "charity.donations",
        9211 | 9222 => "government.fines",
        9311 => "taxes.other",
        9223 | 9399 | 9402 | 9405 => "government.services",
        _ => return None,
    })
}

/// ISO 20022 bank transaction codes: the sub-family says the most, then
/// the domain and family.
fn bank_transaction_code(code: &str, incoming: bool) -> Option<&'static str> {
    let mut parts = code.split('/');
    let (domain, family, sub_family) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    Some(match (domain, family, sub_family) {
        (_, _, "SALA") => "income.salary",
        (_, _, "CWDL") => "cash.withdrawal",
        (_, _, "CDPT") => "cash.deposit",
        (_, _, "CHRG" | "FEES" | "COMM" | "COMT") => "fees_and_charges.bank",
        (_, _, "INTR") if incoming => "income.interest",
        (_, _, "INTR") => "fees_and_charges.interest",
        (_, _, "TAXE" | "WITH") => "taxes.other",
        (_, _, "DVCA") => "income.dividends",
        ("SECU", ..) => "investments.trades",
        (_, "ACCB", _) => "transfer.own_accounts",
        _ => return None,
    })
}

/// ISO 20022 external purpose codes.
fn purpose(code: &str, incoming: bool) -> Option<&'static str> {
    Some(match code {
        "SALA" | "BONU" | "PAYR" => "income.salary",
        "PENS" | "BENE" | "SSBE" | "ALLW" => "income.benefits",
        "DIVD" => "income.dividends",
        "INTE" if incoming => "income.interest",
        "INTE" => "fees_and_charges.interest",
        "RENT" => "housing.rent",
        "HLRP" => "housing.mortgage",
        "ELEC" => "utilities.electricity",
        "GASB" => "utilities.heating",
        "WTER" => "utilities.water",
        "PHON" => "telecom_and_internet.mobile",
        "NWCH" => "telecom_and_internet.internet",
        "CBTV" => "telecom_and_internet.tv_and_landline",
        "HLTI" => "insurance.health",
        "PPTI" => "insurance.home",
        "INPC" => "insurance.vehicle",
        "LIFI" => "insurance.life",
        "INSU" => "insurance.other",
        "CCRD" | "ICCP" => "transfer.credit_card_payment",
        "CHAR" => "charity.donations",
        "TAXS" | "VATX" | "NITX" | "ESTX" => "taxes.other",
        "INTX" => "taxes.income",
        "PTXP" => "taxes.property",
        "GOVT" => "government.services",
        "STDY" => "education.tuition",
        "SUBS" => "subscriptions.other",
        "CASH" => "transfer.own_accounts",
        _ => return None,
    })
}

/// OFX `TRNTYPE`s that say what the money was (most say only how it moved).
fn ofx_type(kind: &str, incoming: bool) -> Option<&'static str> {
    Some(match kind {
        "INT" if incoming => "income.interest",
        "INT" => "fees_and_charges.interest",
        "DIV" => "income.dividends",
        "FEE" | "SRVCHG" => "fees_and_charges.bank",
        "ATM" if incoming => "cash.deposit",
        "ATM" => "cash.withdrawal",
        _ => return None,
    })
}

/// German business transaction codes (the DK's Geschäftsvorfallcodes).
fn gvc(code: u16, incoming: bool) -> Option<&'static str> {
    Some(match code {
        83 => "cash.withdrawal",
        153 => "income.salary",
        805 | 808 => "fees_and_charges.bank",
        814 if incoming => "income.interest",
        814 => "fees_and_charges.interest",
        _ => return None,
    })
}

/// Plaid's personal finance categories: the detailed code first, then the
/// primary it starts with.
fn plaid(code: &str) -> Option<&'static str> {
    const DETAILED: &[(&str, &str)] = &[
        ("INCOME_WAGES", "income.salary"),
        ("INCOME_DIVIDENDS", "income.dividends"),
        ("INCOME_INTEREST_EARNED", "income.interest"),
        ("INCOME_RETIREMENT_PENSION", "income.benefits"),
        ("INCOME_UNEMPLOYMENT", "income.benefits"),
        ("INCOME_TAX_REFUND", "income.refunds"),
        ("TRANSFER_IN_ACCOUNT_TRANSFER", "transfer.own_accounts"),
        ("TRANSFER_IN_SAVINGS", "transfer.own_accounts"),
        (
            "TRANSFER_IN_CASH_ADVANCES_AND_LOANS",
            "transfer.from_others",
        ),
        ("TRANSFER_IN_DEPOSIT", "cash.deposit"),
        (
            "TRANSFER_IN_INVESTMENT_AND_RETIREMENT_FUNDS",
            "investments.contributions",
        ),
        ("TRANSFER_OUT_ACCOUNT_TRANSFER", "transfer.own_accounts"),
        ("TRANSFER_OUT_SAVINGS", "transfer.own_accounts"),
        ("TRANSFER_OUT_WITHDRAWAL", "cash.withdrawal"),
        (
            "TRANSFER_OUT_INVESTMENT_AND_RETIREMENT_FUNDS",
            "investments.contributions",
        ),
        (
            "LOAN_PAYMENTS_CREDIT_CARD_PAYMENT",
            "transfer.credit_card_payment",
        ),
        ("LOAN_PAYMENTS_MORTGAGE_PAYMENT", "housing.mortgage"),
        ("LOAN_PAYMENTS_CAR_PAYMENT", "transport.vehicle"),
        ("BANK_FEES_ATM_FEES", "fees_and_charges.atm"),
        (
            "BANK_FEES_FOREIGN_TRANSACTION_FEES",
            "fees_and_charges.foreign",
        ),
        ("BANK_FEES_INTEREST_CHARGE", "fees_and_charges.interest"),
        ("BANK_FEES_OVERDRAFT_FEES", "fees_and_charges.late"),
        ("BANK_FEES_INSUFFICIENT_FUNDS", "fees_and_charges.late"),
        ("ENTERTAINMENT_MUSIC_AND_AUDIO", "subscriptions.streaming"),
        ("ENTERTAINMENT_TV_AND_MOVIES", "subscriptions.streaming"),
        ("ENTERTAINMENT_VIDEO_GAMES", "entertainment.games"),
        (
            "ENTERTAINMENT_SPORTING_EVENTS_AMUSEMENT_PARKS_AND_MUSEUMS",
            "entertainment.events",
        ),
        ("FOOD_AND_DRINK_BEER_WINE_AND_LIQUOR", "food_and_drink.bars"),
        ("FOOD_AND_DRINK_COFFEE", "food_and_drink.cafes"),
        ("FOOD_AND_DRINK_FAST_FOOD", "food_and_drink.fast_food"),
        ("FOOD_AND_DRINK_GROCERIES", "groceries.supermarkets"),
        (
            "FOOD_AND_DRINK_VENDING_MACHINES",
            "food_and_drink.fast_food",
        ),
        (
            "GENERAL_MERCHANDISE_BOOKSTORES_AND_NEWSSTANDS",
            "education.books",
        ),
        (
            "GENERAL_MERCHANDISE_CLOTHING_AND_ACCESSORIES",
            "shopping.clothing",
        ),
        (
            "GENERAL_MERCHANDISE_CONVENIENCE_STORES",
            "groceries.supermarkets",
        ),
        ("GENERAL_MERCHANDISE_DEPARTMENT_STORES", "shopping.general"),
        ("GENERAL_MERCHANDISE_DISCOUNT_STORES", "shopping.general"),
        ("GENERAL_MERCHANDISE_ELECTRONICS", "shopping.electronics"),
        ("GENERAL_MERCHANDISE_ONLINE_MARKETPLACES", "shopping.online"),
        ("GENERAL_MERCHANDISE_SUPERSTORES", "shopping.general"),
        (
            "HOME_IMPROVEMENT_REPAIR_AND_MAINTENANCE",
            "housing.maintenance",
        ),
        ("MEDICAL_DENTAL_CARE", "health.dental"),
        ("MEDICAL_PHARMACIES_AND_SUPPLEMENTS", "health.pharmacy"),
        ("PERSONAL_CARE_GYMS_AND_FITNESS_CENTERS", "health.fitness"),
        ("GENERAL_SERVICES_AUTOMOTIVE", "transport.vehicle"),
        ("GENERAL_SERVICES_CHILDCARE", "education.childcare"),
        ("GENERAL_SERVICES_EDUCATION", "education.tuition"),
        ("GENERAL_SERVICES_INSURANCE", "insurance.other"),
        ("GOVERNMENT_AND_NON_PROFIT_DONATIONS", "charity.donations"),
        ("GOVERNMENT_AND_NON_PROFIT_TAX_PAYMENT", "taxes.other"),
        ("TRANSPORTATION_GAS", "transport.fuel"),
        ("TRANSPORTATION_PARKING", "transport.parking"),
        ("TRANSPORTATION_TOLLS", "transport.parking"),
        ("TRANSPORTATION_PUBLIC_TRANSIT", "transport.public"),
        ("TRANSPORTATION_TAXIS_AND_RIDE_SHARES", "transport.taxi"),
        ("TRAVEL_FLIGHTS", "travel.flights"),
        ("TRAVEL_LODGING", "travel.lodging"),
        ("TRAVEL_RENTAL_CARS", "travel.car_rental"),
        (
            "RENT_AND_UTILITIES_GAS_AND_ELECTRICITY",
            "utilities.electricity",
        ),
        (
            "RENT_AND_UTILITIES_INTERNET_AND_CABLE",
            "telecom_and_internet.internet",
        ),
        ("RENT_AND_UTILITIES_RENT", "housing.rent"),
        (
            "RENT_AND_UTILITIES_SEWAGE_AND_WASTE_MANAGEMENT",
            "utilities.water",
        ),
        (
            "RENT_AND_UTILITIES_TELEPHONE",
            "telecom_and_internet.mobile",
        ),
        ("RENT_AND_UTILITIES_WATER", "utilities.water"),
    ];
    const PRIMARY: &[(&str, &str)] = &[
        ("INCOME", "income.other"),
        ("TRANSFER_IN", "transfer.from_others"),
        ("TRANSFER_OUT", "transfer.to_others"),
        ("LOAN_PAYMENTS", "housing.other"),
        ("BANK_FEES", "fees_and_charges.bank"),
        ("ENTERTAINMENT", "entertainment.other"),
        ("FOOD_AND_DRINK", "food_and_drink.restaurants"),
        ("GENERAL_MERCHANDISE", "shopping.other"),
        ("HOME_IMPROVEMENT", "shopping.home"),
        ("MEDICAL", "health.doctors"),
        ("PERSONAL_CARE", "health.other"),
        ("GENERAL_SERVICES", "shopping.other"),
        ("GOVERNMENT_AND_NON_PROFIT", "government.services"),
        ("TRANSPORTATION", "transport.other"),
        ("TRAVEL", "travel.other"),
        ("RENT_AND_UTILITIES", "utilities.other"),
    ];
    if let Some((_, id)) = DETAILED.iter().find(|(c, _)| *c == code) {
        return Some(id);
    }
    // The longest primary the code starts with (TRANSFER_IN before a
    // shorter one, were there any).
    PRIMARY
        .iter()
        .filter(|(primary, _)| {
            code == *primary
                || code
                    .strip_prefix(primary)
                    .is_some_and(|rest| rest.starts_with('_'))
        })
        .max_by_key(|(primary, _)| primary.len())
        .map(|(_, id)| *id)
}

/// Akahu's NZFCC categories, by words of the category's or group's name.
fn nzfcc(name: &str) -> Option<&'static str> {
    const WORDS: &[(&str, &str)] = &[
        ("supermarket", "groceries.supermarkets"),
        ("grocer", "groceries.supermarkets"),
        ("cafe", "food_and_drink.cafes"),
        ("restaurant", "food_and_drink.restaurants"),
        ("takeaway", "food_and_drink.fast_food"),
        ("bar", "food_and_drink.bars"),
        ("pub", "food_and_drink.bars"),
        ("fuel", "transport.fuel"),
        ("parking", "transport.parking"),
        ("public transport", "transport.public"),
        ("taxi", "transport.taxi"),
        ("airline", "travel.flights"),
        ("accommodation", "travel.lodging"),
        ("pharmac", "health.pharmacy"),
        ("doctor", "health.doctors"),
        ("dentist", "health.dental"),
        ("gym", "health.fitness"),
        ("insurance", "insurance.other"),
        ("electricity", "utilities.electricity"),
        ("gas", "utilities.heating"),
        ("water", "utilities.water"),
        ("internet", "telecom_and_internet.internet"),
        ("mobile", "telecom_and_internet.mobile"),
        ("telecommunication", "telecom_and_internet.mobile"),
        ("rent", "housing.rent"),
        ("mortgage", "housing.mortgage"),
        ("clothing", "shopping.clothing"),
        ("electronic", "shopping.electronics"),
        ("hardware", "shopping.home"),
        ("furniture", "shopping.home"),
        ("department store", "shopping.general"),
        ("streaming", "subscriptions.streaming"),
        ("education", "education.tuition"),
        ("childcare", "education.childcare"),
        ("charit", "charity.donations"),
        ("government", "government.services"),
        ("tax", "taxes.other"),
    ];
    let name = name.to_lowercase();
    WORDS
        .iter()
        .find(|(word, _)| name.contains(word))
        .map(|(_, id)| *id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::taxonomy::Subcategory;

    #[test]
    fn hints_keep_their_meaning_through_storage() {
        let hints = Hints(vec![
            CategoryHint::Mcc(5812),
            CategoryHint::BankTransactionCode("PMNT/ICDT/ESCT".into()),
            CategoryHint::Nzfcc("Cafes and restaurants".into()),
            CategoryHint::OfxType("INT".into()),
        ]);
        let text = hints.to_text();
        assert_eq!(
            text.as_deref(),
            Some("mcc:5812 btc:PMNT/ICDT/ESCT nzfcc:Cafes_and_restaurants ofx:INT")
        );
        assert_eq!(Hints::from_text(text.as_deref()), hints);
        assert_eq!(
            Hints::from_text(Some("future:1 mcc:5411")).0,
            vec![CategoryHint::Mcc(5411)]
        );
    }

    #[test]
    fn every_crosswalk_names_a_subcategory_that_exists() {
        let mut ids = Vec::new();
        for code in 0..10_000 {
            ids.extend(mcc(code));
            ids.extend(gvc(code, true));
            ids.extend(gvc(code, false));
        }
        for code in ["INT", "DIV", "FEE", "SRVCHG", "ATM"] {
            ids.extend(ofx_type(code, true));
            ids.extend(ofx_type(code, false));
        }
        for code in ["SALA", "PENS", "RENT", "INTE", "CCRD", "INTX", "CASH"] {
            ids.extend(purpose(code, false));
        }
        for code in ["X/ACCB/X", "SECU/X/X", "PMNT/CCRD/CWDL", "X/X/INTR"] {
            ids.extend(bank_transaction_code(code, false));
        }
        for code in ["FOOD_AND_DRINK_COFFEE", "TRAVEL", "TRANSFER_IN_OTHER"] {
            ids.extend(plaid(code));
        }
        for id in ids {
            assert!(Subcategory::from_id(id).is_some(), "{id}");
        }
    }

    #[test]
    fn a_code_that_means_two_things_is_read_by_the_direction() {
        let (credit, debit) = (Decimal::new(5, 0), Decimal::new(-5, 0));
        let interest = CategoryHint::OfxType("INT".into());
        assert_eq!(interest.subcategory(credit), Some("income.interest"));
        assert_eq!(
            interest.subcategory(debit),
            Some("fees_and_charges.interest")
        );
        assert_eq!(
            CategoryHint::Plaid("TRANSFER_IN_OTHER".into()).subcategory(credit),
            Some("transfer.from_others")
        );
        assert_eq!(
            CategoryHint::Sic(5812).subcategory(debit),
            Some("food_and_drink.restaurants")
        );
        assert_eq!(CategoryHint::Sic(6021).subcategory(debit), None);
    }
}
