//! Alice's SimpleFIN destinations in the test world: setup tokens, the
//! pending payment that posts, revocation. Shared by the SimpleFIN server
//! tests and the third-party client test.

use crate::TestServer;
use base64::Engine as _;
use reqwest::{Client, StatusCode};
use serde_json::Value;
use tributary_auth::simplefin as access;
use tributary_domain::clock::Clock;
use tributary_domain::ids::AccountId;
use tributary_storage::users;

/// A setup token for alice, reaching this server.
pub fn setup_token(server: &TestServer, scope: Option<&[AccountId]>) -> String {
    let conn = &mut *server.database.db().conn().unwrap();
    let alice = users::find_personal_user(conn, "alice@example.com")
        .unwrap()
        .unwrap()
        .id;
    access::create(
        conn,
        alice,
        "test app",
        scope,
        &server.url("/simplefin/claim"),
        server.clock.now(),
    )
    .unwrap()
    .setup_token
}

/// The claim URL a setup token encodes.
pub fn claim_url(setup_token: &str) -> String {
    String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(setup_token)
            .unwrap(),
    )
    .unwrap()
}

/// Midnight UTC of `date` (YYYY-MM-DD) in epoch seconds, as SimpleFIN dates are.
pub fn epoch(date: &str) -> i64 {
    chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d")
        .unwrap()
        .and_time(chrono::NaiveTime::MIN)
        .and_utc()
        .timestamp()
}

/// The imported account's pending bakery payment posts (same provider id,
/// a new amount), as a re-import of a newer statement would bring it.
pub fn post_the_pending_bakery(server: &TestServer) {
    use diesel::prelude::*;
    use tributary_storage::schema::transactions;
    let conn = &mut *server.database.db().conn().unwrap();
    let changed = diesel::update(
        transactions::table.filter(transactions::provider_transaction_id.eq("row-pending")),
    )
    .set((
        transactions::is_pending.eq(false),
        transactions::amount.eq("-42.10"),
    ))
    .execute(conn)
    .unwrap();
    assert_eq!(changed, 1);
}

/// Revokes every SimpleFIN destination of alice.
pub fn revoke_all(server: &TestServer) {
    let conn = &mut *server.database.db().conn().unwrap();
    let alice = users::find_personal_user(conn, "alice@example.com")
        .unwrap()
        .unwrap()
        .id;
    for (destination, _) in tributary_storage::simplefin::list_for_user(conn, alice).unwrap() {
        tributary_storage::simplefin::revoke(conn, destination.id, server.clock.now().naive_utc())
            .unwrap();
    }
}

/// Claims a setup token as a client does: its status and body.
pub async fn claim(setup_token: &str) -> (StatusCode, String) {
    let response = Client::new()
        .post(claim_url(setup_token))
        .header("content-length", "0")
        .send()
        .await
        .unwrap();
    (response.status(), response.text().await.unwrap())
}

/// `GET {access URL}/accounts?{query}` with the URL's Basic credentials.
pub async fn accounts(access_url: &str, query: &str) -> (StatusCode, Value) {
    let url = url::Url::parse(access_url).unwrap();
    let mut target = url.clone();
    target.set_username("").unwrap();
    target.set_password(None).unwrap();
    let response = Client::new()
        .get(format!(
            "{}/accounts?{query}",
            target.as_str().trim_end_matches('/')
        ))
        .basic_auth(url.username(), url.password())
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap())
}

/// Asserts that `transactions` (SimpleFIN transactions, oldest first) carry
/// the seeded [`EXACT_AMOUNTS`](crate::EXACT_AMOUNTS), digit for digit in
/// value.
pub fn assert_exact_amounts(transactions: &[Value]) {
    use tributary_domain::money::parse_decimal;
    let amounts: Vec<_> = transactions
        .iter()
        .map(|t| parse_decimal(t["amount"].as_str().unwrap()).unwrap())
        .collect();
    let expected: Vec<_> = crate::EXACT_AMOUNTS
        .iter()
        .map(|a| parse_decimal(a).unwrap())
        .collect();
    assert_eq!(amounts, expected, "exact amounts, ordered by date");
}

/// The page `GET {root}/create` answers (200 asserted).
pub async fn create_page(create_url: &str) -> String {
    let create = reqwest::get(create_url).await.unwrap();
    assert_eq!(create.status(), StatusCode::OK);
    create.text().await.unwrap()
}
