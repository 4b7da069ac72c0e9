//! Connecting a bank: each provider's credential step (a login, a setup
//! token, a bank found by country and linked on its own page, a statement
//! upload), then the first sync in the background.

use super::banks::{Bank, UPLOAD, engine, find_bank, holdings};
use super::csp::Policy;
use super::header::Header;
use super::page::{PageError, render, render_with, see_other};
use super::session::with_conn;
use super::visitor::{Visitor, connecting};
use crate::imports::{UploadError, read_statements, read_upload};
use crate::state::AppState;
use actix_multipart::Multipart;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use serde::Deserialize;
use std::collections::HashMap;
use tributary_domain::ids::{AccountId, ConnectionId};
use tributary_domain::model::{Provider, SyncJobKind};
use tributary_providers::description::{Answers, ReturnAddress};
use tributary_providers::import::{self, ImportTarget, StoreError, TargetError, TargetField};
use tributary_providers::sync::SyncError;
use tributary_providers::{AuthorizationReturn, ConnectRequest, InstitutionChoice};
use tributary_storage::connections::ConnectionRecord;
use tributary_storage::users::UserRecord;

#[derive(Template)]
#[template(path = "bank_form.html")]
struct BankFormPage<'a> {
    title: &'a str,
    header: Header,
    csrf: &'a str,
    bank: &'a Bank,
    /// Where the form posts: connect, or re-authenticate a connection.
    action: &'a str,
    /// What the form's main field starts with (a username, a bank's id).
    prefill: &'a str,
    error: Option<&'a str>,
    /// For providers that reach many banks: the country and search, and
    /// the banks found.
    picker: Option<Picker>,
    /// For the statement upload: where files naming no account go.
    upload: Option<UploadForm>,
    /// The person's connections through this bank's provider already,
    /// offered to be signed in to again rather than connected twice.
    already: Vec<AlreadyConnected>,
}

/// A connection the bank form offers to sign in to again.
pub(super) struct AlreadyConnected {
    pub id: ConnectionId,
    pub institution: String,
    /// The login it remembers, where the provider has one.
    pub login: Option<String>,
}

impl AlreadyConnected {
    fn of(connection: &ConnectionRecord, bank: &Bank) -> AlreadyConnected {
        AlreadyConnected {
            id: connection.id,
            institution: connection.institution_name.clone(),
            login: remembered_login(bank, connection).map(str::to_owned),
        }
    }
}

/// The login `connection` remembers, for a bank whose form names one.
fn remembered_login<'a>(bank: &Bank, connection: &'a ConnectionRecord) -> Option<&'a str> {
    let setting = bank.connector?.connect.login_field()?.remembered_as?;
    connection.settings.get(setting)?.as_str()
}

/// The person's connections through `bank`'s provider, oldest first.
async fn through_provider(
    state: &web::Data<AppState>,
    visitor: &impl Visitor,
    bank: &Bank,
) -> Result<Vec<ConnectionRecord>, PageError> {
    let Some(provider) = bank.connector.map(|c| c.provider) else {
        return Ok(Vec::new());
    };
    let user = visitor.user().id;
    let mut found = with_conn(state, move |conn| {
        Ok(tributary_storage::connections::list_connections(
            conn,
            Some(user),
        )?)
    })
    .await?;
    found.retain(|c| c.provider == provider);
    found.sort_by_key(|c| c.id);
    Ok(found)
}

/// The upload form's choice of where statements that name no account go,
/// as the person left it (shown again after a refusal).
#[derive(Debug, Clone, Default)]
pub(super) struct UploadChoice {
    /// `file` (the account the file says, else one of its own: the
    /// default), `account` or `new`.
    pub into: String,
    pub account: Option<i64>,
    pub name: String,
    pub currency: String,
}

impl UploadChoice {
    fn from_fields(fields: &std::collections::HashMap<String, String>) -> UploadChoice {
        let field = |name: &str| fields.get(name).map(|v| v.trim().to_owned());
        UploadChoice {
            into: field("into").unwrap_or_default(),
            account: field(crate::imports::ACCOUNT_FIELD).and_then(|id| id.parse().ok()),
            name: field(crate::imports::NEW_NAME_FIELD).unwrap_or_default(),
            currency: field(crate::imports::NEW_CURRENCY_FIELD).unwrap_or_default(),
        }
    }

