//! Pluggy against its local fake (`tributary_e2e::pluggy`), on SQLite and
//! PostgreSQL: wrong application details refused at once, the first sync
//! (paged accounts, the transactions' cursor, a credit card turned to
//! Tributary's sign with its bill as liability, each investment an
//! account holding its position, with its activity signed as the cash it
//! moved), a second that changes nothing and reads only its window, a pending PIX that posts under a new
//! id without a duplicate, an account opened since read whole, the fault matrix with nothing stored lost, an
//! item whose bank wants the person (and is fine again once they act in
//! Pluggy), and a rotated client secret repaired by connecting with the
//! new one, keeping the accounts and data. With this server's own
//! application (Pluggy Connect): the connect token names the person, and
//! only an item made for them connects.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use tributary_domain::access::Viewer;
use tributary_domain::clock::Clock;
use tributary_domain::model::{AccountKind, ConnectionStatus, SyncJobKind};
use tributary_e2e::pluggy::{
    CLIENT_ID, CLIENT_SECRET, Fault, ITEM_ID, NEW_CLIENT_SECRET, PluggyFake, SERVER_CLIENT_SECRET,
};
use tributary_e2e::providers::{
    Bench, Matrix, a_revoked_token_is_replaced, case, connect_with_a_token, investment_lines,
    on_every_backend_against, run_fault_matrix, transaction_lines,
};
use tributary_providers::description::Answers;
use tributary_providers::sync::{SyncEngine, SyncError, SyncOutcome};
use tributary_providers::{ConnectRequest, ConnectorError};
use tributary_storage::Database;
use tributary_storage::read;

/// What a person gives to connect: the application's pair and the item.
fn request(secret: &str) -> ConnectRequest {
    ConnectRequest {
        settings: serde_json::json!({ "item_id": ITEM_ID }),
        secret: Some(
            serde_json::json!({"client_id": CLIENT_ID, "client_secret": secret}).to_string(),
        ),
    }
}

#[actix_web::test]
async fn an_item_syncs_posts_a_pending_and_meets_every_fault() {
    on_every_backend_against(PluggyFake::start, scenario).await;
}

