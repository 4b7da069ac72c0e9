//! Labelled raw bank texts: a deterministic generator of transactions as
//! banks in several countries write them, each with the truth a person
//! would write for it (who was paid, and the subcategory), so that
//! enrichment's quality can be measured on many more records than a
//! hand-labelled set holds (docs/enrichment.md, "Quality").
//!
//! The truth is decided here, by the template that wrote the text, never
//! by asking enrichment. Counterparties are real chains and also made-up
//! local shops and people, so that the set is not the merchant table
//! echoed back; bank spellings are derived from the names the way bank
//! systems write them (capitals, accents dropped or transliterated, legal
//! forms added, names cut to a field's width).
//!
//! The same seed and count give the same records on every machine.

mod dutch;
mod french;
mod german;
mod italian;
mod portuguese;
mod spanish;
mod us;

use chrono::{Days, NaiveDate};
use rand::{RngExt as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;
use tributary_domain::enrich::hints::{CategoryHint, Hints};
use tributary_domain::money::Decimal;
use tributary_domain::snapshot::SnapshotTransaction;

/// The way a bank writes its texts: a country's banks and the structures
/// they use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dialect {
    /// US card and ACH texts: processors and wallets (`SQ *`, `TST*`,
    /// `PAYPAL *`), store numbers, city and state.
    UsCard,
    /// German bank exports' narratives: SEPA Lastschrift, Gutschrift,
    /// Dauerauftrag, girocard payments, with EREF+/MREF+/CRED+/SVWZ+.
    GermanNarrative,
    /// German MT940 `:86:` fields: a business transaction code and
    /// `?20`..`?29` remittance, `?30`/`?31` BIC and IBAN, `?32`/`?33` name.
    GermanMt940,
    /// Dutch `/TRTP/…/NAME/…` structures and ABN-style `BEA`/`GEA` lines.
    Dutch,
    /// French `CB`, `PRLV SEPA`, `VIR SEPA RECU /DE` lines.
    French,
    /// Spanish `COMPRA TARJ.`, `RECIBO`, `TRANSFERENCIA`, Bizum lines.
    Spanish,
    /// Italian `PAGAMENTO POS`, `ADDEBITO SDD`, `BONIFICO` lines.
    Italian,
    /// Brazilian PIX, TED, `COMPRA CARTAO`, `PAGTO BOLETO` lines.
    Brazilian,
    /// Portuguese `COMPRA`, `DD`, `TRF`, `LEVANTAMENTO` lines.
    Portuguese,
}

impl Dialect {
    pub const ALL: [Dialect; 9] = [
        Dialect::UsCard,
        Dialect::GermanNarrative,
        Dialect::GermanMt940,
        Dialect::Dutch,
        Dialect::French,
        Dialect::Spanish,
        Dialect::Italian,
        Dialect::Brazilian,
        Dialect::Portuguese,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Dialect::UsCard => "US card/ACH",
            Dialect::GermanNarrative => "German SEPA",
            Dialect::GermanMt940 => "German MT940",
            Dialect::Dutch => "Dutch",
            Dialect::French => "French",
            Dialect::Spanish => "Spanish",
            Dialect::Italian => "Italian",
            Dialect::Brazilian => "Brazilian",
            Dialect::Portuguese => "Portuguese",
        }
    }

    fn currency(self) -> &'static str {
        match self {
            Dialect::UsCard => "USD",
            Dialect::Brazilian => "BRL",
            _ => "EUR",
        }
    }
}

/// What a person would write for a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truth {
    /// Who was paid or who paid, as people write the name; `None` where
    /// there is no one to name (a bank's fee, interest, a cash machine, a
    /// transfer between one's own accounts).
    pub merchant: Option<String>,
    /// The subcategory id (`domain::taxonomy`), hence the top-level
    /// category.
    pub subcategory: &'static str,
}

/// One generated record: the raw transaction as a provider would hand it
/// over, and its truth.
#[derive(Debug, Clone)]
pub struct Labelled {
    pub dialect: Dialect,
    pub transaction: SnapshotTransaction,
    pub truth: Truth,
}

