//! Checkout for apps whose users pay: the [`PaymentProcessor`] trait, a
//! built-in test processor with documented test cards, and Stripe Checkout.
//!
//! A checkout starts at the processor (which answers where to send the
//! browser) and is confirmed by asking the processor again when the browser
//! comes back: the browser's word that it paid is never taken.
//!
//! Processors are synchronous, like connectors: they run off the async
//! runtime (`web::block`).

use chrono::NaiveDateTime;
use serde::Deserialize;
use std::fmt;
use std::time::Duration;
use tributary_domain::ids::UserId;
use tributary_domain::model::{CheckoutStatus, PaymentProcessorKind};
use tributary_storage::{Database, StorageError, checkouts};

/// What the processor needs to start a checkout.
#[derive(Debug, Clone)]
pub struct CheckoutRequest {
    /// Tributary's id of the paying user (Stripe's `client_reference_id`).
    pub user_id: UserId,
    pub email: String,
    /// Absolute URL the browser returns to after paying.
    pub return_url: String,
    /// Absolute URL the browser returns to when the person gives up.
    pub cancel_url: String,
}

/// A checkout the processor opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartedCheckout {
    /// The processor's id of the checkout.
    pub external_id: String,
    /// Where to send the browser to pay.
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckoutState {
    Paid {
        subscription_reference: String,
    },
    /// Not paid (yet): the person left, or the payment is still open.
    Open,
    Declined,
}

#[derive(Debug, thiserror::Error)]
pub enum PaymentError {
    #[error("the payment processor is unavailable: {0}")]
    Unavailable(String),
    #[error("the payment processor refused the request: {0}")]
    Rejected(String),
    #[error("no checkout `{0}` is known")]
    UnknownCheckout(String),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

pub trait PaymentProcessor: Send + Sync + fmt::Debug {
    /// Which processor this is, as stored with checkouts and subscriptions.
    fn kind(&self) -> PaymentProcessorKind;
    fn start(&self, request: &CheckoutRequest) -> Result<StartedCheckout, PaymentError>;
    fn confirm(&self, external_id: &str) -> Result<CheckoutState, PaymentError>;
}

/// Card numbers the test processor knows (docs/platform.md lists them).
pub const TEST_CARD_PAID: &str = "4242424242424242";
pub const TEST_CARD_DECLINED: &str = "4000000000000002";

/// The built-in processor for development and tests: its "hosted page" is
/// Tributary's own `/checkout/test/{id}`, where the test card pays and
/// every other number is declined. Its state lives in the `checkouts` table,
/// so every server instance sees the same checkouts. Never configure it where
/// real users pay.
#[derive(Debug, Clone)]
pub struct TestProcessor {
    db: Database,
}

impl TestProcessor {
    pub const KIND: PaymentProcessorKind = PaymentProcessorKind::Test;

    pub fn new(db: Database) -> Self {
        Self { db }
    }

    /// What the test checkout page does with a card number; `true` if paid.
    pub fn pay(
        &self,
        external_id: &str,
        card_number: &str,
        now: NaiveDateTime,
    ) -> Result<bool, PaymentError> {
        let mut conn = self.db.conn()?;
        let checkout = checkouts::find_checkout(&mut conn, Self::KIND, external_id)?
            .ok_or_else(|| PaymentError::UnknownCheckout(external_id.to_owned()))?;
        let digits: String = card_number.chars().filter(char::is_ascii_digit).collect();
        if digits == TEST_CARD_PAID {
            let reference = format!("test_sub_{}", checkout.id);
            checkouts::set_checkout_status(
                &mut conn,
                checkout.id,
                CheckoutStatus::Paid,
                Some(&reference),
                now,
            )?;
            Ok(true)
        } else {
            checkouts::set_checkout_status(
                &mut conn,
                checkout.id,
                CheckoutStatus::Declined,
                None,
                now,
            )?;
            Ok(false)
        }
    }
}

impl PaymentProcessor for TestProcessor {
    fn kind(&self) -> PaymentProcessorKind {
        Self::KIND
    }

    fn start(&self, _request: &CheckoutRequest) -> Result<StartedCheckout, PaymentError> {
        let mut bytes = [0u8; 12];
        rand::Rng::fill_bytes(&mut rand::rng(), &mut bytes);
        let external_id = format!("test_cs_{}", hex_string(&bytes));
        Ok(StartedCheckout {
            url: format!("/checkout/test/{external_id}"),
            external_id,
        })
    }

