use super::*;
use chrono::{DateTime, Duration as Days, Months, TimeZone, Utc};
use std::collections::HashSet;
use std::sync::Mutex;
use tributary_domain::model::AccountKind;
use tributary_domain::money::Decimal;

fn at(y: i32, m: u32, d: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, 12, 0, 0).unwrap()
}

fn fetch(
    settings: &serde_json::Value,
    now: DateTime<Utc>,
    last: Option<DateTime<Utc>>,
) -> ProviderSnapshot {
    SandboxConnector::default()
        .fetch(&FetchContext {
            now,
            settings,
            credentials: None,
            last_synced_at: last,
            oldest_pending: None,
            stored_accounts: &Default::default(),
            chosen_accounts: None,
            keep_credentials: None,
        })
        .expect("sandbox fetch")
}

fn good() -> serde_json::Value {
    connection_settings("ada@example.com", USER_GOOD)
}

#[test]
fn same_seed_same_day_gives_identical_data() {
    let now = at(2026, 11, 21);
    assert_eq!(fetch(&good(), now, None), fetch(&good(), now, None));
    assert_ne!(
        fetch(&good(), now, None),
        fetch(
            &connection_settings("bob@example.com", USER_GOOD),
            now,
            None
        )
    );
}

#[test]
fn accounts_cover_the_usual_kinds() {
    for email in [
        "a@example.com",
        "b@example.com",
        "c@example.com",
        "d@example.com",
    ] {
        let snapshot = fetch(
            &connection_settings(email, USER_GOOD),
            at(2026, 11, 21),
            None,
        );
        assert!((3..=5).contains(&snapshot.accounts.len()));
        let kinds: HashSet<_> = snapshot.accounts.iter().map(|a| a.kind).collect();
        for kind in [
            AccountKind::Checking,
            AccountKind::Savings,
            AccountKind::CreditCard,
            AccountKind::Brokerage,
        ] {
            assert!(kinds.contains(&kind), "{kind} missing for {email}");
        }
    }
}

#[test]
fn thirteen_months_of_history_with_salaries_rent_and_refunds() {
    let now = at(2026, 11, 21);
    let snapshot = fetch(&good(), now, None);
    let all: Vec<_> = snapshot
        .accounts
        .iter()
        .flat_map(|a| &a.transactions)
        .collect();
    let oldest = all.iter().map(|t| t.date).min().unwrap();
    let expected_start = now
        .date_naive()
        .checked_sub_months(Months::new(13))
        .unwrap();
    assert!(
        oldest >= expected_start && oldest <= expected_start + Days::days(3),
        "{oldest}"
    );
    let described = |text: &str| {
        all.iter()
            .filter(|t| t.description.as_deref().is_some_and(|d| d.contains(text)))
            .count()
    };
    assert!(described("PAYROLL") >= 24, "two salaries a month");
    assert!(described("Rent") >= 13);
    assert!(described("Refund") >= 1);
    assert!(described("autopay") >= 12);
    // Provider ids are unique within each account.
    for account in &snapshot.accounts {
        let ids: HashSet<_> = account
            .transactions
            .iter()
            .map(|t| &t.provider_id)
            .collect();
        assert_eq!(ids.len(), account.transactions.len());
    }
}

#[test]
fn card_autopay_pays_last_months_card_spend() {
    let snapshot = fetch(&good(), at(2026, 11, 21), None);
    let card = snapshot
        .accounts
        .iter()
        .find(|a| a.kind == AccountKind::CreditCard)
        .unwrap();
    let october_spend: Decimal = card
        .transactions
        .iter()
        .filter(|t| t.date.format("%Y-%m").to_string() == "2026-10" && t.amount.is_sign_negative())
        .map(|t| t.amount)
        .sum();
    let payment = card
        .transactions
        .iter()
        .find(|t| {
            t.date.format("%Y-%m-%d").to_string() == "2026-11-05"
                && t.amount.is_sign_positive()
                && t.merchant.is_none()
        })
        .expect("payment on the 5th");
    assert_eq!(payment.amount, -october_spend);
}

#[test]
fn recent_purchases_are_pending_then_post_with_a_link() {
    let first_sync = at(2026, 11, 21);
    let first = fetch(&good(), first_sync, None);
    let pending: Vec<_> = first
        .accounts
        .iter()
        .flat_map(|a| &a.transactions)
        .filter(|t| t.is_pending)
        .collect();
    assert!(!pending.is_empty());
    assert!(pending.iter().all(|t| t.provider_id.ends_with("-p")));

    let second = fetch(&good(), first_sync + Days::minutes(5), Some(first_sync));
    let still_pending = second
        .accounts
        .iter()
        .flat_map(|a| &a.transactions)
        .filter(|t| t.is_pending)
        .count();
    assert_eq!(still_pending, 0, "everything seen pending has posted");
    for was_pending in pending {
        let posted: Vec<_> = second
            .accounts
            .iter()
            .flat_map(|a| &a.transactions)
            .filter(|t| t.pending_provider_id.as_deref() == Some(was_pending.provider_id.as_str()))
            .collect();
        assert_eq!(
            posted.len(),
            1,
            "{} posts exactly once",
            was_pending.provider_id
        );
        assert_ne!(posted[0].provider_id, was_pending.provider_id);
    }
}

