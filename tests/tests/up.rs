//! Up against its local fake (`tributary_e2e::up`), on SQLite and
//! PostgreSQL: a wrong token refused at once, the first sync (every page),
//! a second that changes nothing, a held purchase that settles under its
//! id without a duplicate, the fault matrix with nothing stored lost (Up's
//! `Retry-After` kept), a next-page link off Up's API not followed, and a
//! revoked token needing the user, repaired with a new token keeping the
//! accounts and their data.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use tributary_domain::access::Viewer;
use tributary_domain::clock::Clock;
use tributary_domain::model::{AccountKind, ConnectionStatus, SyncJobKind};
use tributary_e2e::providers::{
    Bench, Matrix, a_revoked_token_is_replaced, case, connect_with_a_token,
    on_every_backend_against, run_fault_matrix, token_request, transaction_lines,
};
use tributary_e2e::up::{Fault, NEW_TOKEN, TOKEN, UpFake};
use tributary_providers::sync::{SyncEngine, SyncOutcome};
use tributary_storage::Database;
use tributary_storage::read;

#[actix_web::test]
async fn a_token_syncs_settles_a_held_purchase_and_meets_every_fault() {
    on_every_backend_against(UpFake::start, scenario).await;
}

fn scenario(db: &Database, fake: &UpFake) {
    let Bench {
        clock,
        engine,
        impatient,
        user,
    } = Bench::against(db, |timeout| fake.connector(timeout), "aussie@example.com");
    let up = tributary_providers::up::PROVIDER;

    let connection = connect_with_a_token(
        &engine,
        (db, user),
        up,
        (&token_request("up:yeah:wrong"), &token_request(TOKEN)),
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
    let first = transaction_lines(db, user);
    assert_eq!(
        first,
        [
            "Spending -11.95 true Some(\"Spotify\") Some(\"Spotify SYDNEY AU\")",
            "Spending -42.50 false Some(\"Woolworths\") Some(\"Woolworths SYDNEY AU\")",
            "Spending 3200.00 false Some(\"Salary Acme Pty Ltd\") Some(\"Salary Acme Pty Ltd SYDNEY AU\")",
            "🏖️ Holiday 500.00 false Some(\"Transfer from Spending\") Some(\"Transfer from Spending SYDNEY AU\")",
        ],
        "every page of every account, exact amounts"
    );
    let accounts = read::list_accounts(&mut db.conn().unwrap(), &Viewer::whole_user(user)).unwrap();
    let kinds: Vec<(&str, AccountKind, &str)> = accounts
        .iter()
        .map(|a| (a.name.as_str(), a.kind, a.currency.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("Spending", AccountKind::Checking, "AUD"),
            ("🏖️ Holiday", AccountKind::Savings, "AUD"),
        ]
    );
    let spending = accounts[0].id;
    // Paid at 07:00 on 15 January in Sydney (14 January in UTC): the
    // local day.
    let salary = read::list_transactions(
        &mut db.conn().unwrap(),
        spending,
        &Default::default(),
        None,
        None,
    )
    .unwrap()
    .into_iter()
    .find(|t| t.amount.to_string() == "3200.00")
    .unwrap();
    assert_eq!(salary.date.to_string(), "2026-01-15");
    let balance = read::latest_balance(&mut db.conn().unwrap(), spending)
        .unwrap()
        .unwrap();
    assert_eq!(balance.amount.to_string(), "2645.55");

    // Nothing changed: nothing changes.
    clock.advance(chrono::Duration::hours(1));
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the second sync failed")
    };
    assert_eq!(
        (
            summary.transactions_added,
            summary.transactions_updated,
            summary.transactions_removed
        ),
        (0, 0, 0)
    );

    // The held charge settles under its id: the same row, posted.
    fake.settle_the_held();
    clock.advance(chrono::Duration::hours(1));
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the third sync failed")
    };
    assert_eq!(
        (summary.transactions_added, summary.transactions_updated),
        (0, 1),
        "{summary:?}"
    );
    let settled = transaction_lines(db, user);
    assert_eq!(settled.len(), first.len(), "no duplicate");
    assert!(settled.contains(
        &"Spending -11.95 false Some(\"Spotify\") Some(\"Spotify SYDNEY AU\")".to_owned()
    ));

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
            case(Fault::Slow, true, true, ConnectionStatus::Error),
            case(Fault::ServerError, false, true, ConnectionStatus::Error),
            case(Fault::RateLimited, false, true, ConnectionStatus::Error),
            case(Fault::Malformed, false, false, ConnectionStatus::Error),
            case(
                Fault::ForeignNextLink,
                false,
                false,
                ConnectionStatus::Error,
            ),
        ],
        |fault| fake.set_fault(fault),
        || clock.advance(chrono::Duration::hours(1)),
        |fault, error, retry_at| match fault {
            // Not before Up's Retry-After (20 minutes).
            Fault::RateLimited => {
                let earliest = clock.now().naive_utc() + chrono::Duration::minutes(20);
                assert!(retry_at.unwrap() >= earliest, "{retry_at:?}");
            }
            Fault::ForeignNextLink => {
                assert!(error.to_string().contains("not on its API"), "{error}")
            }
            _ => {}
        },
    );

    // The person revokes the token: the user is needed, the data stays;
    // a new token repairs the connection.
    a_revoked_token_is_replaced(
        at,
        (|| fake.revoke(), || fake.issue_new_token()),
        &token_request(NEW_TOKEN),
        || clock.advance(chrono::Duration::hours(1)),
    );
}