fn scenario(db: &Database, fake: &PluggyFake) {
    let Bench {
        clock,
        engine,
        impatient,
        user,
    } = Bench::against(db, |timeout| fake.connector(timeout), "brasil@example.com");
    let connection = connect_with_a_token(
        &engine,
        (db, user),
        tributary_providers::pluggy::PROVIDER,
        (&request("not-the-secret"), &request(CLIENT_SECRET)),
    );
    assert!(
        !tributary_storage::testing::dump(db).contains(CLIENT_SECRET),
        "the client secret is sealed"
    );
    let sync = |engine: &SyncEngine| {
        engine
            .sync_now(connection, SyncJobKind::OnDemand, "test")
            .unwrap()
    };

    // An item the application does not hold: refused at once.
    let mut elsewhere = request(CLIENT_SECRET);
    elsewhere.settings = serde_json::json!({"item_id": "ffffffff-0000-4000-8000-000000000000"});
    let Err(tributary_providers::sync::SyncError::Connect(ConnectorError::InvalidCredentials(why))) =
        engine.connect(user, tributary_providers::pluggy::PROVIDER, &elsewhere)
    else {
        panic!("an unknown item connects nothing")
    };
    assert!(why.contains("item not found"), "{why}");
    // Signing in again keeps to the connection's item.
    let Err(tributary_providers::sync::SyncError::Connect(ConnectorError::InvalidCredentials(why))) =
        engine.reconnect(connection, &elsewhere)
    else {
        panic!("another item is another connection")
    };
    assert!(why.contains("as a new connection"), "{why}");

    let pages = fake.pages();
    let first_at = clock.now();
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the first sync failed")
    };
    assert_eq!(fake.checking_date_from(), None, "the whole history");
    assert_eq!(
        summary.accounts_seen, 4,
        "both pages of accounts, both of investments"
    );
    assert_eq!(summary.investment_transactions_added, 5);
    assert_eq!(
        fake.pages() - pages,
        3,
        "the checking account's two pages, the card's one"
    );
    let first = transaction_lines(db, user);
    assert_eq!(
        first,
        [
            "Mastercard Black -104.35 false Some(\"Netflix\") Some(\"NETFLIX.COM\")",
            "Mastercard Black -159.20 false Some(\"Mercado Livre\") Some(\"MERCADO LIVRE\")",
            "NuConta -1800.00 false None Some(\"ALUGUEL\")",
            "NuConta -212.45 false None Some(\"PAGAMENTO BOLETO ENERGIA\")",
            "NuConta -27.90 true Some(\"Padaria Sao Jorge\") Some(\"PIX ENVIADO PADARIA\")",
            "NuConta 5500.00 false None Some(\"SALARIO EMPRESA\")",
        ],
        "exact digits; a card purchase is money out, in the account's currency"
    );
    let accounts = read::list_accounts(&mut db.conn().unwrap(), &Viewer::whole_user(user)).unwrap();
    let kinds: Vec<(&str, AccountKind, Option<&str>)> = accounts
        .iter()
        .map(|a| (a.name.as_str(), a.kind, a.mask.as_deref()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("NuConta", AccountKind::Checking, Some("3450")),
            ("Mastercard Black", AccountKind::CreditCard, Some("8670")),
            ("PETROBRAS PN", AccountKind::Brokerage, None),
            (
                "CDB BANCO INTER 110% CDI",
                AccountKind::Brokerage,
                Some("4567")
            ),
        ]
    );
    assert_eq!(
        investment_lines(db, user),
        [
            "BUY - None None -10000.00",
            "BUY PETR4 150 24.00 -3604.90",
            "OTHER - None None 250.00",
            "SELL PETR4 -50 40.00 2000.00",
            "TAX PETR4 None None -30.00",
        ],
        "a buy paid (net of its fee), a sale and principal received, a tax a cost; both pages"
    );
    {
        let conn = &mut db.conn().unwrap();
        let stock = read::list_holdings(conn, accounts[2].id).unwrap();
        assert_eq!(
            stock
                .iter()
                .map(|h| (
                    h.quantity.to_string(),
                    h.price.to_string(),
                    h.value.to_string(),
                    h.cost_basis.map(|c| c.to_string())
                ))
                .collect::<Vec<_>>(),
            [(
                "100".to_owned(),
                "38.12".to_owned(),
                "3812.00".to_owned(),
                Some("2400.00".to_owned())
            )]
        );
        let fees: Vec<Option<String>> =
            tributary_storage::investments::list(conn, accounts[2].id, (None, None), None)
                .unwrap()
                .into_iter()
                .map(|t| t.fees.map(|f| f.to_string()))
                .collect();
        assert!(
            fees.contains(&Some("4.90".to_owned())),
            "the buy's brokerage fee: {fees:?}"
        );
        let cdb = read::list_holdings(conn, accounts[3].id).unwrap();
        assert_eq!(
            cdb.iter()
                .map(|h| (h.quantity.to_string(), h.value.to_string()))
                .collect::<Vec<_>>(),
            [("1".to_owned(), "10412.66".to_owned())],
            "a position without quotas is one unit at its net value"
        );
        let cdb_balance = read::latest_balance(conn, accounts[3].id).unwrap().unwrap();
        assert_eq!(
            cdb_balance.amount.to_string(),
            "10412.66",
            "the net balance"
        );
    }
    let card = &accounts[1];
    let balance = read::latest_balance(&mut db.conn().unwrap(), card.id)
        .unwrap()
        .unwrap();
    assert_eq!(balance.amount.to_string(), "-263.55", "what is owed");
    let liability = &card.liability;
    assert_eq!(
        (
            liability.credit_limit.map(|d| d.to_string()),
            liability.minimum_payment.map(|d| d.to_string()),
            liability.next_payment_due.map(|d| d.to_string()),
        ),
        (
            Some("10000.00".to_owned()),
            Some("39.53".to_owned()),
            Some("2026-12-10".to_owned())
        )
    );

    // Nothing changed: nothing changes; the rent, 40 days ago, is outside
    // the window (one page for the checking account).
    clock.advance(chrono::Duration::hours(1));
    let pages = fake.pages();
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the second sync failed")
    };
    assert_eq!(
        (
            summary.transactions_added,
            summary.transactions_updated,
            summary.transactions_removed,
            summary.investment_transactions_added,
            summary.investment_transactions_updated
        ),
        (0, 0, 0, 0, 0)
    );
    assert_eq!(fake.pages() - pages, 3);
    assert_eq!(
        fake.checking_date_from(),
        Some(
            (first_at - chrono::Duration::days(14))
                .date_naive()
                .to_string()
        ),
        "from 14 days before the last sync"
    );

    // The PIX posts under an id of its own: the same row, posted.
    fake.post_the_pending();
    clock.advance(chrono::Duration::hours(1));
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the third sync failed")
    };
    assert_eq!(summary.posted_from_pending, 1, "{summary:?}");
    let posted = transaction_lines(db, user);
    assert_eq!(posted.len(), first.len(), "no duplicate");
    assert!(
        posted.contains(
            &"NuConta -27.90 false Some(\"Padaria Sao Jorge\") Some(\"PIX ENVIADO PADARIA\")"
                .to_owned()
        )
    );

    // A savings account opened since: its whole history is read (a deposit
    // from before the window), the others' only their window.
    fake.open_a_savings_account();
    clock.advance(chrono::Duration::hours(1));
    let SyncOutcome::Synced { summary, .. } = sync(&engine) else {
        panic!("the sync after a new account failed")
    };
    assert_eq!(
        fake.savings_date_from(),
        Some(None),
        "a new account is read whole"
    );
    assert!(
        fake.checking_date_from().is_some(),
        "a known one, its window"
    );
    assert_eq!(summary.transactions_added, 1, "{summary:?}");
    assert!(
        transaction_lines(db, user)
            .contains(&"Poupanca 2500.00 false None Some(\"APLICACAO POUPANCA\")".to_owned())
    );
    clock.advance(chrono::Duration::hours(1));
    assert!(matches!(sync(&engine), SyncOutcome::Synced { .. }));
    assert!(
        fake.savings_date_from().unwrap().is_some(),
        "once stored, its window"
    );

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
            case(Fault::SameCursor, false, false, ConnectionStatus::Error),
            case(Fault::LaterPageFails, false, true, ConnectionStatus::Error),
        ],
        |fault| fake.set_fault(fault),
        || clock.advance(chrono::Duration::hours(1)),
        |fault, error, retry_at| {
            let expected = match fault {
                Fault::Slow => "in time",
                Fault::ServerError | Fault::LaterPageFails => "500",
                Fault::RateLimited => "429",
                Fault::Malformed => "does not parse",
                Fault::SameCursor => "same transactions cursor twice",
            };
            assert!(error.to_string().contains(expected), "{fault:?}: {error}");
            if fault == Fault::RateLimited {
                // Not before Pluggy's count starts again.
                let earliest = clock.now().naive_utc() + chrono::Duration::seconds(60);
                assert!(retry_at.unwrap() >= earliest, "{retry_at:?}");
            }
        },
    );

    // The bank wants the person at Pluggy: the user is needed, nothing is
    // lost; once they have acted there, the next sync works as it is.
    let stored = transaction_lines(db, user);
    fake.set_item_status("LOGIN_ERROR");
    clock.advance(chrono::Duration::hours(1));
    let SyncOutcome::ProviderFailed { error, .. } = sync(&engine) else {
        panic!("an item in LOGIN_ERROR needs the person")
    };
    assert_eq!(error.connection_status(), ConnectionStatus::ReauthRequired);
    assert!(error.to_string().contains("Invalid credentials"), "{error}");
    assert_eq!(transaction_lines(db, user), stored);
    fake.set_item_status("UPDATED");
    clock.advance(chrono::Duration::hours(1));
    assert!(matches!(sync(&engine), SyncOutcome::Synced { .. }));

    // The application's secret is rotated: the user is needed, the data
    // stays; connecting with the new secret repairs the connection.
    a_revoked_token_is_replaced(
        at,
        (|| fake.revoke_the_secret(), || fake.issue_a_new_secret()),
        &request(NEW_CLIENT_SECRET),
        || clock.advance(chrono::Duration::hours(1)),
    );
}