/// `count` labelled records from `seed`, the dialects taking turns.
pub fn generate(seed: u64, count: usize) -> Vec<Labelled> {
    let mut g = Gen {
        rng: ChaCha8Rng::seed_from_u64(seed),
    };
    (0..count)
        .map(|index| {
            let dialect = Dialect::ALL[index % Dialect::ALL.len()];
            let text = match dialect {
                Dialect::UsCard => us::record(&mut g),
                Dialect::GermanNarrative => german::narrative(&mut g),
                Dialect::GermanMt940 => german::mt940(&mut g),
                Dialect::Dutch => dutch::record(&mut g),
                Dialect::French => french::record(&mut g),
                Dialect::Spanish => spanish::record(&mut g),
                Dialect::Italian => italian::record(&mut g),
                Dialect::Brazilian => portuguese::brazil(&mut g),
                Dialect::Portuguese => portuguese::portugal(&mut g),
            };
            let date = g.date();
            Labelled {
                dialect,
                transaction: SnapshotTransaction {
                    provider_id: format!("texts-{index}"),
                    pending_provider_id: None,
                    is_pending: false,
                    date,
                    amount: Decimal::new(text.cents, 2),
                    currency: dialect.currency().to_owned(),
                    merchant: text.provider_merchant,
                    description: Some(text.description),
                    hints: Hints(text.hints),
                },
                truth: Truth {
                    merchant: text.merchant,
                    subcategory: text.subcategory,
                },
            }
        })
        .collect()
}

/// A record as a dialect's template writes it.
struct Text {
    description: String,
    /// The provider's own counterparty field, where the bank gives one.
    provider_merchant: Option<String>,
    /// Negative: money out.
    cents: i64,
    hints: Vec<CategoryHint>,
    merchant: Option<String>,
    subcategory: &'static str,
}

impl Text {
    fn new(description: String, cents: i64, merchant: Option<&str>, sub: &'static str) -> Text {
        Text {
            description,
            provider_merchant: None,
            cents,
            hints: Vec::new(),
            merchant: merchant.map(str::to_owned),
            subcategory: sub,
        }
    }

    fn hint(mut self, hint: CategoryHint) -> Text {
        self.hints.push(hint);
        self
    }
}

/// A counterparty: the name as people write it, how bank systems spell it
/// where that is more than capitals (`""`: derived from the name), what it
/// sells, and the card merchant category code its terminals send (`0`:
/// none, not a card merchant).
#[derive(Debug, Clone, Copy)]
struct Party {
    name: &'static str,
    text: &'static str,
    sub: &'static str,
    mcc: u16,
}

const fn p(name: &'static str, text: &'static str, sub: &'static str, mcc: u16) -> Party {
    Party {
        name,
        text,
        sub,
        mcc,
    }
}

impl Party {
    /// The name as a card terminal or bank system writes it.
    fn written(&self, style: Style) -> String {
        match self.text {
            "" => upper(self.name, style),
            text => text.to_owned(),
        }
    }
}

/// How a bank system writes letters outside ASCII.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// Capitals, accents dropped (`É` is `E`).
    Plain,
    /// Capitals, German umlauts transliterated (`Ä` is `AE`), as the SEPA
    /// character set makes German banks write them.
    German,
    /// Capitals, accents kept (Brazilian PIX names, some SEPA names).
    Accented,
}

/// A name in capitals, as `style` writes it.
fn upper(name: &str, style: Style) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        let folded: &str = match (style, c) {
            (Style::Accented, _) => {
                out.extend(c.to_uppercase());
                continue;
            }
            (Style::German, 'ä' | 'Ä') => "AE",
            (Style::German, 'ö' | 'Ö') => "OE",
            (Style::German, 'ü' | 'Ü') => "UE",
            (_, 'ß') => "SS",
            (_, 'à' | 'á' | 'â' | 'ã' | 'ä' | 'À' | 'Á' | 'Â' | 'Ã' | 'Ä') => "A",
            (_, 'ç' | 'Ç') => "C",
            (_, 'è' | 'é' | 'ê' | 'ë' | 'È' | 'É' | 'Ê' | 'Ë') => "E",
            (_, 'ì' | 'í' | 'î' | 'ï' | 'Í') => "I",
            (_, 'ñ' | 'Ñ') => "N",
            (_, 'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'Ó' | 'Ô' | 'Õ' | 'Ö') => "O",
            (_, 'ù' | 'ú' | 'û' | 'ü' | 'Ú' | 'Ü') => "U",
            _ => {
                out.extend(c.to_uppercase());
                continue;
            }
        };
        out.push_str(folded);
    }
    out
}