    /// The import target chosen, or what to say to the person.
    fn target(&self) -> Result<ImportTarget, String> {
        match self.into.as_str() {
            "account" => self
                .account
                .map(|id| ImportTarget::Account(AccountId::new(id)))
                .ok_or_else(|| "Choose one of your imported accounts.".to_owned()),
            "new" => ImportTarget::new_account(&self.name, &self.currency)
                .map_err(|why| target_refusal(&why)),
            // A new account's name typed, and the default left chosen: say
            // so rather than guess.
            _ if !self.name.is_empty() || !self.currency.is_empty() => Err(
                "You filled in a new account but left \u{201c}to an account of its own\u{201d} chosen: choose \u{201c}into a new account\u{201d} to make it, or empty its name and currency."
                    .to_owned(),
            ),
            _ => Ok(ImportTarget::Automatic),
        }
    }
}

/// A target's refusal in the form's words.
fn target_refusal(why: &TargetError) -> String {
    let field = match why.field() {
        TargetField::Account => "The account you chose",
        TargetField::NewAccountName => "The new account's name",
        TargetField::NewAccountCurrency => "The new account's currency",
    };
    format!("{field}: {why}.")
}

/// One of the user's imported accounts, as the upload form offers it.
pub(super) struct ImportedChoice {
    pub id: i64,
    pub label: String,
}

/// The upload form's account choice: the user's imported accounts and
/// what is chosen.
pub(super) struct UploadForm {
    pub accounts: Vec<ImportedChoice>,
    pub choice: UploadChoice,
}

impl UploadForm {
    /// Whether the choice is `into` (`file` when none is).
    pub fn chose(&self, into: &str) -> bool {
        match self.choice.into.as_str() {
            "account" if self.accounts.is_empty() => into == "file",
            chosen @ ("account" | "new") => chosen == into,
            _ => into == "file",
        }
    }

    pub fn is_chosen(&self, id: &i64) -> bool {
        self.choice.account == Some(*id)
    }
}

/// The bank search of a provider that reaches many banks (GoCardless,
/// Enable Banking).
pub(super) struct Picker {
    pub countries: &'static [&'static str],
    pub country: String,
    pub query: String,
    pub institutions: Vec<InstitutionChoice>,
}

/// The countries the PSD2 providers reach (EEA and UK).
const PSD2_COUNTRIES: &[&str] = &[
    "AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GB", "GR", "HR", "HU", "IE",
    "IS", "IT", "LI", "LT", "LU", "LV", "MT", "NL", "NO", "PL", "PT", "RO", "SE", "SI", "SK",
];

pub(super) fn bank_form(
    visitor: &impl Visitor,
    bank: &Bank,
    action: &str,
    prefill: &str,
    error: Option<&str>,
    status: StatusCode,
) -> Result<HttpResponse, PageError> {
    let csrf = visitor.csrf();
    BankFormPage {
        prefill,
        error,
        ..BankFormPage::plain(visitor, &csrf, bank, action)
    }
    .answer(status)
}

/// The statement upload form, offering the user's imported accounts as
/// where files naming no account go; `choice` as the person left it.
async fn upload_form(
    state: &web::Data<AppState>,
    visitor: &impl Visitor,
    choice: UploadChoice,
    error: Option<&str>,
    status: StatusCode,
) -> Result<HttpResponse, PageError> {
    let user = visitor.user().id;
    let accounts = with_conn(state, move |conn| {
        Ok(tributary_storage::read::imported_accounts(conn, user)?)
    })
    .await?
    .into_iter()
    .map(|a| ImportedChoice {
        id: a.id.get(),
        label: match a.mask {
            Some(mask) => format!("{} (…{mask}, {})", a.name, a.currency),
            None => format!("{} ({})", a.name, a.currency),
        },
    })
    .collect();
    let csrf = visitor.csrf();
    BankFormPage {
        error,
        upload: Some(UploadForm { accounts, choice }),
        ..BankFormPage::plain(visitor, &csrf, &UPLOAD, UPLOAD_ACTION)
    }
    .answer(status)
}

/// Where the upload form posts.
const UPLOAD_ACTION: &str = "/connect/banks/upload";

impl<'a> BankFormPage<'a> {
    /// A bank's form with nothing filled in, no error and no extras.
    fn plain(visitor: &impl Visitor, csrf: &'a str, bank: &'a Bank, action: &'a str) -> Self {
        BankFormPage {
            title: bank.name,
            header: visitor.header(),
            csrf,
            bank,
            action,
            prefill: "",
            error: None,
            picker: None,
            upload: None,
            already: Vec::new(),
        }
    }

