//! `tributary webhooks`: webhook endpoints of a Personal user or a Platform
//! app, as the API manages them (docs/changes.md#webhooks).

use crate::cli::{WebhookOwnerArgs, WebhooksCommand};
use crate::terminal::shown;
use anyhow::{Context as _, bail};
use tributary_app::Config;
use tributary_domain::clock::Clock;
use tributary_domain::ids::WebhookEndpointId;
use tributary_domain::model::WebhookEventType;
use tributary_notify::deliver::seal_secret;
use tributary_notify::destination;
use tributary_notify::signing::SigningSecret;
use tributary_storage::webhooks::{self, EndpointOwner, NewEndpoint};
use tributary_storage::{AnyConnection, Database, apps};

fn owner(conn: &mut AnyConnection, args: &WebhookOwnerArgs) -> anyhow::Result<EndpointOwner> {
    match (&args.user, &args.app) {
        (Some(email), None) => {
            let email = tributary_domain::email::normalize_email(email)?;
            let user = tributary_storage::users::find_personal_user(conn, &email)?
                .with_context(|| format!("no Personal user {email}"))?;
            Ok(EndpointOwner::User(user.id))
        }
        (None, Some(client_id)) => {
            let app = apps::find_by_client_id(conn, client_id)?
                .with_context(|| format!("no app with client id {client_id}"))?;
            Ok(EndpointOwner::App(app.id))
        }
        _ => bail!("give --user EMAIL or --app CLIENT_ID"),
    }
}

pub fn run(
    db: &Database,
    config: &Config,
    clock: &dyn Clock,
    command: WebhooksCommand,
) -> anyhow::Result<()> {
    let conn = &mut *db.conn()?;
    match command {
        WebhooksCommand::Create {
            owner: args,
            url,
            events,
        } => {
            let owner = owner(conn, &args)?;
            let parsed = destination::check_blocking(&config.outbound_guard(), &url)
                .map_err(|refusal| anyhow::anyhow!("--url: {refusal}"))?;
            let types: Vec<WebhookEventType> = if events.is_empty() {
                WebhookEventType::ALL.to_vec()
            } else {
                events.iter().map(|e| e.parse()).collect::<Result<_, _>>()?
            };
            let secret = SigningSecret::generate();
            let keyring = config.keyring()?;
            let endpoint = webhooks::create_endpoint(
                conn,
                &NewEndpoint {
                    owner,
                    url: parsed.as_str(),
                    event_types: &types,
                    secret_sealed: &seal_secret(&keyring, owner, &secret),
                    now: clock.now().naive_utc(),
                },
            )?;
            println!(
                "Created webhook endpoint {} for {}.",
                endpoint.id, endpoint.url
            );
            println!(
                "secret: {}\n(shown only now; verify each delivery's webhook-signature with it)",
                secret.to_text()
            );
        }
        WebhooksCommand::List { owner: args } => {
            let owner = owner(conn, &args)?;
            println!("{:>5}  {:<8}  {:<50}  EVENTS", "ID", "ENABLED", "URL");
            for endpoint in webhooks::list_endpoints(conn, owner)? {
                let events: Vec<&str> = endpoint.event_types.iter().map(|t| t.as_str()).collect();
                println!(
                    "{:>5}  {:<8}  {:<50}  {}",
                    endpoint.id,
                    if endpoint.enabled { "yes" } else { "no" },
                    shown(&endpoint.url),
                    events.join(" ")
                );
            }
        }
        WebhooksCommand::Delete { owner: args, id } => {
            let owner = owner(conn, &args)?;
            if !webhooks::delete_endpoint(conn, owner, WebhookEndpointId::new(id))? {
                bail!("no webhook endpoint {id} of that owner");
            }
            println!("Deleted webhook endpoint {id}.");
        }
    }
    Ok(())
}