/// A name cut to a fixed-width field, as card descriptors and MT940
/// subfields cut it.
fn cut(text: &str, width: usize) -> String {
    text.chars().take(width).collect::<String>().trim_end().to_owned()
}

/// A typical amount, in cents, for a subcategory (money out; the caller
/// gives the sign).
fn typical_cents(g: &mut Gen, sub: &str) -> i64 {
    let (low, high) = match sub.split('.').next().unwrap_or_default() {
        "food_and_drink" if sub.ends_with("cafes") => (250, 1_800),
        "food_and_drink" => (800, 9_000),
        "groceries" => (600, 18_000),
        "shopping" => (900, 25_000),
        "transport" => (250, 9_000),
        "travel" => (4_000, 60_000),
        "housing" => (50_000, 180_000),
        "utilities" | "telecom_and_internet" | "insurance" => (1_500, 20_000),
        "health" => (500, 12_000),
        "entertainment" | "subscriptions" => (299, 4_999),
        "education" => (1_500, 60_000),
        "fees_and_charges" => (50, 1_500),
        "taxes" => (5_000, 250_000),
        "cash" => (2, 40),
        "income" => (150_000, 600_000),
        _ => (1_000, 50_000),
    };
    let cents = g.between(low, high);
    // Cash comes in whole tens.
    if sub.starts_with("cash") {
        cents * 1_000
    } else {
        cents
    }
}

/// The generator's random source, with the draws templates need.
struct Gen {
    rng: ChaCha8Rng,
}

impl Gen {
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.rng.random_range(0..items.len())]
    }

    /// One of `items`, each as likely as its weight.
    fn weighted<T: Copy>(&mut self, items: &[(u32, T)]) -> T {
        let total: u32 = items.iter().map(|(w, _)| w).sum();
        let mut draw = self.rng.random_range(0..total);
        for (weight, item) in items {
            if draw < *weight {
                return *item;
            }
            draw -= weight;
        }
        items[items.len() - 1].1
    }

    fn chance(&mut self, percent: u32) -> bool {
        self.rng.random_range(0..100) < percent
    }

    fn between(&mut self, low: i64, high: i64) -> i64 {
        self.rng.random_range(low..=high)
    }

    fn digits(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| char::from(b'0' + self.rng.random_range(0..10u8)))
            .collect()
    }

    /// Capitals and digits, as references are written.
    fn code(&mut self, n: usize) -> String {
        const CHARS: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ0123456789";
        (0..n)
            .map(|_| char::from(CHARS[self.rng.random_range(0..CHARS.len())]))
            .collect()
    }

    /// A day of 2024.
    fn date(&mut self) -> NaiveDate {
        let start = NaiveDate::from_ymd_opt(2024, 1, 1).unwrap_or_default();
        start
            .checked_add_days(Days::new(self.rng.random_range(0..366)))
            .unwrap_or(start)
    }

    /// `dd.mm.` style parts of a day, for templates to format.
    fn day_month(&mut self) -> (u32, u32) {
        (self.rng.random_range(1..29), self.rng.random_range(1..13))
    }

    /// An IBAN of `country` whose BBAN starts with `bank`, with the
    /// rest digits and the check digits right (ISO 13616).
    fn iban(&mut self, country: &str, bank: &str, bban_len: usize) -> String {
        let rest = self.digits(bban_len.saturating_sub(bank.len()));
        let bban = format!("{bank}{rest}");
        format!("{country}{:02}{bban}", iban_check(country, &bban))
    }
}

/// The check digits of an IBAN (ISO 13616: 98 minus the remainder by 97
/// of the BBAN, the country and `00`, letters read as 10..35).
fn iban_check(country: &str, bban: &str) -> u32 {
    let mut remainder = 0u32;
    for c in bban.chars().chain(country.chars()).chain("00".chars()) {
        let value = c.to_digit(36).unwrap_or(0);
        remainder = if value >= 10 {
            (remainder * 100 + value) % 97
        } else {
            (remainder * 10 + value) % 97
        };
    }
    98 - remainder
}

#[cfg(test)]
mod tests;
