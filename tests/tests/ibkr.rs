//! Interactive Brokers' Flex Web Service against its local fake
//! (`tributary_e2e::ibkr`), on SQLite and PostgreSQL: a wrong token and a
//! wrong query refused at once, the first sync (a statement asked for
//! again while it is being made; positions, executions and cash
//! transactions counted once each, whatever else the query repeats), a
//! second that changes nothing, a later dividend added, the fault matrix
//! with nothing stored lost, and an expired token needing the person,
//! repaired with a new one keeping the accounts and their data. The same
//! statement read by ibflex (PyPI) gives the same activity and positions.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use chrono::Utc;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tributary_domain::access::Viewer;
use tributary_domain::clock::Clock;
use tributary_domain::model::{AccountKind, ConnectionStatus, SyncJobKind};
use tributary_e2e::ibkr::{Fault, IbkrFake, NEW_TOKEN, QUERY_ID, TOKEN};
use tributary_e2e::providers::{
    Bench, FaultCase, Matrix, a_revoked_token_is_replaced, connect_with_a_token, investment_lines,
    on_every_backend_against, run_fault_matrix, transaction_lines,
};
use tributary_providers::sync::{SyncEngine, SyncError, SyncOutcome};
use tributary_providers::{ConnectRequest, ConnectorError, FetchContext};
use tributary_storage::{Database, read};

fn flex(token: &str, query_id: &str) -> ConnectRequest {
    ConnectRequest {
        settings: serde_json::json!({ "query_id": query_id }),
        secret: Some(token.to_owned()),
    }
}

#[actix_web::test]
async fn a_flex_query_syncs_positions_trades_and_income_and_meets_every_fault() {
    on_every_backend_against(IbkrFake::start, scenario).await;
}

fn scenario(db: &Database, fake: &IbkrFake) {
    let Bench {
        clock,
        engine,
        impatient,
        user,
    } = Bench::against(
        db,
        |timeout| fake.connector(timeout),
        "investor@example.com",
    );
    let ibkr = tributary_providers::ibkr::PROVIDER;

    // A query IBKR does not know is refused at once too, in its words.
    let refused = engine.connect(user, ibkr, &flex(TOKEN, "111111"));
    let Err(SyncError::Connect(ConnectorError::InvalidCredentials(why))) = refused else {
        panic!("a wrong query connects nothing: {refused:?}")
    };
    assert!(why.contains("1014: Query is invalid"), "{why}");
    let refused = engine.connect(user, ibkr, &flex("285716543219876543210000", QUERY_ID));
    let Err(SyncError::Connect(ConnectorError::InvalidCredentials(why))) = refused else {
        panic!("a wrong token connects nothing: {refused:?}")
    };
    assert!(why.contains("1015: Token is invalid"), "{why}");
    let connection = connect_with_a_token(
        &engine,
        (db, user),
        ibkr,
        (
            &flex("285716543219876543210000", QUERY_ID),
            &flex(TOKEN, QUERY_ID),
        ),
    );
    let sync = |engine: &SyncEngine| {
        engine
            .sync_now(connection, SyncJobKind::OnDemand, "test")
            .unwrap()
    };

    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the first sync failed")
    };
    assert_eq!(summary.accounts_seen, 2);
    assert_eq!(
        investment_lines(db, user),
        [
            "BUY AAPL 10 180.25 -1803.5",
            "DIVIDEND AAPL None None 2.6",
            "FEE - None None -10",
            "INTEREST - None None 1.45",
            "OTHER - 100 1.08 -110",
            "SELL AAPL -2 195 388.98",
            "TAX AAPL None None -0.39",
        ],
        "executions, not the order; the detailed dividend, not its summary; no deposit"
    );
    let cash = transaction_lines(db, user);
    assert_eq!(cash.len(), 10, "{cash:#?}");
    for line in [
        // A conversion moves two currencies.
        "Main -110 false Some(\"EUR.USD\") Some(\"BUY: EUR.USD\")",
        "Main 100 false Some(\"EUR.USD\") Some(\"EUR.USD conversion\")",
        "Main 5000 false None Some(\"Deposits & Withdrawals: CASH RECEIPTS / ELECTRONIC FUND TRANSFERS\")",
        "Main -1803.5 false Some(\"AAPL\") Some(\"BUY: APPLE INC\")",
        "Interactive Brokers U7654321 250 false None Some(\"Deposits & Withdrawals: CASH RECEIPTS / ELECTRONIC FUND TRANSFERS\")",
    ] {
        assert!(cash.contains(&line.to_owned()), "{line} in {cash:#?}");
    }

    let conn = &mut *db.conn().unwrap();
    let accounts = read::list_accounts(conn, &Viewer::whole_user(user)).unwrap();
    let shapes: Vec<(&str, AccountKind, &str, Option<&str>)> = accounts
        .iter()
        .map(|a| {
            (
                a.name.as_str(),
                a.kind,
                a.currency.as_str(),
                a.mask.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        shapes,
        [
            ("Main", AccountKind::Brokerage, "USD", Some("4567")),
            (
                "Interactive Brokers U7654321",
                AccountKind::Brokerage,
                "EUR",
                Some("4321")
            ),
        ]
    );
    let main = accounts[0].id;
    let balance = read::latest_balance(conn, main).unwrap().unwrap();
    assert_eq!(
        (
            balance.amount.to_string(),
            balance.available.map(|a| a.to_string())
        ),
        ("5659.63".into(), Some("3194.63".into())),
        "the newest net asset value, and the cash"
    );
    let holdings = read::list_holdings(conn, main).unwrap();
    let held: Vec<(Option<&str>, String, String, Option<String>)> = holdings
        .iter()
        .map(|h| {
            (
                h.security.ticker.as_deref(),
                h.quantity.to_string(),
                h.value.to_string(),
                h.value_in_account_currency.map(|v| v.to_string()),
            )
        })
        .collect();
    assert_eq!(
        held,
        [
            (Some("AAPL"), "8".into(), "1524".into(), None),
            (
                Some("NESN"),
                "10".into(),
                "832".into(),
                Some("940.16".into())
            ),
        ],
        "one row a position (not its lot), a Swiss one in dollars too"
    );
    assert_eq!(holdings[0].security.isin.as_deref(), Some("US0378331005"));

    // Nothing changed: nothing changes.
    clock.advance(chrono::Duration::hours(6));
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the second sync failed")
    };
    assert_eq!(
        (
            summary.transactions_added,
            summary.transactions_updated,
            summary.investment_transactions_added,
            summary.investment_transactions_updated
        ),
        (0, 0, 0, 0)
    );
    // A dividend booked later: added, once, as cash and as income.
    fake.book_a_later_dividend();
    clock.advance(chrono::Duration::hours(6));
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the third sync failed")
    };
    assert_eq!(
        (
            summary.transactions_added,
            summary.investment_transactions_added
        ),
        (1, 1)
    );
    assert!(investment_lines(db, user).contains(&"DIVIDEND MSFT None None 4.15".to_owned()));

    let case = |fault, impatient, transient| FaultCase {
        fault,
        impatient,
        transient,
        status: ConnectionStatus::Error,
    };
    let at = Matrix {
        db,
        user,
        connection,
        engine: &engine,
        impatient: &impatient,
    };
    run_fault_matrix(
        at,
        &[
            case(Fault::Slow, true, true),
            case(Fault::ServerError, false, true),
            case(Fault::Throttled, false, true),
            case(Fault::NeverReady, false, true),
            case(Fault::Malformed, false, false),
            case(Fault::SlashDate, false, false),
        ],
        |fault| fake.set_fault(fault),
        || clock.advance(chrono::Duration::hours(6)),
        |fault, error, retry_at| match fault {
            // IBKR takes ten requests a minute per token.
            Fault::Throttled | Fault::NeverReady => {
                let earliest = clock.now().naive_utc() + chrono::Duration::seconds(60);
                assert!(retry_at.unwrap() >= earliest, "{retry_at:?}");
            }
            Fault::SlashDate => {
                let error = error.to_string();
                assert!(error.contains("Trade 3 of account U1234567"), "{error}");
                assert!(error.contains("yyyyMMdd"), "{error}");
            }
            _ => {}
        },
    );

    // The token expires: the person is needed, the data stays; a new token
    // repairs the connection.
    a_revoked_token_is_replaced(
        at,
        (|| fake.expire_token(), || fake.issue_new_token()),
        &flex(NEW_TOKEN, QUERY_ID),
        || clock.advance(chrono::Duration::hours(6)),
    );
}

