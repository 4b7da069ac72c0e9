//! `tributary`: the admin command line. Migrations, users, API keys,
//! connections and syncs, against the database in TRIBUTARY_DATABASE_URL.
//!
//! A library with a one-line binary (`src/main.rs`), so that the end-to-end
//! tests, which also run the web servers, can build the same command line
//! as a binary of their own while this package links no web stack.

mod apps;
mod commands;
mod developers;
mod simplefin;
mod terminal;
mod webhooks;

use clap::{Args, Parser, Subcommand};
use std::process::ExitCode;
use tributary_app::config::DEFAULT_DATABASE_URL;
use tributary_domain::ids::{AccountId, ApiKeyId, ConnectionId, SimpleFinDestinationId};

#[derive(Debug, Parser)]
#[command(
    name = "tributary",
    version,
    about = "Administer a Tributary database: migrations, users, API keys, connections and syncs."
)]
struct Cli {
    /// sqlite://PATH or postgres://USER@HOST/DB
    #[arg(long, global = true, env = "TRIBUTARY_DATABASE_URL", default_value = DEFAULT_DATABASE_URL, hide_env_values = true)]
    database_url: String,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Apply pending database migrations.
    Migrate,
    /// Manage users.
    #[command(subcommand)]
    Users(UsersCommand),
    /// Manage API keys of the Personal interface.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Connect a user to a provider.
    #[command(subcommand)]
    Connect(ConnectCommand),
    /// List connections with their status.
    #[command(subcommand)]
    Connections(ConnectionsCommand),
    /// Sync connections now.
    Sync(SyncArgs),
    /// Import statement files (camt.052/053/054, MT940/MT942, OFX/QFX, CSV)
    /// into a user's accounts.
    Import {
        /// The files to import.
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
        #[arg(long)]
        user: String,
        /// The files' format, when it cannot be told from their content
        /// (camt, mt940, ofx, csv).
        #[arg(long)]
        format: Option<String>,
        /// A CSV profile (a JSON file; see docs/imports.md) for CSV files
        /// whose layout Tributary does not recognise.
        #[arg(long, value_name = "FILE")]
        profile: Option<std::path::PathBuf>,
        /// Import statements that name no account (a CSV export without an
        /// account column) into this one of the user's imported accounts.
        /// Without --account or --new-account, each goes to an account of
        /// its own for its currency and layout. Files that name their
        /// account (an IBAN, an account column) always go to it.
        #[arg(long, value_name = "ID", conflicts_with = "new_account")]
        account: Option<AccountId>,
        /// Import statements that name no account into a new account of
        /// this name (with --currency), made by the first file that has
        /// some; later files go into it too.
        #[arg(long, value_name = "NAME", requires = "currency")]
        new_account: Option<String>,
        /// The new account's currency, a three-letter code (EUR, USD…):
        /// rows whose currency the file does not state take it, and a file
        /// stating another is refused.
        #[arg(long, value_name = "CODE", requires = "new_account")]
        currency: Option<String>,
    },
    /// Manage SimpleFIN destinations: apps that read a user's data over
    /// SimpleFIN (docs/simplefin.md).
    #[command(subcommand)]
    Simplefin(SimplefinCommand),
    /// Manage webhook endpoints: URLs that receive signed events
    /// (docs/changes.md#webhooks).
    #[command(subcommand)]
    Webhooks(WebhooksCommand),
    /// Manage Platform apps (integrators' OAuth clients).
    #[command(subcommand)]
    Apps(AppsCommand),
    /// Manage who may sign in to the developer dashboard (/developers on
    /// platform-api) while TRIBUTARY_DEVELOPER_SIGNUP is closed.
    #[command(subcommand)]
    Developers(DevelopersCommand),
    /// List the banks GoCardless Bank Account Data reaches in a country.
    Institutions {
        /// Two-letter country code, e.g. DE.
        #[arg(long)]
        country: String,
    },
    /// Run a sync worker: schedule due connections and run queued syncs
    /// until SIGINT or SIGTERM. Any number may run against PostgreSQL.
    Worker,
    /// Manage the key that seals provider credentials.
    #[command(subcommand)]
    Secrets(SecretsCommand),
}

#[derive(Debug, Subcommand)]
enum AppsCommand {
    /// Create an app; prints its client id and (unless public) its secret,
    /// once.
    Create {
        /// A name to recognise the app by (no control or bidirectional
        /// formatting characters).
        #[arg(long)]
        name: String,
        /// A redirect URI the authorization flow may return to (repeat for
        /// several); https, or http on localhost.
        #[arg(long = "redirect-uri", value_name = "URI", required = true)]
        redirect_uris: Vec<String>,
        /// A public client (a self-hosted or native app): no secret; must
        /// use PKCE.
        #[arg(long)]
        public: bool,
        /// Who pays for users' connections.
        #[arg(long, value_parser = ["integrator", "user"], default_value = "integrator")]
        billing: String,
        /// Accounts each user may connect when the integrator pays (a user's
        /// own `limits.max_accounts` wins).
        #[arg(long)]
        max_accounts: Option<i32>,
    },
    /// List apps.
    List,
    /// Replace an app's client secret (the old one stops working); prints
    /// the new one once.
    RotateSecret { client_id: String },
    /// Add or remove redirect URIs.
    #[command(subcommand, name = "redirect-uris")]
    RedirectUris(RedirectUrisCommand),
}

