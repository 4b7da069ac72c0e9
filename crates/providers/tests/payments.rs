//! Checkout processors: Stripe Checkout against a local fake of its API,
//! and the built-in test processor over SQLite and PostgreSQL.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use chrono::{NaiveDate, NaiveDateTime};
use std::time::Duration;
use tributary_domain::ids::UserId;
use tributary_providers::payments::{
    CheckoutRequest, CheckoutState, PaymentError, PaymentProcessor, StripeProcessor,
    TEST_CARD_DECLINED, TEST_CARD_PAID, TestProcessor,
};
use tributary_storage::testing::on_every_backend;
use tributary_storage::{checkouts, users};
use wiremock::matchers::{body_string_contains, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk_test_tributary_fake_key";

fn noon() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 11, 21)
        .unwrap()
        .and_hms_opt(12, 0, 0)
        .unwrap()
}

fn request() -> CheckoutRequest {
    CheckoutRequest {
        user_id: UserId::new(42),
        email: "payer@example.com".into(),
        return_url: "https://tributary.example/connect/checkout/return".into(),
        cancel_url: "https://tributary.example/connect/checkout".into(),
    }
}

fn stripe(server: &MockServer) -> StripeProcessor {
    StripeProcessor {
        api_base: server.uri(),
        secret_key: KEY.into(),
        price_id: "price_monthly".into(),
        timeout: Duration::from_secs(5),
    }
}

/// Runs blocking processor calls off the runtime that serves the fake.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(work).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn stripe_checkout_starts_a_subscription_session_and_confirms_only_what_stripe_says_was_paid()
{
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/checkout/sessions"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .and(body_string_contains("mode=subscription"))
        .and(body_string_contains(
            "line_items%5B0%5D%5Bprice%5D=price_monthly",
        ))
        .and(body_string_contains("client_reference_id=42"))
        .and(body_string_contains("customer_email=payer%40example.com"))
        .and(body_string_contains(
            "success_url=https%3A%2F%2Ftributary.example%2Fconnect%2Fcheckout%2Freturn",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "cs_test_a1", "object": "checkout.session",
            "url": "https://checkout.stripe.com/c/pay/cs_test_a1", "status": "open",
        })))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/checkout/sessions/cs_test_paid"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "cs_test_paid", "status": "complete", "payment_status": "paid", "subscription": "sub_123",
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/checkout/sessions/cs_test_open"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "cs_test_open", "status": "open", "payment_status": "unpaid", "subscription": null,
        })))
        .mount(&server)
        .await;

    let processor = stripe(&server);
    let (started, paid, open) = blocking(move || {
        (
            processor.start(&request()).unwrap(),
            processor.confirm("cs_test_paid").unwrap(),
            processor.confirm("cs_test_open").unwrap(),
        )
    })
    .await;
    assert_eq!(started.external_id, "cs_test_a1");
    assert_eq!(started.url, "https://checkout.stripe.com/c/pay/cs_test_a1");
    assert_eq!(
        paid,
        CheckoutState::Paid {
            subscription_reference: "sub_123".into()
        }
    );
    assert_eq!(open, CheckoutState::Open);
}

#[tokio::test(flavor = "multi_thread")]
async fn stripe_failures_are_told_apart_and_no_secret_shows() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/checkout/sessions"))
        .respond_with(ResponseTemplate::new(400).set_body_json(serde_json::json!({
            "error": {"type": "invalid_request_error", "message": "No such price: 'price_monthly'"}
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/checkout/sessions/cs_down"))
        .respond_with(ResponseTemplate::new(503))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/checkout/sessions/cs_garbled"))
        .respond_with(ResponseTemplate::new(200).set_body_string("<html>not json</html>"))
        .mount(&server)
        .await;

    let processor = stripe(&server);
    let shown = format!("{processor:?}");
    assert!(!shown.contains(KEY), "{shown}");
    let (rejected, down, garbled, odd) = blocking(move || {
        (
            processor.start(&request()).unwrap_err(),
            processor.confirm("cs_down").unwrap_err(),
            processor.confirm("cs_garbled").unwrap_err(),
            processor.confirm("../../v1/customers").unwrap_err(),
        )
    })
    .await;
    assert!(
        matches!(&rejected, PaymentError::Rejected(m) if m.contains("No such price")),
        "{rejected}"
    );
    assert!(matches!(down, PaymentError::Unavailable(_)), "{down}");
    assert!(matches!(garbled, PaymentError::Unavailable(_)), "{garbled}");
    assert!(matches!(odd, PaymentError::UnknownCheckout(_)), "{odd}");
    // The odd id never reached Stripe: only the three calls above did.
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[test]
fn the_test_processor_pays_with_the_test_card_only() {
    on_every_backend(|db| {
        let processor = TestProcessor::new(db.clone());
        let user =
            users::create_personal_user(&mut db.conn().unwrap(), "t@example.com", noon()).unwrap();
        let checkout = |card: &str| {
            let started = processor
                .start(&CheckoutRequest {
                    user_id: user.id,
                    ..request()
                })
                .unwrap();
            assert!(
                started.url.ends_with(&started.external_id),
                "{}",
                started.url
            );
            checkouts::insert_checkout(
                &mut db.conn().unwrap(),
                user.id,
                TestProcessor::KIND,
                &started.external_id,
                noon(),
            )
            .unwrap();
            assert_eq!(
                processor.confirm(&started.external_id).unwrap(),
                CheckoutState::Open
            );
            let paid = processor.pay(&started.external_id, card, noon()).unwrap();
            (paid, processor.confirm(&started.external_id).unwrap())
        };
        // The card as people type it, in groups of four.
        assert_eq!(TEST_CARD_PAID, "4242424242424242");
        let (paid, state) = checkout("4242 4242 4242 4242");
        assert!(paid);
        assert!(matches!(state, CheckoutState::Paid { .. }));
        assert_eq!(
            checkout(TEST_CARD_DECLINED),
            (false, CheckoutState::Declined)
        );
        assert_eq!(
            checkout("5555 5555 5555 4444"),
            (false, CheckoutState::Declined)
        );
        assert!(matches!(
            processor.confirm("test_cs_unknown"),
            Err(PaymentError::UnknownCheckout(_))
        ));
        assert!(matches!(
            processor.pay("test_cs_unknown", TEST_CARD_PAID, noon()),
            Err(PaymentError::UnknownCheckout(_))
        ));
    });
}
