//! Outgoing mail (sign-in codes): SMTP through lettre when
//! `TRIBUTARY_SMTP_URL` is set; otherwise a development outbox that writes
//! each message to the log and keeps it in memory for tests to read.

use lettre::message::Mailbox;
use lettre::{Message, SmtpTransport, Transport as _};
use std::fmt;
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mail {
    pub to: String,
    pub subject: String,
    pub body: String,
}

#[derive(Debug, thiserror::Error)]
#[error("the message to {to} was not sent: {reason}")]
pub struct MailError {
    pub to: String,
    pub reason: String,
}

/// Sends mail; blocking (call it from `web::block`).
pub trait Mailer: Send + Sync + fmt::Debug {
    fn send(&self, mail: &Mail) -> Result<(), MailError>;
}

/// SMTP, e.g. `smtps://user:password@smtp.example.com` or
/// `smtp://relay.internal:25` (lettre's URL format).
pub struct SmtpMailer {
    transport: SmtpTransport,
    from: Mailbox,
}

impl fmt::Debug for SmtpMailer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The URL holds the SMTP password: only the sender is shown.
        f.debug_struct("SmtpMailer")
            .field("from", &self.from.to_string())
            .finish()
    }
}

impl SmtpMailer {
    pub fn new(url: &str, from: &str) -> Result<Self, String> {
        let transport = SmtpTransport::from_url(url)
            .map_err(|err| format!("the SMTP URL does not read: {err}"))?
            .build();
        let from = from
            .parse::<Mailbox>()
            .map_err(|err| format!("`{from}` is not a sender address: {err}"))?;
        Ok(Self { transport, from })
    }
}

impl Mailer for SmtpMailer {
    fn send(&self, mail: &Mail) -> Result<(), MailError> {
        let fail = |reason: String| MailError {
            to: mail.to.clone(),
            reason,
        };
        let to = mail
            .to
            .parse::<Mailbox>()
            .map_err(|err| fail(format!("not an address: {err}")))?;
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(&mail.subject)
            .body(mail.body.clone())
            .map_err(|err| fail(err.to_string()))?;
        self.transport
            .send(&message)
            .map(|_| ())
            .map_err(|err| fail(err.to_string()))
    }
}

/// Development mail: nothing leaves the machine. Each message goes to the
/// log (that is how a developer reads a sign-in code) and into memory.
#[derive(Debug, Clone, Default)]
pub struct DevOutbox {
    messages: Arc<Mutex<Vec<Mail>>>,
}

impl DevOutbox {
    /// Every message sent so far, oldest first.
    pub fn messages(&self) -> Vec<Mail> {
        self.messages.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// The newest message to `to`.
    pub fn last_to(&self, to: &str) -> Option<Mail> {
        self.messages().into_iter().rev().find(|m| m.to == to)
    }
}

impl Mailer for DevOutbox {
    fn send(&self, mail: &Mail) -> Result<(), MailError> {
        log::warn!(
            "no SMTP server is configured (TRIBUTARY_SMTP_URL): mail to {} kept in the development outbox:\nSubject: {}\n\n{}",
            mail.to,
            mail.subject,
            mail.body
        );
        self.messages
            .lock()
            .map_err(|_| MailError {
                to: mail.to.clone(),
                reason: "the outbox lock is poisoned".into(),
            })?
            .push(mail.clone());
        Ok(())
    }
}