    /// The page, with a policy allowing what it needs: the post of a bank
    /// that hands the person off redirects to another site, and the
    /// picker shows the banks' logos.
    fn answer(&self, status: StatusCode) -> Result<HttpResponse, PageError> {
        let mut policy = Policy::strict();
        if self.bank.hands_off {
            policy = policy.form_action_to_any_https_site();
        }
        if let Some(widget) = &self.bank.widget {
            policy = policy
                .scripts_from(&widget.script)
                .frames_and_requests_to(widget.origins.iter().map(String::as_str));
            if widget.inline_styles {
                policy = policy.inline_styles();
            }
        }
        if let Some(picker) = &self.picker {
            policy = policy.images_from(
                picker
                    .institutions
                    .iter()
                    .filter_map(|i| i.logo_url.as_deref()),
            );
        }
        Ok(policy.apply(render_with(status, self)?))
    }
}

fn limit_reached(visitor: &impl Visitor) -> PageError {
    PageError::new(
        StatusCode::FORBIDDEN,
        "Account limit reached",
        format!(
            "You have connected as many accounts as {} allows. Remove a connection to add another.",
            visitor.limit_holder()
        ),
    )
}

#[derive(Deserialize)]
pub(super) struct BankSearch {
    #[serde(default)]
    country: String,
    #[serde(default)]
    q: String,
}

pub(super) async fn form<V: Visitor>(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    search: web::Query<BankSearch>,
) -> Result<HttpResponse, PageError> {
    let visitor: V = connecting(&req, &state).await?;
    let bank = find_bank(&state, &path)?;
    let holdings = holdings(&state, visitor.user().id).await?;
    if holdings.remaining == Some(0) {
        return Err(limit_reached(&visitor));
    }
    if bank.key == UPLOAD.key {
        return upload_form(
            &state,
            &visitor,
            UploadChoice::default(),
            None,
            StatusCode::OK,
        )
        .await;
    }
    let action = format!("/connect/banks/{}", bank.key);
    let already: Vec<AlreadyConnected> = through_provider(&state, &visitor, &bank)
        .await?
        .iter()
        .map(|c| AlreadyConnected::of(c, &bank))
        .collect();
    let Some(provider) = bank.reaches_many() else {
        let (bank, trouble) = bank.offering(&state, visitor.user().id, None).await?;
        let csrf = visitor.csrf();
        return BankFormPage {
            already,
            error: trouble.as_deref(),
            ..BankFormPage::plain(&visitor, &csrf, &bank, &action)
        }
        .answer(StatusCode::OK);
    };
    let country = search.country.trim().to_ascii_uppercase();
    let query = search.q.trim().to_owned();
    let (institutions, error) = if PSD2_COUNTRIES.contains(&country.as_str()) {
        let engine = engine(&state)?;
        let lookup = country.clone();
        let user = visitor.user().id;
        match state
            .provider_calls
            .run(user, move || engine.institutions(provider, &lookup))
            .await?
        {
            Ok(all) => {
                let needle = query.to_lowercase();
                let found = all
                    .into_iter()
                    .filter(|i| needle.is_empty() || i.name.to_lowercase().contains(&needle))
                    .collect();
                (found, None)
            }
            Err(err) => (Vec::new(), Some(connect_failure(&err))),
        }
    } else {
        (Vec::new(), None)
    };
    let csrf = visitor.csrf();
    BankFormPage {
        error: error.as_deref(),
        picker: Some(Picker {
            countries: PSD2_COUNTRIES,
            country,
            query,
            institutions,
        }),
        already,
        ..BankFormPage::plain(&visitor, &csrf, &bank, &action)
    }
    .answer(StatusCode::OK)
}

/// A credential form as posted: the CSRF token and the fields of the
/// connector's description.
#[derive(Deserialize)]
pub(super) struct CredentialsForm {
    csrf: String,
    /// The description's fields, by name.
    #[serde(flatten)]
    fields: HashMap<String, String>,
}

impl CredentialsForm {
    pub(super) fn csrf(&self) -> &str {
        &self.csrf
    }

    /// What the form shows again after a refusal: the value of the field
    /// the connection remembers (never a secret).
    pub(super) fn prefill(&self, bank: &Bank) -> &str {
        bank.connector
            .and_then(|c| c.connect.remembered_field())
            .and_then(|f| self.fields.get(f.name))
            .map_or("", |v| v.trim())
    }
}

