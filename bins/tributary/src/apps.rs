//! `tributary apps`: Platform apps and their redirect URIs.

use crate::cli::{AppsCommand, RedirectUrisCommand};
use crate::terminal::shown;
use anyhow::{Context as _, bail};
use tributary_auth::oauth::{new_client_id, new_client_secret, validate_redirect_uri};
use tributary_domain::clock::Clock;
use tributary_domain::model::BillingModel;
use tributary_storage::apps::{self, AppRecord, NewApp};
use tributary_storage::{Database, StorageError};

pub fn run(db: &Database, clock: &dyn Clock, command: AppsCommand) -> anyhow::Result<()> {
    let conn = &mut *db.conn()?;
    let now = clock.now().naive_utc();
    let find = |conn: &mut _, client_id: &str| -> anyhow::Result<AppRecord> {
        apps::find_by_client_id(conn, client_id)?
            .with_context(|| format!("no app with client id {client_id}"))
    };
    match command {
        AppsCommand::Create {
            name,
            redirect_uris,
            public,
            billing,
            max_accounts,
        } => {
            let name = crate::terminal::name(&name)?;
            for uri in &redirect_uris {
                validate_redirect_uri(uri).map_err(anyhow::Error::msg)?;
            }
            if max_accounts.is_some_and(|n| n < 0) {
                bail!("--max-accounts must be 0 or more");
            }
            let billing: BillingModel = billing.parse()?;
            let client_id = new_client_id();
            let secret = (!public).then(new_client_secret);
            let app = apps::create_app(
                conn,
                &NewApp {
                    client_id: &client_id,
                    name: &name,
                    client_secret_hash: secret.as_ref().map(|(_, hash)| hash.as_str()),
                    billing_model: billing,
                    default_max_accounts: max_accounts,
                    redirect_uris: &redirect_uris,
                    now,
                },
            )?;
            println!(
                "Created app \"{}\" ({}, users paid by the {}).",
                shown(&app.name),
                if app.is_public {
                    "public"
                } else {
                    "confidential"
                },
                app.billing_model
            );
            println!("client_id:     {}", app.client_id);
            match secret {
                Some((secret, _)) => println!(
                    "client_secret: {secret}\n(shown only now; Tributary keeps only its hash)"
                ),
                None => println!("(public: no secret; the authorization flow must use PKCE S256)"),
            }
        }
        AppsCommand::List => {
            println!(
                "{:<28}  {:<24}  {:<12}  {:<10}  {:>5}  REDIRECT URIS",
                "CLIENT ID", "NAME", "TYPE", "BILLING", "MAX"
            );
            for app in apps::list_apps(conn)? {
                let uris = shown(&apps::redirect_uris(conn, app.id)?.join(" ")).into_owned();
                let max = app
                    .default_max_accounts
                    .map_or_else(|| "-".to_owned(), |n| n.to_string());
                let kind = if app.is_public {
                    "public"
                } else {
                    "confidential"
                };
                println!(
                    "{:<28}  {:<24}  {:<12}  {:<10}  {:>5}  {uris}",
                    app.client_id,
                    shown(&app.name),
                    kind,
                    app.billing_model,
                    max
                );
            }
        }
        AppsCommand::RotateSecret { client_id } => {
            let app = find(conn, &client_id)?;
            if app.is_public {
                bail!("{client_id} is a public app: it has no secret");
            }
            let (secret, hash) = new_client_secret();
            apps::set_secret_hash(conn, app.id, &hash)?;
            // The same lines as `apps create`, so scripts read both alike.
            println!("Rotated the secret of {client_id}; the old one no longer works.");
            println!("client_id:     {client_id}");
            println!("client_secret: {secret}\n(shown only now; Tributary keeps only its hash)");
        }
        AppsCommand::RedirectUris(RedirectUrisCommand::Add { client_id, uri }) => {
            validate_redirect_uri(&uri).map_err(anyhow::Error::msg)?;
            let app = find(conn, &client_id)?;
            match apps::add_redirect_uri(conn, app.id, &uri, now) {
                Ok(()) => println!("Added {} to {client_id}.", shown(&uri)),
                Err(StorageError::Conflict(_)) => {
                    println!("{} was already registered for {client_id}.", shown(&uri))
                }
                Err(err) => return Err(err.into()),
            }
        }
        AppsCommand::RedirectUris(RedirectUrisCommand::Remove { client_id, uri }) => {
            let app = find(conn, &client_id)?;
            if !apps::remove_redirect_uri(conn, app.id, &uri)? {
                bail!("{uri} is not registered for {client_id}");
            }
            println!("Removed {} from {client_id}.", shown(&uri));
        }
    }
    Ok(())
}
