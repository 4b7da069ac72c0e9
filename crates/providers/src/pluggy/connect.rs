//! Pluggy Connect, with this server's own Pluggy application (the
//! operator's client id and secret): the Pluggy bank form opens Pluggy's
//! widget, the person connects their bank in it, and the item it made is
//! connected here as if its id had been pasted (docs/providers.md,
//! "Pluggy").
//!
//! Each page view asks Pluggy for a connect token (`POST /connect_token`,
//! 30 minutes, scoped to the items made with it) naming the person by an
//! opaque id (`clientUserId`, which Pluggy keeps on the item). Connecting
//! reads the item with the server's application and takes it only if it
//! carries that same id: with one application for everybody, an item id
//! alone would let a person read someone else's bank. Signing in again
//! opens the widget on the connection's own item (`itemId`, `updateItem`).

use super::{PluggyConnector, path_segment};
use crate::connector::{ConnectWidget, ConnectorError, script_setting};
use crate::description::{Environment, SettingError};
use serde::Deserialize;
use serde_json::{Value, json};
use tributary_domain::ids::UserId;

/// Pluggy's widget, the latest release (an operator may pin one).
pub const CONNECT_SCRIPT: &str = "https://cdn.pluggy.ai/pluggy-connect/latest/pluggy-connect.js";
/// Where the widget's frame is.
pub const CONNECT_ORIGIN: &str = "https://connect.pluggy.ai";

/// This server's own Pluggy application, for Pluggy Connect.
#[derive(Clone)]
pub struct ServerApplication {
    pub client_id: String,
    pub client_secret: String,
    /// Where the widget's script is loaded from.
    pub script: String,
    /// Whether the widget lists Pluggy's sandbox banks too (for trying it
    /// out; not for production).
    pub include_sandbox: bool,
}

// The secret never reaches a log.
impl std::fmt::Debug for ServerApplication {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerApplication")
            .field("client_id", &self.client_id)
            .field("client_secret", &"<secret>")
            .field("script", &self.script)
            .field("include_sandbox", &self.include_sandbox)
            .finish()
    }
}

/// The server's application, where the operator set its pair.
pub(super) fn configure(env: &Environment<'_>) -> Result<Option<ServerApplication>, SettingError> {
    let Some((client_id, client_secret)) = env.both_or_neither(
        "TRIBUTARY_PLUGGY_CLIENT_ID",
        "TRIBUTARY_PLUGGY_CLIENT_SECRET",
    )?
    else {
        return Ok(None);
    };
    let script = script_setting(env, "TRIBUTARY_PLUGGY_CONNECT_SCRIPT", CONNECT_SCRIPT)?;
    let include_sandbox = match env.get("TRIBUTARY_PLUGGY_INCLUDE_SANDBOX").as_deref() {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            return Err(SettingError {
                name: "TRIBUTARY_PLUGGY_INCLUDE_SANDBOX",
                value: Some(other.to_owned()),
                reason: "must be true or false".into(),
            });
        }
    };
    Ok(Some(ServerApplication {
        client_id,
        client_secret,
        script,
        include_sandbox,
    }))
}

/// Who a person is to Pluggy: an opaque name (no e-mail, nothing of
/// theirs), which Pluggy keeps on the items they connect. One Pluggy
/// application per server: another server's person 1 has the same name.
pub(super) fn client_user_id(person: UserId) -> String {
    format!("tributary-user-{person}")
}

/// Not `Debug`: it is a credential.
#[derive(Deserialize)]
struct ConnectToken {
    #[serde(rename = "accessToken")]
    access_token: String,
}

impl PluggyConnector {
    /// A connect token for `person`: for a new item, or for updating
    /// `item` (one of theirs).
    fn connect_token(
        &self,
        application: &ServerApplication,
        person: UserId,
        item: Option<&str>,
    ) -> Result<String, ConnectorError> {
        let key = self.server_key(application)?;
        let mut body = json!({
            "options": {
                "clientUserId": client_user_id(person),
                // The same bank login twice is one item, not two.
                "avoidDuplicates": true,
            }
        });
        if let Some(item) = item {
            body["itemId"] = json!(item);
        }
        let what = "the connect token";
        let response = self.http.send(
            self.http
                .client
                .post(self.url("connect_token"))
                .header("X-API-KEY", key)
                .json(&body),
            what,
        )?;
        let token: ConnectToken = self.http.json(response, what, super::refusal)?;
        Ok(token.access_token)
    }

    /// Pluggy Connect for `person`, where this server has an application:
    /// a new item, or (`repairing` a connection made with it) the
    /// connection's item updated. A connection made with the person's own
    /// application is repaired in their Pluggy, not here.
    pub(super) fn widget(
        &self,
        repairing: Option<&Value>,
        person: UserId,
    ) -> Result<Option<ConnectWidget>, ConnectorError> {
        let Some(application) = self.config.server_application.as_ref() else {
            return Ok(None);
        };
        let item = match repairing {
            None => None,
            Some(settings) if settings.get("client_user_id").is_some() => {
                let item = super::item_id(settings)?;
                path_segment(item)?;
                Some(item)
            }
            Some(_) => return Ok(None),
        };
        let token = self.connect_token(application, person, item)?;
        let mut options = vec![("connect-token", token)];
        if application.include_sandbox {
            options.push(("include-sandbox", "true".to_owned()));
        }
        if let Some(item) = item {
            options.push(("update-item", item.to_owned()));
        }
        Ok(Some(ConnectWidget {
            script: application.script.clone(),
            origins: vec![CONNECT_ORIGIN.to_owned()],
            // The widget styles its modal with a <style> element of its
            // own, which carries no nonce.
            inline_styles: true,
            label: "Connect your bank with Pluggy Connect",
            options,
        }))
    }
}

#[cfg(test)]
mod tests {
    // Test code: a failed unwrap is a failed test, with its message.
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn configured(pairs: &[(&str, &str)]) -> Result<Option<ServerApplication>, SettingError> {
        let lookup = |name: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        };
        configure(&Environment::new(&lookup))
    }

    #[test]
    fn the_servers_application_is_both_halves_of_its_pair_or_none() {
        assert!(configured(&[]).unwrap().is_none());
        let pair = [
            ("TRIBUTARY_PLUGGY_CLIENT_ID", "id"),
            ("TRIBUTARY_PLUGGY_CLIENT_SECRET", "s3cret"),
        ];
        let application = configured(&pair).unwrap().unwrap();
        assert_eq!(application.script, CONNECT_SCRIPT);
        assert!(!application.include_sandbox);
        assert!(!format!("{application:?}").contains("s3cret"));
        let half = configured(&pair[..1]).unwrap_err();
        assert_eq!(half.name, "TRIBUTARY_PLUGGY_CLIENT_ID");
        for (name, value) in [
            ("TRIBUTARY_PLUGGY_CONNECT_SCRIPT", "http://cdn.example/p.js"),
            ("TRIBUTARY_PLUGGY_INCLUDE_SANDBOX", "yes"),
        ] {
            let mut pairs = vec![(name, value)];
            pairs.extend(pair);
            assert_eq!(configured(&pairs).unwrap_err().name, name, "{value}");
        }
    }

    #[test]
    fn a_person_is_named_to_pluggy_by_nothing_of_theirs() {
        assert_eq!(client_user_id(UserId::new(42)), "tributary-user-42");
    }
}