/// Whose webhook endpoints: a Personal user's, or a Platform app's.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
struct WebhookOwnerArgs {
    /// A Personal user, by e-mail address.
    #[arg(long)]
    user: Option<String>,
    /// A Platform app, by client id (it hears about all its users).
    #[arg(long)]
    app: Option<String>,
}

#[derive(Debug, Subcommand)]
enum WebhooksCommand {
    /// Register an endpoint; prints its signing secret, once.
    Create {
        #[command(flatten)]
        owner: WebhookOwnerArgs,
        /// Where events are posted (https; private addresses only with
        /// TRIBUTARY_OUTBOUND_ALLOW_PRIVATE).
        #[arg(long)]
        url: String,
        /// An event type to send (repeat for several; every type when none).
        #[arg(long = "event", value_name = "TYPE")]
        events: Vec<String>,
    },
    /// List the owner's endpoints.
    List {
        #[command(flatten)]
        owner: WebhookOwnerArgs,
    },
    /// Delete one of the owner's endpoints.
    Delete {
        #[command(flatten)]
        owner: WebhookOwnerArgs,
        id: i64,
    },
}

#[derive(Debug, Subcommand)]
enum DevelopersCommand {
    /// Let EMAIL sign in to the developer dashboard (an e-mailed code
    /// goes only to added addresses while sign-up is closed).
    Add {
        /// The developer's e-mail address.
        email: String,
    },
    /// List developers and how many apps each owns.
    List,
}

#[derive(Debug, Subcommand)]
enum RedirectUrisCommand {
    Add { client_id: String, uri: String },
    Remove { client_id: String, uri: String },
}

#[derive(Debug, Subcommand)]
enum SecretsCommand {
    /// Print a new random key for TRIBUTARY_SECRET_KEY.
    GenerateKey,
    /// Re-seal every stored credential with the current key (after setting
    /// the old one in TRIBUTARY_SECRET_KEY_PREVIOUS); see docs/operations.md.
    Rotate,
}

#[derive(Debug, Subcommand)]
enum UsersCommand {
    /// Create a Personal user.
    Create {
        /// The user's e-mail address.
        email: String,
    },
    /// List all users.
    List,
    /// Print a one-time sign-in link to the Personal dashboard (it works
    /// once, for 15 minutes).
    LoginLink {
        /// The user's e-mail address.
        email: String,
        /// How the person reaches personal-api (TRIBUTARY_PUBLIC_URL; else
        /// the default bind address).
        #[arg(
            long,
            env = "TRIBUTARY_PUBLIC_URL",
            default_value = "http://127.0.0.1:8080"
        )]
        url: String,
    },
}

#[derive(Debug, Subcommand)]
enum KeysCommand {
    /// Create an API key; it is printed once and never stored in plain text.
    Create {
        /// E-mail of the key's owner.
        #[arg(long)]
        user: String,
        /// A name to recognise the key by.
        #[arg(long, default_value = "default")]
        name: String,
        /// Restrict the key to this account id (repeat for several).
        #[arg(long = "account", value_name = "ID")]
        accounts: Vec<AccountId>,
    },
    /// List a user's API keys (never the keys themselves).
    List {
        #[arg(long)]
        user: String,
    },
    /// Revoke an API key by its id.
    Revoke {
        /// The id shown by `keys list`.
        id: ApiKeyId,
    },
}

#[derive(Debug, Subcommand)]
enum SimplefinCommand {
    /// Create a destination; prints its setup token once (claim it within
    /// an hour, in the app that will read the data).
    Create {
        /// E-mail of the user whose data the app will read.
        #[arg(long)]
        user: String,
        /// A name to recognise the app by.
        #[arg(long, default_value = "SimpleFIN app")]
        name: String,
        /// Let the app read only this account id (repeat for several).
        #[arg(long = "account", value_name = "ID")]
        accounts: Vec<AccountId>,
        /// How the app reaches personal-api: the setup token carries this
        /// address (TRIBUTARY_PUBLIC_URL; else the default bind address).
        #[arg(
            long,
            env = "TRIBUTARY_PUBLIC_URL",
            default_value = "http://127.0.0.1:8080"
        )]
        url: String,
    },
    /// List a user's destinations (never their credentials).
    List {
        #[arg(long)]
        user: String,
    },
    /// Revoke a destination: its app's next request answers 403.
    Revoke {
        /// The id shown by `simplefin list`.
        id: SimpleFinDestinationId,
    },
}

