//! Deterministic sandbox data. Each day's activity comes from a random stream
//! keyed by (seed, date), so a day looks the same on every sync and the past
//! never changes; balances are the running sum since a fixed epoch.
//!
//! Pending: a card or debit purchase from the last three days that the
//! previous sync could not have seen posted is pending, with provider id
//! `<id>-p`. On a later sync it is posted as `<id>`, linked to `<id>-p`;
//! restaurant bills post with the tip added, as real ones do.

use super::securities::LISTED;
use chrono::{DateTime, Datelike, Days, Months, NaiveDate, Utc};
use rand::{RngExt as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use tributary_domain::model::AccountKind;
use tributary_domain::money::Decimal;
use tributary_domain::snapshot::{
    SnapshotAccount, SnapshotBalance, SnapshotHolding, SnapshotLiability, SnapshotTransaction,
};

/// Balances accumulate from here, so they agree from one day to the next.
const EPOCH: (i32, u32, u32) = (2025, 1, 1);
/// How far back transactions are reported.
const HISTORY_MONTHS: u32 = 13;
/// Purchases younger than this many days can still be pending.
const PENDING_DAYS: u64 = 2;
/// The sandbox's fixed EUR→USD rate for brokerage totals.
const EUR_USD_CENTS: i64 = 108;
const CURRENCY: &str = "USD";
const CARD_LIMIT_CENTS: i64 = 1_500_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Acct {
    Checking,
    Savings,
    Card,
    Brokerage,
    Holiday,
}

impl Acct {
    fn code(self) -> &'static str {
        match self {
            Acct::Checking => "chk",
            Acct::Savings => "sav",
            Acct::Card => "card",
            Acct::Brokerage => "brk",
            Acct::Holiday => "hol",
        }
    }
}

/// Per-user constants, drawn once from the seed.
struct Profile {
    seed: u64,
    salary_half: i64,
    rent: i64,
    savings_transfer: i64,
    brokerage_contribution: i64,
    has_holiday_fund: bool,
    masks: HashMap<Acct, String>,
    opening: HashMap<Acct, i64>,
    quantities: Vec<i64>,
}

impl Profile {
    fn new(seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut masks = HashMap::new();
        for acct in [
            Acct::Checking,
            Acct::Savings,
            Acct::Card,
            Acct::Brokerage,
            Acct::Holiday,
        ] {
            masks.insert(acct, format!("{:04}", rng.random_range(0..10_000)));
        }
        let opening = HashMap::from([
            (Acct::Checking, rng.random_range(300_000..900_000)),
            (Acct::Savings, rng.random_range(500_000..2_500_000)),
            (Acct::Card, 0),
            (Acct::Brokerage, rng.random_range(100_000..500_000)),
            (Acct::Holiday, rng.random_range(20_000..120_000)),
        ]);
        Profile {
            seed,
            salary_half: rng.random_range(230_000..340_000),
            rent: rng.random_range(12..22) * 10_000 + rng.random_range(0..4) * 2_500,
            savings_transfer: rng.random_range(4..12) * 5_000,
            brokerage_contribution: rng.random_range(3..10) * 5_000,
            has_holiday_fund: rng.random_bool(0.5),
            masks,
            opening,
            quantities: LISTED.iter().map(|_| rng.random_range(3..40)).collect(),
        }
    }

    /// A random stream for one date and purpose, independent of all others.
    fn day_rng(&self, date: NaiveDate, purpose: u64) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(u64::from(date.num_days_from_ce().unsigned_abs()) * 16 + purpose);
        rng
    }
}

struct Event {
    acct: Acct,
    /// Amount when posted, in cents (negative = money out).
    cents: i64,
    /// Amount while pending, when it differs (a tip is added on posting).
    pending_cents: Option<i64>,
    merchant: Option<&'static str>,
    description: String,
    /// Card and debit purchases show as pending first.
    holdable: bool,
}

fn money(cents: i64) -> Decimal {
    Decimal::new(cents, 2)
}

