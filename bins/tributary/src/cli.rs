//! The command line's shape: every command, subcommand and flag (clap's
//! derive); `connect`'s subcommands come from the connectors' descriptions
//! (`crate::connect`).

use crate::connect::ConnectCommand;
use clap::{Args, Parser, Subcommand};
use tributary_app::config::DEFAULT_DATABASE_URL;
use tributary_domain::ids::{AccountId, ApiKeyId, ConnectionId, RuleId, SimpleFinDestinationId};

#[derive(Debug, Parser)]
#[command(
    name = "tributary",
    version,
    about = "Administer a Tributary database: migrations, users, API keys, connections and syncs."
)]
pub(crate) struct Cli {
    /// sqlite://PATH or postgres://USER@HOST/DB
    #[arg(long, global = true, env = "TRIBUTARY_DATABASE_URL", default_value = DEFAULT_DATABASE_URL, hide_env_values = true)]
    pub(crate) database_url: String,

    /// Create the SQLite database file when there is none (`migrate` always
    /// does); without it, a command refuses a missing file rather than
    /// making an empty database the server does not use.
    #[arg(long, global = true)]
    pub(crate) create: bool,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
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
        /// E-mail of the Personal user whose accounts the files go into.
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
    /// Manage a user's rules for merchants and categories
    /// (docs/enrichment.md, "Rules").
    #[command(subcommand)]
    Rules(RulesCommand),
    /// Manage Platform apps (integrators' OAuth clients).
    #[command(subcommand)]
    Apps(AppsCommand),
    /// Manage who may sign in to the developer dashboard (/developers on
    /// platform-api) while TRIBUTARY_DEVELOPER_SIGNUP is closed.
    #[command(subcommand)]
    Developers(DevelopersCommand),
    /// List the banks of a country that each configured provider which
    /// reaches many banks (GoCardless, Enable Banking) offers, with the id
    /// `tributary connect` takes.
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
pub(crate) enum AppsCommand {
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
pub(crate) struct WebhookOwnerArgs {
    /// A Personal user, by e-mail address.
    #[arg(long)]
    pub(crate) user: Option<String>,
    /// A Platform app, by client id (it hears about all its users).
    #[arg(long)]
    pub(crate) app: Option<String>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum WebhooksCommand {
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
pub(crate) enum RulesCommand {
    /// Add a rule: transactions matching every --match-… option show what
    /// the --set-… options say. Stored transactions follow as the workers
    /// reach them (`rules list` shows how far they are).
    Add {
        /// E-mail of the rule's owner.
        #[arg(long)]
        user: String,
        /// Words of the bank's text, whole and in order, in any case.
        #[arg(long, value_name = "WORDS")]
        match_text: Option<String>,
        /// The clean merchant, the whole name, in any case.
        #[arg(long, value_name = "NAME")]
        match_merchant: Option<String>,
        /// The signed amount (negative: money out) is at least this.
        #[arg(long, value_name = "AMOUNT", allow_hyphen_values = true)]
        amount_min: Option<String>,
        /// The signed amount is at most this.
        #[arg(long, value_name = "AMOUNT", allow_hyphen_values = true)]
        amount_max: Option<String>,
        /// Only transactions of this account.
        #[arg(long, value_name = "ID")]
        account: Option<AccountId>,
        /// The merchant the transactions show.
        #[arg(long, value_name = "NAME")]
        set_merchant: Option<String>,
        /// A subcategory id (docs/enrichment.md, "Categories"), such as
        /// groceries.supermarkets.
        #[arg(long, value_name = "ID")]
        set_subcategory: Option<String>,
    },
    /// List a user's rules, oldest first (the first that sets a field
    /// decides it), and how far applying the latest change is.
    List {
        #[arg(long)]
        user: String,
    },
    /// Delete one of a user's rules.
    Delete {
        #[arg(long)]
        user: String,
        /// The id shown by `rules list`.
        id: RuleId,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum DevelopersCommand {
    /// Let EMAIL sign in to the developer dashboard (an e-mailed code
    /// goes only to added addresses while sign-up is closed).
    Add {
        /// The developer's e-mail address.
        email: String,
    },
    /// List developers and how many apps each owns.
    List,
    /// Stop EMAIL from signing in to the developer dashboard (their
    /// sessions end). Refused while they own apps: delete those first.
    Remove {
        /// The developer's e-mail address.
        email: String,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum RedirectUrisCommand {
    Add { client_id: String, uri: String },
    Remove { client_id: String, uri: String },
}

#[derive(Debug, Subcommand)]
pub(crate) enum SecretsCommand {
    /// Print a new random key for TRIBUTARY_SECRET_KEY.
    GenerateKey,
    /// Re-seal every stored credential with the current key (after setting
    /// the old one in TRIBUTARY_SECRET_KEY_PREVIOUS); see docs/operations.md.
    Rotate,
}

#[derive(Debug, Subcommand)]
pub(crate) enum UsersCommand {
    /// Create a Personal user.
    Create {
        /// The user's e-mail address.
        email: String,
    },
    /// List all users.
    List,
    /// Delete a Personal user and everything of theirs: connections,
    /// accounts, transactions, keys, SimpleFIN destinations, rules.
    Delete {
        /// The user's e-mail address.
        email: String,
        /// Delete without asking (the command refuses without it).
        #[arg(long)]
        yes: bool,
    },
    /// Print a one-time sign-in link to the Personal dashboard (it works
    /// once, for 15 minutes).
    LoginLink {
        /// The user's e-mail address.
        email: String,
        /// How the person reaches personal-api [default: TRIBUTARY_PUBLIC_URL,
        /// else http:// and TRIBUTARY_BIND]
        #[arg(long)]
        url: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum KeysCommand {
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
pub(crate) enum SimplefinCommand {
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
        /// address [default: TRIBUTARY_PUBLIC_URL, else http:// and
        /// TRIBUTARY_BIND]
        #[arg(long)]
        url: Option<String>,
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
pub(crate) enum ConnectionsCommand {
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
pub(crate) struct SyncArgs {
    /// Sync every connection of this user.
    #[arg(long)]
    pub(crate) user: Option<String>,
    /// Sync one connection.
    #[arg(long)]
    pub(crate) connection: Option<ConnectionId>,
    /// Sync every connection of every user.
    #[arg(long)]
    pub(crate) all: bool,
}
