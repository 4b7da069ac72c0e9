//! Mail from request handlers: the mailers themselves live in
//! `tributary_notify::mail`; this sends one off the async runtime.

use std::sync::Arc;
use tributary_notify::mail::{Mail, Mailer};

/// Sends `mail` on a blocking thread; `false` (and logged) when it could
/// not be sent.
pub(crate) async fn deliver(
    mailer: Arc<dyn Mailer>,
    mail: Mail,
) -> Result<bool, actix_web::error::BlockingError> {
    Ok(
        match actix_web::web::block(move || mailer.send(&mail)).await? {
            Ok(()) => true,
            Err(err) => {
                log::error!("sign-in code not sent: {err}");
                false
            }
        },
    )
}