/// What the provider needs, from the form; `Err`: what is missing.
/// `return_url`: where the bank sends the user back, for the providers
/// whose user consents at their bank.
fn connect_request(
    bank: &Bank,
    form: &CredentialsForm,
    user: &UserRecord,
    return_url: impl FnOnce(&str) -> String,
) -> Result<(Provider, ConnectRequest), &'static str> {
    let connector = bank.connector.ok_or("This bank connects by upload.")?;
    let return_address = match connector.connect.return_address {
        ReturnAddress::Never => None,
        ReturnAddress::Always { .. } | ReturnAddress::Sometimes => Some(return_url(bank.key)),
    };
    let answers = form.fields.iter().fold(
        Answers::new(user.id, &user.email, return_address.as_deref()),
        |answers, (name, value)| answers.with(name, value),
    );
    (connector.connect.request)(&answers).map(|request| (connector.provider, request))
}

/// A connector's refusal, in plain words with what to do.
pub(super) fn connect_failure(err: &SyncError) -> String {
    match err {
        SyncError::Connect(err) => match err {
            tributary_providers::ConnectorError::InvalidCredentials(_) => {
                "The bank did not accept these details. Check them and try again.".to_owned()
            }
            tributary_providers::ConnectorError::Unavailable { .. } => {
                "The bank cannot be reached right now. Try again in a few minutes.".to_owned()
            }
            // Says what was refused and the operator's switch; nothing of
            // what answers at the address (nothing was sent).
            tributary_providers::ConnectorError::Refused(why) => {
                let mut why = why.clone();
                if let Some(first) = why.get(..1) {
                    why.replace_range(..1, &first.to_uppercase());
                }
                format!("{why}.")
            }
            other => format!("The bank did not let us connect: {other}. Try again."),
        },
        SyncError::NoSecretKey => {
            "This server cannot store bank credentials yet (no secret key is configured)."
                .to_owned()
        }
        other => {
            log::error!("connecting failed: {other}");
            "Something went wrong on our side. Try again in a moment.".to_owned()
        }
    }
}

/// Queues the connection's sync, then runs it on a thread of its own; the
/// progress page shows how it goes. The job is queued before this returns,
/// so the page the person is sent to next says "working" from its first
/// view instead of the connection's last outcome (the account limit it
/// just chose within, say). A worker that claims the job first is as good.
/// The sync does not run on the request handlers' blocking pool: it is as
/// small as the connection pool, and a slow bank would hold one of its
/// threads.
pub(super) async fn sync_in_background(state: &AppState, connection_id: ConnectionId) {
    let Some(engine) = state.engine.clone() else {
        return;
    };
    let queuing = engine.clone();
    match web::block(move || queuing.request_sync(connection_id, SyncJobKind::Initial)).await {
        Ok(Ok(_)) => {}
        // The background sync tries again and says why it cannot run.
        Ok(Err(err)) => log::warn!("queuing the sync of connection {connection_id}: {err}"),
        Err(err) => log::error!("queuing the sync of connection {connection_id}: {err}"),
    }
    let spawned = std::thread::Builder::new()
        .name("first-sync".into())
        .spawn(move || {
            match engine.sync_now(connection_id, SyncJobKind::Initial, "web-first-sync") {
                Ok(_) | Err(SyncError::AlreadyRunning { .. }) => {}
                Err(err) => log::warn!("first sync of connection {connection_id}: {err}"),
            }
        });
    if let Err(err) = spawned {
        log::error!("first sync of connection {connection_id} did not run: {err}");
    }
}

pub(super) async fn connect<V: Visitor>(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CredentialsForm>,
) -> Result<HttpResponse, PageError> {
    let visitor: V = connecting(&req, &state).await?;
    visitor.check_csrf(form.csrf())?;
    let bank = find_bank(&state, &path)?;
    if holdings(&state, visitor.user().id).await?.remaining == Some(0) {
        return Err(limit_reached(&visitor));
    }
    // The same login again: signing in to the connection it made keeps
    // one copy of its accounts (with the credentials just given), where a
    // second connection would sync them all twice.
    let typed = bank
        .connector
        .and_then(|c| c.connect.login_field())
        .and_then(|field| form.fields.get(field.name))
        .map(|login| login.trim().to_owned())
        .filter(|login| !login.is_empty());
    if let Some(typed) = typed {
        let twin = through_provider(&state, &visitor, &bank)
            .await?
            .into_iter()
            .find(|c| remembered_login(&bank, c) == Some(typed.as_str()));
        if let Some(twin) = twin {
            let action = format!("/connect/connections/{}/reauth", twin.id);
            let target = Target::Existing(twin.id);
            let repairing = Some(&twin.settings);
            return submit_credentials(
                &req,
                &state,
                &visitor,
                (&bank, repairing),
                &action,
                &form,
                target,
            )
            .await;
        }
    }
    let action = format!("/connect/banks/{}", bank.key);
    submit_credentials(
        &req,
        &state,
        &visitor,
        (&bank, None),
        &action,
        &form,
        Target::New,
    )
    .await
}

