//! The sandbox brokerage's investment activity: each position bought once,
//! on a fixed day after the sandbox's epoch, at its cost basis; the US
//! shares' quarterly dividends since. Every record's id and values depend
//! only on the profile and its date, so a second sync finds them unchanged
//! and a later one adds only the dividends paid since.

use super::securities::{LISTED, Listed};
use chrono::{Datelike, Days, NaiveDate};
use tributary_domain::model::InvestmentKind;
use tributary_domain::money::Decimal;
use tributary_domain::snapshot::SnapshotInvestmentTransaction;

/// A dividend per share a quarter, in cents, for the securities that pay
/// one here (the European shares pay once a year; the sandbox leaves them out).
fn quarterly_dividend_cents(listed: &Listed) -> Option<i64> {
    match listed.ticker {
        "AAPL" => Some(26),
        "MSFT" => Some(83),
        "NVDA" => Some(1),
        _ => None,
    }
}

fn money(cents: i64) -> Decimal {
    Decimal::new(cents, 2)
}

/// The activity up to `today` of positions of `quantities` (one per listed
/// security, in order), from `epoch` on.
pub(super) fn activity(
    quantities: &[i64],
    epoch: NaiveDate,
    today: NaiveDate,
) -> Vec<SnapshotInvestmentTransaction> {
    let mut activity = Vec::new();
    for (n, (listed, &quantity)) in LISTED.iter().zip(quantities).enumerate() {
        let bought_on = epoch + Days::new(7 * n as u64 + 2);
        if bought_on > today {
            continue;
        }
        let price_cents = listed.base_price_cents * 85 / 100;
        activity.push(SnapshotInvestmentTransaction {
            provider_id: format!("buy-{}", listed.ticker),
            date: bought_on,
            kind: InvestmentKind::Buy,
            subtype: Some("buy".to_owned()),
            security: Some(listed.security()),
            quantity: Some(Decimal::from(quantity)),
            price: Some(money(price_cents)),
            amount: -money(price_cents * quantity),
            fees: Some(Decimal::ZERO),
            currency: listed.currency.to_owned(),
            description: Some(format!("Bought {quantity} {}", listed.ticker)),
            raw: serde_json::json!({"symbol": listed.ticker, "action": "BUY", "source": "sandbox"}),
        });
        let Some(per_share) = quarterly_dividend_cents(listed) else {
            continue;
        };
        // Paid on the 15th of February, May, August and November.
        let mut month = NaiveDate::from_ymd_opt(bought_on.year(), 2, 15);
        while let Some(paid_on) = month {
            if paid_on > today {
                break;
            }
            if paid_on > bought_on {
                activity.push(SnapshotInvestmentTransaction {
                    provider_id: format!("div-{}-{}", listed.ticker, paid_on.format("%Y-%m")),
                    date: paid_on,
                    kind: InvestmentKind::Dividend,
                    subtype: Some("dividend".to_owned()),
                    security: Some(listed.security()),
                    quantity: None,
                    price: None,
                    amount: money(per_share * quantity),
                    fees: None,
                    currency: listed.currency.to_owned(),
                    description: Some(format!("{} dividend", listed.ticker)),
                    raw: serde_json::json!({"symbol": listed.ticker, "action": "DIVIDEND", "source": "sandbox"}),
                });
            }
            month = paid_on.checked_add_months(chrono::Months::new(3));
        }
    }
    activity
}
