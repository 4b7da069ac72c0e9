//! Mailing notices (docs/changes.md#notices): a worker claims the notices
//! storage wrote beside the changes they tell of (a consent about to end,
//! an endpoint Tributary disabled), renders each into a message and sends
//! it; a failure is tried again on the webhooks' schedule, then given up
//! (and logged). A worker killed mid-send leaves the notice to another when
//! its lease ends, so a notice may arrive twice but is never lost.

use crate::mail::{Mail, Mailer};
use crate::retry;
use chrono::NaiveDateTime;
use rand::RngExt as _;
use std::sync::Arc;
use std::time::Duration;
use tributary_domain::clock::Clock;
use tributary_domain::notice::{Notice, ReminderStage};
use tributary_storage::notices::{self, ClaimedNotice, NoticeOutcome};
use tributary_storage::{Database, StorageError};

/// Notices one worker claims at once.
const BATCH: i64 = 20;

/// The message telling `to` of `notice`.
pub fn render(to: &str, notice: &Notice) -> Mail {
    let (subject, body) = match notice {
        Notice::ConsentExpiring {
            institution,
            expires_at,
            stage,
            ..
        } => {
            let day = expires_at.format("%-d %B %Y");
            let when = match stage {
                ReminderStage::DayBefore => "tomorrow".to_owned(),
                ReminderStage::WeekBefore => format!("on {day}"),
            };
            (
                format!("Your connection to {institution} ends {when}"),
                format!(
                    "The access you gave to your accounts at {institution} ends {when} \
                     ({} UTC). After that, no new transactions or balances arrive from \
                     it.\n\nTo keep them coming, reconnect {institution} before then, \
                     from the app you use with Tributary or from your dashboard: your \
                     bank will ask you to confirm again.\n",
                    expires_at.format("%Y-%m-%d %H:%M")
                ),
            )
        }
        Notice::EndpointDisabled {
            endpoint_id,
            url,
            reason,
        } => (
            format!("Webhooks to {url} are stopped"),
            format!(
                "Tributary stopped sending webhooks to {url} (endpoint {endpoint_id}): \
                 {reason}.\n\nEvents from now on are not sent to it; their deliveries \
                 are listed in the endpoint's delivery log. Once the receiver works, \
                 enable the endpoint again (PATCH /webhooks/{endpoint_id} with \
                 {{\"enabled\": true}}) and replay what it missed.\n"
            ),
        ),
    };
    Mail {
        to: to.to_owned(),
        subject,
        body,
    }
}

/// Mails due notices; run by the sync workers beside the webhooks.
#[derive(Debug, Clone)]
pub struct NoticeSender {
    db: Database,
    clock: Arc<dyn Clock>,
    mailer: Arc<dyn Mailer>,
    /// How long a worker holds a notice it is sending.
    lease: Duration,
}

impl NoticeSender {
    pub fn new(db: Database, clock: Arc<dyn Clock>, mailer: Arc<dyn Mailer>) -> Self {
        NoticeSender {
            db,
            clock,
            mailer,
            lease: Duration::from_secs(5 * 60),
        }
    }

    fn now(&self) -> NaiveDateTime {
        self.clock.now().naive_utc()
    }

    /// Sends what is due until nothing is; how many were tried. Notices
    /// done long ago are forgotten when new ones were sent (the table only
    /// grows then), not on every idle poll.
    pub fn run_due(&self) -> Result<usize, StorageError> {
        let mut tried = 0;
        loop {
            let now = self.now();
            let lease_until = now
                + chrono::Duration::from_std(self.lease).unwrap_or(chrono::Duration::minutes(5));
            let claimed = notices::claim_due(&mut *self.db.conn()?, now, lease_until, BATCH)?;
            if claimed.is_empty() {
                break;
            }
            for notice in claimed {
                let outcome = self.send(&notice);
                if !notices::record_outcome(&mut *self.db.conn()?, &notice, &outcome, self.now())? {
                    log::warn!("mail notice {} was taken over by another worker", notice.id);
                }
                tried += 1;
            }
        }
        if tried > 0 {
            notices::purge_done(&mut *self.db.conn()?, self.now() - notices::DONE_KEPT)?;
        }
        Ok(tried)
    }

