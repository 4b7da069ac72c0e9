//! `tributary connect`: one subcommand per connector, made from its
//! description (its fields are the flags), and `finish` for connections
//! whose user comes back from their bank.

use crate::support::{find_user, read_secret_argument, report};
use crate::terminal::shown;
use anyhow::{Context as _, bail};
use clap::{ArgMatches, Args, FromArgMatches};
use std::sync::Arc;
use tributary_domain::ids::ConnectionId;
use tributary_domain::model::SyncJobKind;
use tributary_providers::catalog::CATALOG;
use tributary_providers::description::{Answers, Description, Field, ReturnAddress};
use tributary_providers::sync::{SyncEngine, SyncError};
use tributary_providers::worker::worker_id;
use tributary_providers::{Connector, Registry};
use tributary_storage::Database;

/// `tributary connect <provider> …` or `tributary connect finish …`.
#[derive(Debug)]
pub(crate) enum ConnectCommand {
    /// Connect `user` through the described connector.
    Provider {
        connector: &'static Description,
        user: String,
        /// `--redirect`, where the connector takes one.
        redirect: Option<String>,
        /// Each field's flag as given.
        values: Vec<(&'static Field, String)>,
    },
    Finish(FinishArgs),
}

/// Finish a connection whose user came back from their bank: give the
/// whole address the bank sent them to (with its code and state); then the
/// first sync runs.
#[derive(Debug, Args)]
pub(crate) struct FinishArgs {
    #[arg(long)]
    pub connection: ConnectionId,
    /// The return address, e.g. https://your.site/return?code=…&state=…
    /// ("-" reads it from standard input, keeping the code out of the
    /// shell history).
    #[arg(long, value_name = "URL")]
    pub return_url: String,
}

const FINISH: &str = "finish";

/// A connector's subcommand: `--user`, its fields' flags, and `--redirect`
/// where it takes one.
fn subcommand(connector: &'static Description) -> clap::Command {
    let connect = &connector.connect;
    let mut command = clap::Command::new(connector.provider.as_str())
        .about(connect.command_help)
        .arg(
            clap::Arg::new("user")
                .long("user")
                .value_name("USER")
                .required(true)
                .help("The user's e-mail address."),
        );
    for field in connect.fields {
        let Some(flag) = field.flag else { continue };
        let mut arg = clap::Arg::new(field.name)
            .long(flag)
            .help(field.help)
            .value_name(if field.input.is_secret() {
                "TOKEN".to_owned()
            } else {
                flag.to_uppercase().replace('-', "_")
            });
        arg = match field.default {
            Some(default) => arg.default_value(default),
            None => arg.required(field.required),
        };
        command = command.arg(arg);
    }
    let redirect = clap::Arg::new("redirect")
        .long("redirect")
        .value_name("URL");
    match connect.return_address {
        ReturnAddress::Never => command,
        ReturnAddress::Always { default } => command.arg(
            match default {
                Some(default) => redirect.default_value(default),
                None => redirect.required(true),
            }
            .help("Where the bank or provider sends the user back when they are done."),
        ),
        ReturnAddress::Sometimes => command.arg(redirect.help(
            "Where the provider sends the user back, for the way of connecting that needs it.",
        )),
    }
}

impl FromArgMatches for ConnectCommand {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let Some((name, matches)) = matches.subcommand() else {
            return Err(clap::Error::new(clap::error::ErrorKind::MissingSubcommand));
        };
        if name == FINISH {
            return FinishArgs::from_arg_matches(matches).map(ConnectCommand::Finish);
        }
        let connector = CATALOG
            .iter()
            .copied()
            .find(|c| c.provider.as_str() == name)
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidSubcommand))?;
        let text = |id: &str| matches.try_get_one::<String>(id).ok().flatten().cloned();
        let values = connector
            .connect
            .fields
            .iter()
            .filter(|field| field.flag.is_some())
            .filter_map(|field| text(field.name).map(|value| (field, value)))
            .collect();
        Ok(ConnectCommand::Provider {
            connector,
            user: text("user").unwrap_or_default(),
            redirect: text("redirect"),
            values,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Subcommand for ConnectCommand {
    fn augment_subcommands(command: clap::Command) -> clap::Command {
        let command = CATALOG.iter().fold(command, |command, connector| {
            command.subcommand(subcommand(connector))
        });
        command.subcommand(FinishArgs::augment_args(clap::Command::new(FINISH).about(
            "Finish a connection whose user came back from their bank: give the whole address the bank sent them to (with its code and state); then the first sync runs.",
        )))
    }

    fn augment_subcommands_for_update(command: clap::Command) -> clap::Command {
        Self::augment_subcommands(command)
    }

    fn has_subcommand(name: &str) -> bool {
        name == FINISH || CATALOG.iter().any(|c| c.provider.as_str() == name)
    }
}

/// Connects `email`'s user through `connector` with what the flags gave:
/// then either the first sync runs, or (a provider whose user consents at
/// their bank or on its pages) the link they must open is printed.
pub(crate) fn connect(
    db: &Database,
    engine: &SyncEngine,
    email: &str,
    connector: &'static Description,
    redirect: Option<&str>,
    values: &[(&'static Field, String)],
) -> anyhow::Result<()> {
    let user = find_user(db, email)?;
    let provider = connector.provider;
    // Secrets given as `-` are read from standard input.
    let mut given = Vec::with_capacity(values.len());
    for (field, value) in values {
        let value = if field.input.is_secret() {
            read_secret_argument(value)?
        } else {
            value.clone()
        };
        given.push((field.name, value));
    }
    let answers = given.iter().fold(
        Answers::new(user.id, &user.email, redirect),
        |answers, (name, value)| answers.with(name, value),
    );
    let request = match (connector.connect.request)(&answers) {
        Ok(request) => request,
        Err(missing) => bail!("{missing}"),
    };
    let connection = match engine.connect(user.id, provider, &request) {
        Ok(connection) => connection,
        Err(SyncError::NoConnector(_)) => bail!(
            "{provider} is not configured: set {}",
            connector
                .environment
                .first()
                .map_or("its settings", |v| v.names)
                .replace(", ", " and ")
        ),
        Err(SyncError::Connect(err)) => bail!("{provider} refused the connection: {err}"),
        Err(err) => return Err(err.into()),
    };
    if let Some(link) = connection.settings.get("link").and_then(|l| l.as_str()) {
        println!(
            "Created connection {} to {} for {}.",
            connection.id,
            shown(&connection.institution_name),
            shown(&user.email)
        );
        println!("The user must open this link and authorise their bank:\n{link}");
        if connector.connect.finish_on_return {
            println!(
                "They are then sent to the return address; run: tributary connect finish --connection {} --return-url '<that address>'",
                connection.id
            );
        } else {
            println!("Then run: tributary sync --connection {}", connection.id);
        }
        return Ok(());
    }
    println!(
        "Connected {} to {} (connection {}).",
        shown(&user.email),
        shown(&connection.institution_name),
        connection.id
    );
    // A second connection to the same bank is allowed (two logins at one
    // bank) but is more often a command run twice: say so.
    let twins: Vec<String> =
        tributary_storage::connections::list_connections(&mut *db.conn()?, Some(user.id))?
            .into_iter()
            .filter(|c| {
                c.id != connection.id
                    && c.provider == provider
                    && c.institution_name == connection.institution_name
            })
            .map(|c| c.id.to_string())
            .collect();
    if !twins.is_empty() {
        println!(
            "Note: {} already has a connection to {} (connection {}); this one is separate and syncs the same accounts again.",
            shown(&user.email),
            shown(&connection.institution_name),
            twins.join(", ")
        );
    }
    report(
        connection.id,
        engine.sync_now(connection.id, SyncJobKind::Initial, &worker_id("cli")),
    )
}

/// Completes a connection with the address the bank returned the user to,
/// then runs its first sync.
pub(crate) fn finish(engine: &SyncEngine, args: &FinishArgs) -> anyhow::Result<()> {
    let connection = args.connection;
    let return_url = read_secret_argument(&args.return_url)?;
    let record = tributary_storage::connections::get_connection(
        &mut *engine.database().conn()?,
        connection,
    )?;
    // A connection that waits for the user's return still has the link
    // it sent them to.
    if record.settings.get("link").is_none() {
        bail!("connection {connection} is waiting for no return from a bank");
    }
    let url = url::Url::parse(return_url.trim())
        .context("--return-url: give the whole address the bank sent the user to")?;
    let returned = tributary_providers::AuthorizationReturn::new(url.query_pairs().into_owned());
    match engine.complete_authorization(connection, &returned) {
        Ok(_) => {}
        Err(SyncError::Connect(err)) => {
            bail!("the bank's return did not complete the connection: {err}")
        }
        Err(err) => return Err(err.into()),
    }
    println!("Connection {connection} is authorised.");
    report(
        connection,
        engine.sync_now(connection, SyncJobKind::Initial, &worker_id("cli")),
    )
}

/// The banks of `country` each configured connector that reaches many
/// offers, with the id its `connect` flag takes.
pub(crate) fn list_institutions(registry: &Registry, country: &str) -> anyhow::Result<()> {
    let country = country.trim().to_ascii_uppercase();
    let pickers: Vec<(&Description, &Arc<dyn Connector>)> = CATALOG
        .iter()
        .copied()
        .filter(|c| c.connect.picks_institution)
        .filter_map(|c| registry.get(c.provider).map(|connector| (c, connector)))
        .collect();
    if pickers.is_empty() {
        let settings: Vec<&str> = CATALOG
            .iter()
            .filter(|c| c.connect.picks_institution)
            .filter_map(|c| c.environment.first().map(|v| v.names))
            .collect();
        bail!(
            "no provider that lists banks is configured: set {}",
            settings.join(", or ")
        );
    }
    for (connector, serving) in pickers {
        let flag = connector
            .connect
            .fields
            .iter()
            .find(|f| f.name == "institution_id")
            .and_then(|f| f.flag)
            .unwrap_or("institution");
        println!(
            "{} (tributary connect {} --{flag} ID):",
            connector.name, connector.provider
        );
        println!("{:<40}  NAME", "ID");
        for bank in serving.institutions(&country)? {
            println!("{:<40}  {}", shown(&bank.id), shown(&bank.name));
        }
    }
    Ok(())
}