/// ibflex, from PyPI, in a virtualenv of its own.
fn ibflex_python() -> PathBuf {
    tributary_e2e::python::venv(
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("ibflex-venv"),
        "import ibflex",
        &[&["ibflex==1.1", "requests"]],
    )
}

/// The statement the fake serves (with the dividend booked later), as
/// Tributary's reader and as ibflex read it: the same activity (ids, cash
/// effects, units) and the same positions, account by account.
#[actix_web::test]
async fn the_statement_reads_as_ibflex_reads_it() {
    let fake = IbkrFake::start().await;
    fake.book_a_later_dividend();
    let connector = fake.connector(Duration::from_secs(30));
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ibkr-statement.xml");
    std::fs::write(&file, fake.statement()).unwrap();
    let theirs = actix_web::rt::task::spawn_blocking(move || {
        let output = Command::new(ibflex_python())
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("ibflex/activity.py"))
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "ibflex: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()
    })
    .await
    .unwrap();
    let snapshot = actix_web::rt::task::spawn_blocking(move || {
        let settings = serde_json::json!({ "query_id": QUERY_ID });
        connector
            .fetch(&FetchContext {
                now: Utc::now(),
                settings: &settings,
                credentials: Some(TOKEN),
                last_synced_at: None,
                oldest_pending: None,
                stored_accounts: &Default::default(),
                chosen_accounts: None,
                keep_credentials: None,
            })
            .unwrap()
    })
    .await
    .unwrap();
    let text = |d: Option<tributary_domain::money::Decimal>| d.map(|d| d.to_string());
    let ours: serde_json::Value = snapshot
        .accounts
        .iter()
        .map(|account| {
            let mut activity: Vec<(String, String, Option<String>)> = account
                .investment_transactions
                .iter()
                .map(|t| {
                    (
                        t.provider_id.clone(),
                        t.amount.to_string(),
                        text(t.quantity),
                    )
                })
                .collect();
            activity.sort();
            let mut positions: Vec<(Option<String>, String, String)> = account
                .holdings
                .iter()
                .flatten()
                .map(|h| {
                    (
                        h.security.ticker.clone(),
                        h.quantity.to_string(),
                        h.value.to_string(),
                    )
                })
                .collect();
            positions.sort();
            (
                account.provider_account_id.clone(),
                serde_json::json!({"activity": activity, "positions": positions}),
            )
        })
        .collect::<serde_json::Map<_, _>>()
        .into();
    assert_eq!(ours, theirs);
    assert_eq!(
        theirs["U1234567"]["activity"].as_array().unwrap().len(),
        8,
        "the comparison saw every record: {theirs}"
    );
}