#[derive(Debug, Subcommand)]
enum ConnectCommand {
    /// Connect the deterministic sandbox bank and sync it (see docs/sandbox.md).
    Sandbox {
        #[arg(long)]
        user: String,
        /// Sandbox username; special ones trigger failures (docs/sandbox.md).
        #[arg(long, default_value = tributary_providers::sandbox::USER_GOOD)]
        username: String,
    },
    /// Connect SimpleFIN with a setup token (claimed once; the access URL it
    /// yields is stored sealed) and sync it.
    Simplefin {
        #[arg(long)]
        user: String,
        /// The setup token from SimpleFIN ("-" reads it from standard input,
        /// keeping it out of the shell history).
        #[arg(long, value_name = "TOKEN")]
        setup_token: String,
    },
    /// Connect a bank through GoCardless Bank Account Data: prints the bank
    /// link the user must open; once they have, run `tributary sync
    /// --connection ID` (needs TRIBUTARY_GOCARDLESS_SECRET_ID and _KEY).
    Gocardless {
        #[arg(long)]
        user: String,
        /// GoCardless institution id, e.g. SANDBOXFINANCE_SFIN0000.
        #[arg(long)]
        institution: String,
        /// Where the bank sends the user back after they authorise.
        #[arg(long, default_value = "https://gocardless.com")]
        redirect: String,
    },
    /// Connect a bank through Enable Banking: prints the bank's page the
    /// user must open; the bank sends them back to --redirect with a code,
    /// which `tributary connect finish` takes (needs
    /// TRIBUTARY_ENABLEBANKING_APP_ID and _KEY_FILE).
    Enablebanking {
        #[arg(long)]
        user: String,
        /// The bank: its country and its name as Enable Banking lists it,
        /// e.g. FI/Nordea.
        #[arg(long)]
        bank: String,
        /// Where the bank sends the user back: one of the application's
        /// redirect URLs at Enable Banking.
        #[arg(long)]
        redirect: String,
    },
    /// Connect a bank or brokerage through Plaid's Hosted Link: prints
    /// Plaid's page the user must open; once Plaid sends them to
    /// --redirect, `tributary connect finish` completes it (needs
    /// TRIBUTARY_PLAID_CLIENT_ID and _SECRET).
    Plaid {
        #[arg(long)]
        user: String,
        /// Where Plaid sends the user back when they are done.
        #[arg(long)]
        redirect: String,
    },
    /// Connect brokerages through SnapTrade's Connection Portal: prints the
    /// portal's address the user must open; once SnapTrade sends them to
    /// --redirect, `tributary connect finish` completes it (needs
    /// TRIBUTARY_SNAPTRADE_CLIENT_ID and _CONSUMER_KEY).
    Snaptrade {
        #[arg(long)]
        user: String,
        /// Where SnapTrade sends the user back when they are done.
        #[arg(long)]
        redirect: String,
    },
    /// Connect New Zealand banks through Akahu: with a personal app's tokens
    /// (--app-token and --user-token, then it syncs), or, when the server
    /// has an Akahu app (TRIBUTARY_AKAHU_APP_TOKEN and _SECRET), through
    /// Akahu's sign-in page (--redirect; then `tributary connect finish`).
    Akahu {
        #[arg(long)]
        user: String,
        /// The personal app's token (app_token_…).
        #[arg(long, requires = "user_token", conflicts_with = "redirect")]
        app_token: Option<String>,
        /// The user token ("-" reads it from standard input, keeping it out
        /// of the shell history).
        #[arg(long, value_name = "TOKEN", requires = "app_token")]
        user_token: Option<String>,
        /// Where Akahu sends the user back after they sign in.
        #[arg(long, required_unless_present = "app_token")]
        redirect: Option<String>,
    },
    /// Finish a connection whose user came back from their bank: give the
    /// whole address the bank sent them to (with its code and state); then
    /// the first sync runs.
    Finish {
        #[arg(long)]
        connection: ConnectionId,
        /// The return address, e.g. https://your.site/return?code=…&state=…
        /// ("-" reads it from standard input, keeping the code out of the
        /// shell history).
        #[arg(long, value_name = "URL")]
        return_url: String,
    },
}

#[derive(Debug, Subcommand)]
enum ConnectionsCommand {
    /// List connections, of one user or of all.
    List {
        #[arg(long)]
        user: Option<String>,
    },
    /// Stop syncing a connection and keep its data (`connect` again, or
    /// the portal's "Sign in to the bank again", resumes it).
    Disconnect { id: ConnectionId },
}

#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
struct SyncArgs {
    /// Sync every connection of this user.
    #[arg(long)]
    user: Option<String>,
    /// Sync one connection.
    #[arg(long)]
    connection: Option<ConnectionId>,
    /// Sync every connection of every user.
    #[arg(long)]
    all: bool,
}

/// The whole command line: parse, run, and the exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // An error may quote what a user typed or a bank sent.
            let said = format!("{err:#}");
            let lines: Vec<_> = said.lines().map(terminal::shown).collect();
            eprintln!("tributary: {}", lines.join("\n"));
            ExitCode::FAILURE
        }
    }
}