#[actix_web::test]
async fn an_item_made_in_pluggy_connect_connects_for_its_person_only() {
    on_every_backend_against(PluggyFake::start, pluggy_connect).await;
}

/// With this server's own application: the connect page's token names the
/// person, the item Pluggy Connect makes carries that name, and only then
/// does its id connect (no pair of the person's own); it syncs with the
/// server's application; signing in again updates that same item.
fn pluggy_connect(db: &Database, fake: &PluggyFake) {
    let script = "https://cdn.pluggy.ai/pluggy-connect/latest/pluggy-connect.js";
    let Bench { engine, user, .. } = Bench::against(
        db,
        |timeout| fake.connector_for_the_server(timeout, script),
        "connect@example.com",
    );
    let pluggy = tributary_providers::pluggy::PROVIDER;
    let description = tributary_providers::catalog::describe(pluggy).unwrap();
    let request_of = |person, item: &str| {
        let answers = Answers::new(person, "connect@example.com", None).with("item_id", item);
        (description.connect.request)(&answers).unwrap()
    };

    let widget = engine
        .connect_widget(pluggy, None, user)
        .unwrap()
        .expect("Pluggy Connect is offered");
    assert_eq!(widget.script, script);
    assert_eq!(widget.origins, ["https://connect.pluggy.ai"]);
    assert!(widget.inline_styles);
    let option = |widget: &tributary_providers::ConnectWidget, name: &str| {
        widget
            .options
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(
        option(&widget, "connect-token").as_deref(),
        Some("connect-token-1")
    );
    assert_eq!(option(&widget, "include-sandbox").as_deref(), Some("true"));
    assert_eq!(option(&widget, "update-item"), None, "a new item");
    let person = format!("tributary-user-{user}");
    assert_eq!(
        fake.connect_tokens(),
        [serde_json::json!({"options": {"clientUserId": person, "avoidDuplicates": true}})]
    );

    // Someone else's item (made for another person here): refused, nothing
    // stored.
    let stranger = tributary_domain::ids::UserId::new(user.get() + 1000);
    let Err(SyncError::Connect(ConnectorError::InvalidCredentials(why))) =
        engine.connect(user, pluggy, &request_of(stranger, ITEM_ID))
    else {
        panic!("an item made for another person connects nothing")
    };
    assert!(
        why.contains("not made in Pluggy Connect from your account"),
        "{why}"
    );
    // Nor an item made for nobody in particular.
    fake.item_made_for(None);
    let Err(SyncError::Connect(ConnectorError::InvalidCredentials(why))) =
        engine.connect(user, pluggy, &request_of(user, ITEM_ID))
    else {
        panic!("an item made for nobody connects nothing")
    };
    assert!(
        why.contains("not made in Pluggy Connect from your account"),
        "{why}"
    );
    let connections = |db: &Database| {
        tributary_storage::connections::list_for_users(&mut db.conn().unwrap(), &[user]).unwrap()
    };
    assert!(connections(db).is_empty(), "nothing stored");

    // Their own item: connected, and synced with the server's application.
    fake.item_made_for(Some(&person));
    let reads = fake.server_key_reads();
    let connection = engine
        .connect(user, pluggy, &request_of(user, ITEM_ID))
        .unwrap();
    assert_eq!(connection.settings["client_user_id"], person.as_str());
    let SyncOutcome::Synced { summary, .. } = engine
        .sync_now(connection.id, SyncJobKind::OnDemand, "test")
        .unwrap()
    else {
        panic!("the sync failed")
    };
    assert_eq!(summary.accounts_seen, 4);
    assert!(
        fake.server_key_reads() >= reads + 4,
        "the item and its listings read with the server's key"
    );
    assert_eq!(fake.server_keys_given(), 1, "one key, reused");
    // Pluggy's item no longer the person's: not read, the person is asked.
    fake.item_made_for(Some("tributary-user-somebody-else"));
    let SyncOutcome::ProviderFailed {
        error: ConnectorError::ReauthRequired(why),
        ..
    } = engine
        .sync_now(connection.id, SyncJobKind::OnDemand, "test")
        .unwrap()
    else {
        panic!("another person's item is not read")
    };
    assert!(
        why.contains("not made for this connection's person"),
        "{why}"
    );
    fake.item_made_for(Some(&person));
    let dump = tributary_storage::testing::dump(db);
    assert!(
        !dump.contains(SERVER_CLIENT_SECRET),
        "the server's secret is not stored"
    );

    // Signing in again: Pluggy Connect updates that item, for them.
    let repair = engine
        .connect_widget(pluggy, Some(&connection.settings), user)
        .unwrap()
        .expect("Pluggy Connect in update");
    assert_eq!(option(&repair, "update-item").as_deref(), Some(ITEM_ID));
    assert_eq!(
        fake.connect_tokens().last().unwrap()["itemId"],
        ITEM_ID,
        "the token is for that item"
    );
    let again = engine
        .reconnect(connection.id, &request_of(user, ITEM_ID))
        .unwrap();
    assert_eq!(again.id, connection.id);
    assert_eq!(connections(db).len(), 1);

    // Pluggy failing: no widget, and the page says so (`Err`).
    fake.set_fault(Some(Fault::ServerError));
    assert!(engine.connect_widget(pluggy, None, user).is_err());
    fake.set_fault(None);

    // A connection made with a person's own application is repaired in
    // their own Pluggy: no widget for it.
    let own = serde_json::json!({ "item_id": ITEM_ID });
    assert!(
        engine
            .connect_widget(pluggy, Some(&own), user)
            .unwrap()
            .is_none()
    );
    // And the pair still connects beside the server's application.
    fake.item_made_for(None);
    assert!(
        engine
            .connect(user, pluggy, &request(CLIENT_SECRET))
            .is_ok()
    );
}
