//! Outgoing mail (sign-in codes, and the notices of [`crate::notices`]):
//! SMTP through lettre when `TRIBUTARY_SMTP_URL` is set; otherwise a
//! development outbox that writes each message to the log and keeps it in
//! memory for tests to read.

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

/// Sends mail; blocking (from async code, call it on a blocking thread).
pub trait Mailer: Send + Sync + fmt::Debug {
    fn send(&self, mail: &Mail) -> Result<(), MailError>;
}

impl Mail {
    /// A sign-in code for `what` ("Budget app", "your Tributary
    /// dashboard"): the code leads the subject, so a phone's notification
    /// shows it.
    pub fn sign_in_code(to: &str, code: &str, what: &str) -> Self {
        Self {
            to: to.to_owned(),
            subject: format!("{code} is your code for {what}"),
            body: format!(
                "Your sign-in code for {what} is:\n\n    {code}\n\nIt is valid for 10 minutes. If you did not ask for it, ignore this message.\n"
            ),
        }
    }
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

/// The development outbox keeps this many messages, the newest.
const DEV_OUTBOX_CAPACITY: usize = 100;

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
        let mut messages = self.messages.lock().map_err(|_| MailError {
            to: mail.to.clone(),
            reason: "the outbox lock is poisoned".into(),
        })?;
        messages.push(mail.clone());
        let excess = messages.len().saturating_sub(DEV_OUTBOX_CAPACITY);
        messages.drain(..excess);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;

    /// A one-message SMTP server on loopback: answers the commands lettre
    /// sends and returns the whole conversation it received.
    fn fake_smtp() -> (u16, std::thread::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let server = std::thread::spawn(move || {
            let (stream, _) = listener.accept().expect("accept");
            // A client that stops talking fails the test instead of hanging it.
            stream
                .set_read_timeout(Some(std::time::Duration::from_secs(30)))
                .expect("read timeout");
            let mut writer = stream.try_clone().expect("clone");
            let mut reader = BufReader::new(stream);
            let mut said = String::new();
            writer.write_all(b"220 fake ESMTP\r\n").expect("greet");
            let mut in_data = false;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).expect("read") == 0 {
                    break;
                }
                said.push_str(&line);
                let reply: &[u8] = if in_data {
                    if line == ".\r\n" {
                        in_data = false;
                        b"250 queued\r\n"
                    } else {
                        continue;
                    }
                } else if line.starts_with("DATA") {
                    in_data = true;
                    b"354 go on\r\n"
                } else if line.starts_with("QUIT") {
                    writer.write_all(b"221 bye\r\n").expect("reply");
                    break;
                } else {
                    b"250 ok\r\n"
                };
                writer.write_all(reply).expect("reply");
            }
            said
        });
        (port, server)
    }

    #[test]
    fn smtp_sends_the_message_to_the_configured_server() {
        let (port, server) = fake_smtp();
        let mailer = SmtpMailer::new(
            &format!("smtp://127.0.0.1:{port}"),
            "Tributary <no-reply@tributary.example>",
        )
        .expect("a mailer");
        assert!(!format!("{mailer:?}").contains("127.0.0.1"));
        mailer
            .send(&Mail {
                to: "ana@example.com".into(),
                subject: "123456 is your code for app-a".into(),
                body: "Your sign-in code is 123456.".into(),
            })
            .expect("sent");
        drop(mailer);
        let said = server.join().expect("the fake server");
        assert!(
            said.contains("MAIL FROM:<no-reply@tributary.example>"),
            "{said}"
        );
        assert!(said.contains("RCPT TO:<ana@example.com>"), "{said}");
        assert!(
            said.contains("Subject: 123456 is your code for app-a"),
            "{said}"
        );
        assert!(said.contains("Your sign-in code is 123456."), "{said}");
    }

    #[test]
    fn bad_settings_and_unreachable_servers_are_errors() {
        assert!(SmtpMailer::new("not a url", "a@example.com").is_err());
        assert!(SmtpMailer::new("smtp://127.0.0.1:1", "not an address").is_err());
        // A server that hangs up at once (a port left free could be taken
        // by another process between the probe and the send).
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        std::thread::spawn(move || drop(listener.accept()));
        let mailer = SmtpMailer::new(&format!("smtp://127.0.0.1:{port}"), "a@example.com")
            .expect("a mailer");
        let err = mailer
            .send(&Mail {
                to: "b@example.com".into(),
                subject: "s".into(),
                body: "b".into(),
            })
            .expect_err("nobody listens");
        assert_eq!(err.to, "b@example.com");
    }

    #[test]
    fn the_development_outbox_keeps_messages_in_order() {
        let outbox = DevOutbox::default();
        for n in 0..3 {
            outbox
                .send(&Mail {
                    to: format!("u{}@example.com", n % 2),
                    subject: format!("message {n}"),
                    body: String::new(),
                })
                .expect("kept");
        }
        assert_eq!(outbox.messages().len(), 3);
        assert_eq!(
            outbox.last_to("u0@example.com").map(|m| m.subject),
            Some("message 2".into())
        );
        assert!(outbox.last_to("nobody@example.com").is_none());
        for n in 0..DEV_OUTBOX_CAPACITY {
            outbox
                .send(&Mail {
                    to: "many@example.com".into(),
                    subject: format!("bulk {n}"),
                    body: String::new(),
                })
                .expect("kept");
        }
        let kept = outbox.messages();
        assert_eq!(kept.len(), DEV_OUTBOX_CAPACITY, "the oldest go first");
        assert_eq!(kept[0].subject, "bulk 0");
    }
}