/// What a credential form is for.
#[derive(Debug, Clone, Copy)]
pub(super) enum Target {
    /// A new connection.
    New,
    /// Signing in to the bank again for this connection (its data is kept).
    Existing(ConnectionId),
}

/// The credential step: asks the provider, then sends the person to their
/// bank (GoCardless) or to the progress page of the first sync; a refusal
/// shows the form again with the reason in plain words (and the
/// provider's enrollment script offered again, `repairing` the settings of
/// the connection signed in to again).
pub(super) async fn submit_credentials(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    visitor: &impl Visitor,
    (bank, repairing): (&Bank, Option<&serde_json::Value>),
    action: &str,
    form: &CredentialsForm,
    target: Target,
) -> Result<HttpResponse, PageError> {
    let user = visitor.user().clone();
    let return_url = |key: &str| state.absolute_url(req, &format!("/connect/{key}/return"));
    let message = match connect_request(bank, form, &user, return_url) {
        Ok((provider, request)) => {
            match ask_provider(state, visitor, provider, request, target).await? {
                Ok(response) => return Ok(response),
                Err(refusal) => refusal,
            }
        }
        Err(missing) => missing.to_owned(),
    };
    let (offered, _) = bank.clone().offering(state, user.id, repairing).await?;
    bank_form(
        visitor,
        &offered,
        action,
        form.prefill(bank),
        Some(&message),
        StatusCode::BAD_REQUEST,
    )
}

/// Connects (or signs in again) with what the person gave: where it leads
/// next, or the provider's refusal in plain words.
async fn ask_provider(
    state: &web::Data<AppState>,
    visitor: &impl Visitor,
    provider: Provider,
    request: ConnectRequest,
    target: Target,
) -> Result<Result<HttpResponse, String>, PageError> {
    let engine = engine(state)?;
    let user_id = visitor.user().id;
    let outcome = state
        .provider_calls
        .run(user_id, move || match target {
            Target::New => engine.connect(user_id, provider, &request),
            Target::Existing(id) => engine.reconnect(id, &request),
        })
        .await?;
    match outcome {
        // A provider that sends the user to the bank (or its own pages)
        // first: its connection has a link to go to.
        Ok(connection) if connection.settings.get("link").is_some() => {
            to_the_bank(state, visitor, &connection).await.map(Ok)
        }
        Ok(connection) => {
            sync_in_background(state, connection.id).await;
            Ok(Ok(see_other(&format!(
                "/connect/progress/{}",
                connection.id
            ))))
        }
        Err(err) => Ok(Err(connect_failure(&err))),
    }
}

/// Sends the person to their bank, or to Plaid's pages, to consent; the
/// first sync starts when they come back to `/connect/{provider}/return`.
async fn to_the_bank(
    state: &web::Data<AppState>,
    visitor: &impl Visitor,
    connection: &ConnectionRecord,
) -> Result<HttpResponse, PageError> {
    let link = connection
        .settings
        .get("link")
        .and_then(|l| l.as_str())
        .map(str::to_owned)
        .ok_or_else(|| PageError::internal("a bank connection without a link to the bank"))?;
    visitor.remember_consent(state, Some(connection.id)).await?;
    Ok(see_other(&link))
}

