//! Mail from request handlers: the mailers themselves live in
//! `tributary_notify::mail`. Sending waits on an SMTP server, so it runs on a
//! thread of its own, never on the handlers' blocking pool (which does the
//! database work: a slow mail server would hold it for every user).

use std::sync::Arc;
use tributary_notify::mail::{Mail, Mailer};

/// Sends `mail` and waits for the outcome: `false` (and logged) when it
/// could not be sent.
pub(crate) async fn deliver(mailer: Arc<dyn Mailer>, mail: Mail) -> bool {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("mail".into())
        .spawn(move || {
            let _ = sender.send(mailer.send(&mail));
        });
    if let Err(err) = spawned {
        log::error!("sign-in code not sent: no thread to send it on: {err}");
        return false;
    }
    match receiver.await {
        Ok(Ok(())) => true,
        Ok(Err(err)) => {
            log::error!("sign-in code not sent: {err}");
            false
        }
        Err(_) => {
            log::error!("sign-in code not sent: the sending thread ended");
            false
        }
    }
}