    fn send(&self, claimed: &ClaimedNotice) -> NoticeOutcome {
        let Err(err) = self.mailer.send(&render(&claimed.to, &claimed.notice)) else {
            return NoticeOutcome::Sent;
        };
        // The address is personal data: the log names the notice only.
        let error = err.reason;
        let attempts = u32::try_from(claimed.attempts).unwrap_or(u32::MAX);
        match retry::next_delay(attempts, None, rand::rng().random_range(0..=1000)) {
            Some(delay) => NoticeOutcome::Retry {
                at: self.now()
                    + chrono::Duration::from_std(delay).unwrap_or(chrono::Duration::hours(24)),
                error,
            },
            None => {
                log::error!(
                    "mail notice {} given up after {attempts} attempts: {error}",
                    claimed.id
                );
                NoticeOutcome::GivenUp { error }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_domain::ids::{ConnectionId, WebhookEndpointId};

    fn at(day: u32, hour: u32) -> NaiveDateTime {
        chrono::NaiveDate::from_ymd_opt(2026, 12, day)
            .unwrap()
            .and_hms_opt(hour, 0, 0)
            .unwrap()
    }

    #[test]
    fn a_consent_reminder_names_the_bank_and_the_day() {
        let notice = |stage| Notice::ConsentExpiring {
            connection_id: ConnectionId::new(3),
            institution: "Example Bank".into(),
            expires_at: at(9, 14),
            stage,
        };
        let week = render("ana@example.com", &notice(ReminderStage::WeekBefore));
        assert_eq!(week.to, "ana@example.com");
        assert_eq!(
            week.subject,
            "Your connection to Example Bank ends on 9 December 2026"
        );
        assert!(
            week.body.contains("(2026-12-09 14:00 UTC)"),
            "{}",
            week.body
        );
        let day = render("ana@example.com", &notice(ReminderStage::DayBefore));
        assert_eq!(day.subject, "Your connection to Example Bank ends tomorrow");
    }

    #[test]
    fn a_disabled_endpoint_says_why_and_how_to_resume() {
        let mail = render(
            "dev@example.com",
            &Notice::EndpointDisabled {
                endpoint_id: WebhookEndpointId::new(12),
                url: "https://hooks.example/in".into(),
                reason: "the receiver answered 410 Gone".into(),
            },
        );
        assert_eq!(
            mail.subject,
            "Webhooks to https://hooks.example/in are stopped"
        );
        assert!(mail.body.contains("the receiver answered 410 Gone"));
        assert!(
            mail.body
                .contains(r#"PATCH /webhooks/12 with {"enabled": true}"#)
        );
    }

    /// A mailer that refuses everything, as an SMTP server that is down.
    #[derive(Debug)]
    struct Refusing;

    impl Mailer for Refusing {
        fn send(&self, mail: &Mail) -> Result<(), crate::mail::MailError> {
            Err(crate::mail::MailError {
                to: mail.to.clone(),
                reason: "connection refused".into(),
            })
        }
    }

    #[test]
    fn a_refused_notice_is_retried_on_the_schedule_then_given_up() {
        tributary_storage::testing::on_every_backend(|db| {
            let clock = Arc::new(tributary_domain::clock::ManualClock::new(
                at(1, 9).and_utc(),
            ));
            let now = clock.now().naive_utc();
            let conn = &mut *db.conn().unwrap();
            let user = tributary_storage::users::create_personal_user(conn, "ana@example.com", now)
                .unwrap();
            let notice = Notice::EndpointDisabled {
                endpoint_id: WebhookEndpointId::new(1),
                url: "https://hooks.example/in".into(),
                reason: "the receiver answered 410 Gone".into(),
            };
            let to = tributary_storage::notices::Recipient::User(user.id);
            tributary_storage::notices::record(conn, to, &notice, None, now).unwrap();
            let sender = NoticeSender::new(db.clone(), clock.clone(), Arc::new(Refusing));
            // Each attempt fails and waits its turn: nothing is due before.
            for attempt in 1..retry::MAX_ATTEMPTS {
                assert_eq!(sender.run_due().unwrap(), 1, "attempt {attempt}");
                assert_eq!(sender.run_due().unwrap(), 0);
                clock.advance(chrono::Duration::hours(27));
            }
            assert_eq!(sender.run_due().unwrap(), 1, "the last attempt");
            clock.advance(chrono::Duration::days(2));
            assert_eq!(sender.run_due().unwrap(), 0, "given up");
            // A working mailer finds nothing left either: it was not sent.
            let outbox = crate::mail::DevOutbox::default();
            let working = NoticeSender::new(db.clone(), clock.clone(), Arc::new(outbox.clone()));
            assert_eq!(working.run_due().unwrap(), 0);
            assert!(outbox.messages().is_empty());
        });
    }
}