/// The user is back from their bank (`/connect/{provider}/return`):
/// whatever the return carries (Enable Banking's `code` and `state`; nothing
/// for GoCardless, which learns of the consent itself) completes the
/// connection they left to consent to, then its first sync starts. A
/// refusal (the user cancelled at the bank, a code that does not work)
/// shows why; the connection waits for another try.
pub(super) async fn bank_return<V: Visitor>(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<std::collections::BTreeMap<String, String>>,
) -> Result<HttpResponse, PageError> {
    let visitor: V = connecting(&req, &state).await?;
    let Some(connection_id) = visitor.awaiting_consent() else {
        return Ok(see_other("/connect/banks"));
    };
    let returned = AuthorizationReturn::new(query.into_inner());
    let engine = engine(&state)?;
    let completed = state
        .provider_calls
        .run(visitor.user().id, move || {
            engine.complete_authorization(connection_id, &returned)
        })
        .await?;
    if let Err(err) = completed {
        // A refused return says why in the bank's words (the user cancelled,
        // the code expired); other failures as any connection's.
        let why = match &err {
            SyncError::Connect(tributary_providers::ConnectorError::InvalidCredentials(why)) => {
                let mut why = why.clone();
                if let Some(first) = why.get(..1) {
                    why.replace_range(..1, &first.to_uppercase());
                }
                format!("{why}.")
            }
            other => connect_failure(other),
        };
        return Err(PageError::new(
            StatusCode::BAD_REQUEST,
            "Your bank did not connect",
            format!("{why} Choose your bank again to retry."),
        ));
    }
    visitor.remember_consent(&state, None).await?;
    sync_in_background(&state, connection_id).await;
    Ok(see_other(&format!("/connect/progress/{connection_id}")))
}

#[derive(Template)]
#[template(path = "import_summary.html")]
struct ImportSummaryPage<'a> {
    title: &'a str,
    header: Header,
    files: usize,
    summary: import::ImportSummary,
    continue_to: &'a str,
    continue_label: &'a str,
}

/// Statement upload from the browser: a multipart form with the CSRF token
/// and one or more files; all files are read before anything is stored,
/// and the page answers with what the import changed and what the readers
/// noticed.
pub(super) async fn upload<V: Visitor>(
    req: HttpRequest,
    state: web::Data<AppState>,
    mut payload: Multipart,
) -> Result<HttpResponse, PageError> {
    let visitor: V = connecting(&req, &state).await?;
    let upload = read_upload(&mut payload).await.map_err(|err| match err {
        UploadError::TooLarge => PageError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "The upload is too large",
            "Send fewer files at a time (at most 20 MiB together).",
        ),
        UploadError::Unreadable(why) => PageError::bad_request(why),
        UploadError::ControlCharacter(refusal) => PageError::bad_request(refusal.to_string()),
    })?;
    visitor.check_csrf(
        upload
            .fields
            .get("csrf")
            .map(String::as_str)
            .unwrap_or_default(),
    )?;
    let choice = UploadChoice::from_fields(&upload.fields);
    let refused = |message: String| {
        let choice = choice.clone();
        let state = state.clone();
        let visitor = &visitor;
        async move {
            upload_form(
                &state,
                visitor,
                choice,
                Some(&message),
                StatusCode::BAD_REQUEST,
            )
            .await
        }
    };
    let target = match choice.target() {
        Ok(target) => target,
        Err(why) => return refused(why).await,
    };
    if upload.files.is_empty() {
        return refused("Choose a statement file to upload.".to_owned()).await;
    }
    let files = upload.files.len();
    let statements = match read_statements(upload.files, import::Reading::default()).await? {
        Ok(statements) => statements,
        Err(file) => {
            return refused(format!(
                "{} does not read as a statement: {}. Nothing was imported.",
                file.name, file.reason
            ))
            .await;
        }
    };
    let user_id = visitor.user().id;
    let now = state.clock.now().naive_utc();
    let stored = with_conn(&state, move |conn| {
        match import::store_into(conn, user_id, statements, &target, now) {
            Ok(summary) => Ok(Ok(summary)),
            Err(StoreError::Target(why)) => Ok(Err(target_refusal(&why))),
            Err(StoreError::Storage(tributary_storage::StorageError::AccountLimit(limit))) => {
                Err(PageError::new(
                    StatusCode::FORBIDDEN,
                    "Account limit reached",
                    format!("{}. Nothing was imported.", limit.describe_to_user()),
                ))
            }
            Err(StoreError::Storage(other)) => Err(other.into()),
        }
    })
    .await?;
    let summary = match stored {
        Ok(summary) => summary,
        Err(why) => return refused(why).await,
    };
    state
        .metrics
        .imported(summary.added, summary.updated, summary.unchanged);
    render(&ImportSummaryPage {
        title: "Statement imported",
        header: visitor.header(),
        files,
        summary,
        continue_to: visitor.continue_to(),
        continue_label: visitor.continue_label(),
    })
}