    fn confirm(&self, external_id: &str) -> Result<CheckoutState, PaymentError> {
        let checkout = checkouts::find_checkout(&mut *self.db.conn()?, Self::KIND, external_id)?
            .ok_or_else(|| PaymentError::UnknownCheckout(external_id.to_owned()))?;
        Ok(match (checkout.status, checkout.subscription_reference) {
            (CheckoutStatus::Paid, Some(reference)) => CheckoutState::Paid {
                subscription_reference: reference,
            },
            (CheckoutStatus::Declined, _) => CheckoutState::Declined,
            _ => CheckoutState::Open,
        })
    }
}

/// Starts a checkout for the user at `processor` and records it as open, so
/// that [`confirm_latest_checkout`] can ask about it when the browser is back.
pub fn start_checkout(
    db: &Database,
    processor: &dyn PaymentProcessor,
    request: &CheckoutRequest,
    now: NaiveDateTime,
) -> Result<StartedCheckout, PaymentError> {
    let started = processor.start(request)?;
    checkouts::insert_checkout(
        &mut *db.conn()?,
        request.user_id,
        processor.kind(),
        &started.external_id,
        now,
    )?;
    Ok(started)
}

/// Asks `processor`, not the browser, whether the user's latest checkout with
/// it was paid; a paid one is recorded with the user's subscription in one
/// transaction. `Open` when the user has no checkout there.
pub fn confirm_latest_checkout(
    db: &Database,
    processor: &dyn PaymentProcessor,
    user_id: UserId,
    now: NaiveDateTime,
) -> Result<CheckoutState, PaymentError> {
    let Some(checkout) = checkouts::latest_checkout(&mut *db.conn()?, user_id)?
        .filter(|checkout| checkout.processor == processor.kind())
    else {
        return Ok(CheckoutState::Open);
    };
    // No pooled connection is held while the processor answers.
    let state = processor.confirm(&checkout.external_id)?;
    if let CheckoutState::Paid {
        subscription_reference,
    } = &state
    {
        checkouts::record_paid(&mut *db.conn()?, &checkout, subscription_reference, now)?;
    }
    Ok(state)
}

fn hex_string(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Stripe Checkout in subscription mode for one price.
#[derive(Clone)]
pub struct StripeProcessor {
    /// `https://api.stripe.com` (a local fake in tests).
    pub api_base: String,
    pub secret_key: String,
    /// The price (`price_…`) of the subscription users buy.
    pub price_id: String,
    pub timeout: Duration,
}

// The secret key never reaches a log through `{:?}`.
impl fmt::Debug for StripeProcessor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StripeProcessor")
            .field("api_base", &self.api_base)
            .field("secret_key", &"<redacted>")
            .field("price_id", &self.price_id)
            .finish()
    }
}

#[derive(Deserialize)]
struct StripeSession {
    id: String,
    url: Option<String>,
    status: Option<String>,
    payment_status: Option<String>,
    subscription: Option<String>,
}

#[derive(Deserialize)]
struct StripeErrorBody {
    error: StripeErrorDetail,
}

#[derive(Deserialize)]
struct StripeErrorDetail {
    message: Option<String>,
}

impl StripeProcessor {
    pub const KIND: PaymentProcessorKind = PaymentProcessorKind::Stripe;

    /// A client per call: checkouts are rare, and a blocking client must
    /// not outlive the worker thread that made it.
    fn client(&self) -> Result<reqwest::blocking::Client, PaymentError> {
        reqwest::blocking::Client::builder()
            .timeout(self.timeout)
            .build()
            .map_err(|err| PaymentError::Unavailable(format!("HTTP client: {err}")))
    }

    fn read(response: reqwest::blocking::Response) -> Result<StripeSession, PaymentError> {
        let status = response.status();
        let body = response
            .text()
            .map_err(|err| PaymentError::Unavailable(format!("reading Stripe's answer: {err}")))?;
        if status.is_server_error() || status.as_u16() == 429 {
            return Err(PaymentError::Unavailable(format!(
                "Stripe answered {status}"
            )));
        }
        if !status.is_success() {
            let message = serde_json::from_str::<StripeErrorBody>(&body)
                .ok()
                .and_then(|b| b.error.message)
                .unwrap_or_else(|| format!("HTTP {status}"));
            return Err(PaymentError::Rejected(message));
        }
        serde_json::from_str(&body).map_err(|err| {
            PaymentError::Unavailable(format!("Stripe's answer does not read: {err}"))
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}/v1/{path}", self.api_base.trim_end_matches('/'))
    }
}

impl PaymentProcessor for StripeProcessor {
    fn kind(&self) -> PaymentProcessorKind {
        Self::KIND
    }

    fn start(&self, request: &CheckoutRequest) -> Result<StartedCheckout, PaymentError> {
        let user = request.user_id.to_string();
        let form = [
            ("mode", "subscription"),
            ("line_items[0][price]", self.price_id.as_str()),
            ("line_items[0][quantity]", "1"),
            ("success_url", request.return_url.as_str()),
            ("cancel_url", request.cancel_url.as_str()),
            ("client_reference_id", user.as_str()),
            ("customer_email", request.email.as_str()),
        ];
        let response = self
            .client()?
            .post(self.url("checkout/sessions"))
            .bearer_auth(&self.secret_key)
            .form(&form)
            .send()
            .map_err(|err| PaymentError::Unavailable(format!("reaching Stripe: {err}")))?;
        let session = Self::read(response)?;
        let url = session.url.ok_or_else(|| {
            PaymentError::Unavailable("Stripe's checkout session has no url".into())
        })?;
        Ok(StartedCheckout {
            external_id: session.id,
            url,
        })
    }

    fn confirm(&self, external_id: &str) -> Result<CheckoutState, PaymentError> {
        if !external_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            return Err(PaymentError::UnknownCheckout(external_id.to_owned()));
        }
        let response = self
            .client()?
            .get(self.url(&format!("checkout/sessions/{external_id}")))
            .bearer_auth(&self.secret_key)
            .send()
            .map_err(|err| PaymentError::Unavailable(format!("reaching Stripe: {err}")))?;
        let session = Self::read(response)?;
        let complete = session.status.as_deref() == Some("complete");
        let paid = matches!(
            session.payment_status.as_deref(),
            Some("paid" | "no_payment_required")
        );
        Ok(if complete && paid {
            CheckoutState::Paid {
                subscription_reference: session.subscription.unwrap_or(session.id),
            }
        } else {
            CheckoutState::Open
        })
    }
}