fn pick(rng: &mut ChaCha8Rng, items: &[&'static str]) -> &'static str {
    items[rng.random_range(0..items.len())]
}

fn purchase(acct: Acct, cents: i64, merchant: &'static str, description: &str) -> Event {
    Event {
        acct,
        cents: -cents,
        pending_cents: None,
        merchant: Some(merchant),
        description: description.to_owned(),
        holdable: true,
    }
}

fn transfer(acct: Acct, cents: i64, merchant: Option<&'static str>, description: String) -> Event {
    Event {
        acct,
        cents,
        pending_cents: None,
        merchant,
        description,
        holdable: false,
    }
}

fn last_day_of_month(date: NaiveDate) -> bool {
    date.succ_opt()
        .is_none_or(|next| next.month() != date.month())
}

/// Everything that happens on one day. `card_due` is last month's card spend
/// (negative), paid from checking on the 5th.
fn day_events(profile: &Profile, date: NaiveDate, card_due: i64) -> Vec<Event> {
    let mut rng = profile.day_rng(date, 1);
    let mut events = Vec::new();
    let day = date.day();
    let month = date.format("%B %Y").to_string();

    if day == 1 {
        events.push(transfer(
            Acct::Checking,
            -profile.rent,
            Some("Greenview Property Management"),
            format!("Rent {month}"),
        ));
    }
    if day == 15 || last_day_of_month(date) {
        events.push(transfer(
            Acct::Checking,
            profile.salary_half,
            Some("Acme Corp"),
            "ACME CORP PAYROLL DIRECT DEP".to_owned(),
        ));
    }
    if day == 3 {
        events.push(transfer(
            Acct::Checking,
            -profile.savings_transfer,
            None,
            "Transfer to High-Yield Savings".to_owned(),
        ));
        events.push(transfer(
            Acct::Savings,
            profile.savings_transfer,
            None,
            "Transfer from Everyday Checking".to_owned(),
        ));
        if profile.has_holiday_fund {
            events.push(transfer(
                Acct::Checking,
                -5_000,
                None,
                "Transfer to Holiday Fund".to_owned(),
            ));
            events.push(transfer(
                Acct::Holiday,
                5_000,
                None,
                "Transfer from Everyday Checking".to_owned(),
            ));
        }
    }
    if day == 5 && card_due < 0 {
        events.push(transfer(
            Acct::Checking,
            card_due,
            Some("Rewards Visa"),
            "Credit card autopay".to_owned(),
        ));
        events.push(transfer(
            Acct::Card,
            -card_due,
            None,
            "Payment received - thank you".to_owned(),
        ));
    }
    if day == 10 {
        events.push(transfer(
            Acct::Checking,
            -profile.brokerage_contribution,
            None,
            "Transfer to Brokerage".to_owned(),
        ));
        events.push(transfer(
            Acct::Brokerage,
            profile.brokerage_contribution,
            None,
            "Contribution".to_owned(),
        ));
    }
    if day == 18 {
        events.push(transfer(
            Acct::Checking,
            -rng.random_range(7_000..19_000),
            Some("City Power & Light"),
            "Electricity bill".to_owned(),
        ));
    }
    if day == 22 {
        events.push(transfer(
            Acct::Checking,
            -6_500,
            Some("Verizon Wireless"),
            "Mobile phone".to_owned(),
        ));
    }
    if day == 7 {
        events.push(purchase(Acct::Card, 1_549, "Netflix", "NETFLIX.COM"));
    }
    if day == 12 {
        events.push(purchase(Acct::Card, 1_199, "Spotify", "SPOTIFY USA"));
    }
    if last_day_of_month(date) {
        let interest = rng.random_range(800..3_000);
        events.push(transfer(
            Acct::Savings,
            interest,
            None,
            "Interest payment".to_owned(),
        ));
        if matches!(date.month(), 3 | 6 | 9 | 12) {
            events.push(transfer(
                Acct::Brokerage,
                rng.random_range(2_000..9_000),
                None,
                "Dividend reinvestment cash".to_owned(),
            ));
        }
    }
    if rng.random_bool(0.3) {
        let store = pick(
            &mut rng,
            &["Whole Foods Market", "Trader Joe's", "Safeway", "Costco"],
        );
        events.push(purchase(
            Acct::Checking,
            rng.random_range(1_800..16_000),
            store,
            "Groceries",
        ));
    }
    if rng.random_bool(0.04) {
        events.push(transfer(
            Acct::Checking,
            -rng.random_range(2..6) * 2_000,
            None,
            "ATM withdrawal".to_owned(),
        ));
    }
    if rng.random_bool(0.55) {
        let shop = pick(
            &mut rng,
            &["Starbucks", "Blue Bottle Coffee", "Peet's Coffee"],
        );
        events.push(purchase(
            Acct::Card,
            rng.random_range(350..890),
            shop,
            "Coffee",
        ));
    }
    if rng.random_bool(0.2) {
        let place = pick(
            &mut rng,
            &[
                "Chipotle",
                "Sweetgreen",
                "The Cheesecake Factory",
                "Olive Garden",
            ],
        );
        let bill = rng.random_range(1_800..9_500);
        let tip = bill * rng.random_range(15..23) / 100;
        events.push(Event {
            acct: Acct::Card,
            cents: -(bill + tip),
            pending_cents: Some(-bill),
            merchant: Some(place),
            description: "Restaurant".to_owned(),
            holdable: true,
        });
    }
    if rng.random_bool(0.15) {
        events.push(purchase(
            Acct::Card,
            rng.random_range(1_200..25_000),
            "Amazon",
            "AMAZON MKTPLACE PMTS",
        ));
    }
    if rng.random_bool(0.12) {
        let ride = pick(&mut rng, &["Uber", "Lyft"]);
        events.push(purchase(
            Acct::Card,
            rng.random_range(900..4_500),
            ride,
            "Ride",
        ));
    }
    if rng.random_bool(0.03) {
        events.push(Event {
            acct: Acct::Card,
            cents: rng.random_range(1_500..12_000),
            pending_cents: None,
            merchant: Some("Amazon"),
            description: "Refund AMAZON MKTPLACE".to_owned(),
            holdable: false,
        });
    }
    events
}

pub(super) fn generate(
    seed: u64,
    now: DateTime<Utc>,
    last_synced_at: Option<DateTime<Utc>>,
) -> Vec<SnapshotAccount> {
    let profile = Profile::new(seed);
    let today = now.date_naive();
    let epoch = NaiveDate::from_ymd_opt(EPOCH.0, EPOCH.1, EPOCH.2).unwrap_or(NaiveDate::MIN);
    let window_start = today
        .checked_sub_months(Months::new(HISTORY_MONTHS))
        .unwrap_or(epoch);
    let pending_since = today
        .checked_sub_days(Days::new(PENDING_DAYS))
        .unwrap_or(today);
    let last_sync_day = last_synced_at.map(|at| at.date_naive());

    let mut accts = vec![Acct::Checking, Acct::Savings, Acct::Card, Acct::Brokerage];
    if profile.has_holiday_fund {
        accts.push(Acct::Holiday);
    }
    let mut posted: HashMap<Acct, i64> = profile.opening.clone();
    let mut pending_total: HashMap<Acct, i64> = HashMap::new();
    let mut transactions: HashMap<Acct, Vec<SnapshotTransaction>> = HashMap::new();
    let mut card_spend_by_month: HashMap<(i32, u32), i64> = HashMap::new();
    let mut history: HashMap<Acct, Vec<SnapshotBalance>> = HashMap::new();

    let mut date = epoch;
    while date <= today {
        let previous_month = date.checked_sub_months(Months::new(1)).unwrap_or(date);
        let card_due = card_spend_by_month
            .get(&(previous_month.year(), previous_month.month()))
            .copied()
            .unwrap_or(0);
        for (seq, event) in day_events(&profile, date, card_due).into_iter().enumerate() {
            if event.acct == Acct::Holiday && !profile.has_holiday_fund {
                continue;
            }
            if event.acct == Acct::Card && event.cents < 0 {
                *card_spend_by_month
                    .entry((date.year(), date.month()))
                    .or_default() += event.cents;
            }
            // Pending while young and not yet seen by a sync on or after its day.
            let is_pending = event.holdable
                && date >= pending_since
                && last_sync_day.is_none_or(|seen| date > seen);
            let amount_cents = if is_pending {
                event.pending_cents.unwrap_or(event.cents)
            } else {
                event.cents
            };
            if is_pending {
                *pending_total.entry(event.acct).or_default() += amount_cents;
            } else {
                *posted.entry(event.acct).or_default() += amount_cents;
            }
            if date < window_start {
                continue;
            }
            let id = format!("{}-{}-{seq}", event.acct.code(), date.format("%Y%m%d"));
            let could_have_been_pending = event.holdable
                && last_sync_day.is_some_and(|seen| date >= seen - Days::new(PENDING_DAYS));
            transactions
                .entry(event.acct)
                .or_default()
                .push(SnapshotTransaction {
                    provider_id: if is_pending {
                        format!("{id}-p")
                    } else {
                        id.clone()
                    },
                    pending_provider_id: (!is_pending && could_have_been_pending)
                        .then(|| format!("{id}-p")),
                    is_pending,
                    date,
                    amount: money(amount_cents),
                    currency: CURRENCY.to_owned(),
                    merchant: event.merchant.map(str::to_owned),
                    description: Some(event.description),
                    hints: Default::default(),
                });
        }
        if date >= window_start && date < pending_since && is_history_day(date) {
            let brokerage_usd: i64 = holdings(&profile, date).iter().map(|(_, usd)| usd).sum();
            for &acct in &accts {
                let posted_cents = posted.get(&acct).copied().unwrap_or(0);
                let current = match acct {
                    Acct::Brokerage => posted_cents + brokerage_usd,
                    _ => posted_cents,
                };
                history.entry(acct).or_default().push(SnapshotBalance {
                    current: money(current),
                    available: None,
                    currency: CURRENCY.to_owned(),
                    as_of: end_of(date),
                });
            }
        }
        match date.succ_opt() {
            Some(next) => date = next,
            None => break,
        }
    }

    let holdings = holdings(&profile, today);
    let holdings_usd: i64 = holdings.iter().map(|(_, usd_cents)| usd_cents).sum();
    accts
        .into_iter()
        .map(|acct| {
            let posted_cents = posted.get(&acct).copied().unwrap_or(0);
            let pending_cents = pending_total.get(&acct).copied().unwrap_or(0);
            let (current, available) = match acct {
                Acct::Card => (
                    posted_cents,
                    CARD_LIMIT_CENTS + posted_cents + pending_cents,
                ),
                Acct::Brokerage => (posted_cents + holdings_usd, posted_cents),
                _ => (posted_cents, posted_cents + pending_cents),
            };
            let (name, kind) = match acct {
                Acct::Checking => ("Everyday Checking", AccountKind::Checking),
                Acct::Savings => ("High-Yield Savings", AccountKind::Savings),
                Acct::Card => ("Rewards Visa", AccountKind::CreditCard),
                Acct::Brokerage => ("Individual Brokerage", AccountKind::Brokerage),
                Acct::Holiday => ("Holiday Fund", AccountKind::Savings),
            };
            SnapshotAccount {
                institution: None,
                provider_account_id: acct.code().to_owned(),
                name: name.to_owned(),
                kind,
                currency: CURRENCY.to_owned(),
                mask: profile.masks.get(&acct).cloned(),
                balance: Some(SnapshotBalance {
                    current: money(current),
                    available: Some(money(available)),
                    currency: CURRENCY.to_owned(),
                    as_of: now,
                }),
                transactions: transactions.remove(&acct).unwrap_or_default(),
                balance_history: history.remove(&acct).unwrap_or_default(),
                investment_transactions: if acct == Acct::Brokerage {
                    super::activity::activity(&profile.quantities, epoch, today)
                } else {
                    Vec::new()
                },
                liability: (acct == Acct::Card)
                    .then(|| card_liability(&card_spend_by_month, today)),
                holdings: (acct == Acct::Brokerage)
                    .then(|| holdings.iter().map(|(h, _)| h.clone()).collect()),
            }
        })
        .collect()
}

/// The card's terms: its limit, and the statement the autopay settles in
/// full on the 5th (last month's spend), with a minimum payment of 2 % of
/// it, at least 25.00 (or all of a smaller statement).
fn card_liability(
    card_spend_by_month: &HashMap<(i32, u32), i64>,
    today: NaiveDate,
) -> SnapshotLiability {
    let this_month = |date: NaiveDate| date.with_day(5);
    let due = if today.day() <= 5 {
        this_month(today)
    } else {
        today
            .checked_add_months(Months::new(1))
            .and_then(this_month)
    };
    let statement_month = due.and_then(|d| d.checked_sub_months(Months::new(1)));
    let statement_cents = statement_month
        .and_then(|m| card_spend_by_month.get(&(m.year(), m.month())))
        .map_or(0, |spent| -spent);
    let minimum_cents = statement_cents.min((statement_cents * 2 / 100).max(2_500));
    SnapshotLiability {
        credit_limit: Some(money(CARD_LIMIT_CENTS)),
        minimum_payment: Some(money(minimum_cents)),
        next_payment_due: due,
        last_statement_balance: Some(money(statement_cents)),
    }
}

/// The days the sandbox states a past balance for: every Sunday and the
/// last day of every month, so that a first sync already draws a year of
/// weekly and monthly charts.
fn is_history_day(date: NaiveDate) -> bool {
    date.weekday() == chrono::Weekday::Sun || date.succ_opt().is_none_or(|next| next.day() == 1)
}

/// The end of `date`'s day, when a day-end balance is as of.
fn end_of(date: NaiveDate) -> DateTime<Utc> {
    date.and_hms_opt(23, 59, 59)
        .unwrap_or_default()
        .and_utc()
}

/// The brokerage positions at today's sandbox prices, each with its value
/// in USD cents.
fn holdings(profile: &Profile, today: NaiveDate) -> Vec<(SnapshotHolding, i64)> {
    let mut rng = profile.day_rng(today, 2);
    LISTED
        .iter()
        .zip(&profile.quantities)
        .map(|(listed, quantity)| {
            // Quotes move within ±6 % of the base price from day to day.
            let price_cents = listed.base_price_cents * rng.random_range(940..1_060) / 1_000;
            let value_cents = price_cents * quantity;
            let cost_cents = listed.base_price_cents * 85 / 100 * quantity;
            // Converted and rounded to the cent (half up) per holding, so
            // the served USD values add up to totalValue exactly.
            let usd_cents = if listed.currency == "EUR" {
                (value_cents * EUR_USD_CENTS + 50) / 100
            } else {
                value_cents
            };
            let holding = SnapshotHolding {
                security: listed.security(),
                quantity: Decimal::from(*quantity),
                price: money(price_cents),
                value: money(value_cents),
                value_in_account_currency: Some(money(usd_cents)),
                cost_basis: Some(money(cost_cents)),
                currency: listed.currency.to_owned(),
                raw: serde_json::json!({
                    "symbol": listed.ticker,
                    "mic": listed.exchange,
                    "units": quantity.to_string(),
                    "last_price": money(price_cents).to_string(),
                    "price_currency": listed.currency,
                    "value_usd": money(usd_cents).to_string(),
                    "source": "sandbox",
                }),
            };
            (holding, usd_cents)
        })
        .collect()
}