#[test]
fn brokerage_holds_securities_in_two_currencies_with_real_identifiers() {
    let snapshot = fetch(&good(), at(2026, 11, 21), None);
    let brokerage = snapshot
        .accounts
        .iter()
        .find(|a| a.kind == AccountKind::Brokerage)
        .unwrap();
    let holdings = brokerage.holdings.as_ref().expect("holdings");
    let currencies: HashSet<_> = holdings.iter().map(|h| h.currency.as_str()).collect();
    assert!(currencies.contains("USD") && currencies.contains("EUR"));
    let apple = holdings
        .iter()
        .find(|h| h.security.ticker.as_deref() == Some("AAPL"))
        .unwrap();
    assert_eq!(apple.security.isin.as_deref(), Some("US0378331005"));
    assert_eq!(apple.security.cusip.as_deref(), Some("037833100"));
    assert_eq!(apple.security.figi.as_deref(), Some("BBG000B9XRY4"));
    for h in holdings {
        assert_eq!(h.value, h.price * h.quantity, "{}", h.security.name);
        // USD values: EUR ones at 1.08, rounded to the cent, shown in raw.
        let usd = h.value_in_account_currency.unwrap();
        let expected = if h.currency == "EUR" {
            (h.value * Decimal::new(108, 2))
                .round_dp_with_strategy(2, rust_decimal::RoundingStrategy::MidpointAwayFromZero)
        } else {
            h.value
        };
        assert_eq!(usd, expected, "{}", h.security.name);
        assert_eq!(h.raw["value_usd"], usd.to_string());
    }
    assert!(
        snapshot
            .accounts
            .iter()
            .filter(|a| a.kind != AccountKind::Brokerage)
            .all(|a| a.holdings.is_none())
    );
}

#[test]
fn failure_usernames_fail_the_documented_way() {
    let connector = SandboxConnector::default();
    let bad = connection_settings("a@example.com", USER_BAD_CREDENTIALS);
    assert!(matches!(
        connector.prepare(&ConnectRequest {
            settings: bad,
            secret: None
        }),
        Err(ConnectorError::InvalidCredentials(_))
    ));
    let none_stored = Default::default();
    let context = |settings| FetchContext {
        now: at(2026, 11, 21),
        settings,
        credentials: None,
        last_synced_at: None,
        oldest_pending: None,
        stored_accounts: &none_stored,
        chosen_accounts: None,
        keep_credentials: None,
    };
    let reauth = connection_settings("a@example.com", USER_REAUTH_REQUIRED);
    let down = connection_settings("a@example.com", USER_PROVIDER_DOWN);
    assert!(
        connector
            .prepare(&ConnectRequest {
                settings: reauth.clone(),
                secret: None
            })
            .is_ok()
    );
    assert!(matches!(
        connector.fetch(&context(&reauth)),
        Err(ConnectorError::ReauthRequired(_))
    ));
    let err = connector.fetch(&context(&down)).unwrap_err();
    assert!(err.is_transient(), "{err}");
}

#[test]
fn slow_username_waits_before_answering() {
    let waited = std::sync::Arc::new(Mutex::new(Vec::new()));
    let record = waited.clone();
    let connector = SandboxConnector::with_pause(std::time::Duration::from_secs(7), move |d| {
        record.lock().unwrap().push(d)
    });
    let slow = connection_settings("a@example.com", USER_SLOW);
    let snapshot = connector
        .fetch(&FetchContext {
            now: at(2026, 11, 21),
            settings: &slow,
            credentials: None,
            last_synced_at: None,
            oldest_pending: None,
            stored_accounts: &Default::default(),
            chosen_accounts: None,
            keep_credentials: None,
        })
        .unwrap();
    assert!(!snapshot.accounts.is_empty());
    assert_eq!(
        *waited.lock().unwrap(),
        vec![std::time::Duration::from_secs(7)]
    );
}

#[test]
fn missing_settings_are_a_clear_error() {
    let err = SandboxConnector::default()
        .prepare(&ConnectRequest::default())
        .unwrap_err();
    assert!(err.to_string().contains("username"), "{err}");
}
