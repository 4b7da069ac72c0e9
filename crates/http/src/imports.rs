//! `POST /imports` on the Personal interface: upload statement files
//! (multipart/form-data, one or more file parts) into the key's user's
//! accounts. All files are read before anything is stored, and all are
//! stored in one go: a file that does not read answers 400 naming the file
//! and the place in it, and nothing is stored.

use crate::auth::{self, Credential};
use crate::control_characters::{Refusal, check_field};
use crate::data::with_conn;
use crate::error::{ApiError, Envelope};
use crate::openapi::responses;
use crate::routes::Operation;
use crate::state::AppState;
use actix_multipart::Multipart;
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use futures_util::StreamExt as _;
use serde::Serialize;
use tributary_domain::ids::AccountId;
use tributary_providers::import::csv::CsvProfile;
use tributary_providers::import::{
    self, Format, ImportTarget, StoreError, TargetError, TargetField,
};

/// The most one request may upload, all files together.
pub const MAX_UPLOAD_BYTES: usize = 20 * 1024 * 1024;

/// The import endpoint, for credentials `A`.
pub fn operations<A: Credential>() -> Vec<Operation> {
    vec![Operation::new::<__path_upload, _, _>(upload::<A>)]
}

/// What an import changed.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct ImportAnswer {
    files: usize,
    statements: usize,
    accounts: usize,
    added: usize,
    /// Transactions stored before whose content changed.
    updated: usize,
    /// Transactions already stored as they are (a re-import skips them all).
    skipped: usize,
    /// What the readers had to decide or found wrong (a date taken from
    /// the statement, a balance that does not add up).
    notes: Vec<String>,
    /// The account the statements naming none went into, when `account`
    /// or `new_account_name` chose one (a new account's id); absent
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<i64>)]
    target_account: Option<AccountId>,
    /// The investment activity the statements carried (an OFX investment
    /// statement's trades, income…), when any was new or changed; absent
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    investment_transactions: Option<ActivityWritten>,
}

/// Investment activity an import wrote.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct ActivityWritten {
    added: usize,
    /// Stored before with other figures.
    updated: usize,
}

fn too_large() -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "UPLOAD_TOO_LARGE",
        format!(
            "The upload is larger than {} MiB; send fewer files at a time.",
            MAX_UPLOAD_BYTES / 1024 / 1024
        ),
    )
}

/// A multipart upload: its file parts and its plain fields.
#[derive(Debug, Default)]
pub(crate) struct Upload {
    pub files: Vec<(String, Vec<u8>)>,
    pub fields: std::collections::HashMap<String, String>,
}

#[derive(Debug)]
pub(crate) enum UploadError {
    TooLarge,
    Unreadable(String),
    /// A plain field holds a control character (`crate::control_characters`).
    ControlCharacter(Refusal),
}

/// Reads a multipart body of at most [`MAX_UPLOAD_BYTES`].
pub(crate) async fn read_upload(payload: &mut Multipart) -> Result<Upload, UploadError> {
    let mut upload = Upload::default();
    let mut total = 0usize;
    while let Some(part) = payload.next().await {
        let mut part = part.map_err(|err| {
            UploadError::Unreadable(format!("The multipart body does not read: {err}."))
        })?;
        let disposition = part.content_disposition().cloned();
        let file_name = disposition
            .as_ref()
            .and_then(|d| d.get_filename().map(str::to_owned));
        let field_name = disposition
            .as_ref()
            .and_then(|d| d.get_name().map(str::to_owned))
            .unwrap_or_default();
        let label = file_name.clone().unwrap_or_else(|| field_name.clone());
        let mut bytes = Vec::new();
        while let Some(chunk) = part.next().await {
            let chunk = chunk.map_err(|err| {
                UploadError::Unreadable(format!("`{label}` does not read: {err}."))
            })?;
            total += chunk.len();
            if total > MAX_UPLOAD_BYTES {
                return Err(UploadError::TooLarge);
            }
            bytes.extend_from_slice(&chunk);
        }
        match file_name {
            // A file input left empty still sends a part with no name.
            Some(name) if !name.is_empty() => upload.files.push((name, bytes)),
            Some(_) => {}
            None => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                check_field(&text, &field_name).map_err(UploadError::ControlCharacter)?;
                upload.fields.insert(field_name, text);
            }
        }
    }
    Ok(upload)
}

/// Reads every uploaded file (`import::read_files`, the one way files
/// become an import) on a blocking thread: parsing is CPU work on up to
/// 20 MiB, never for the server's event loop.
pub(crate) async fn read_statements(
    files: Vec<(String, Vec<u8>)>,
    reading: import::Reading,
) -> Result<Result<Vec<import::Statement>, import::UnreadableFile>, actix_web::error::BlockingError>
{
    let files = files
        .into_iter()
        .map(|(name, bytes)| import::StatementFile { name, bytes })
        .collect();
    web::block(move || import::read_files(files, &reading)).await
}

/// The statement formats `?format=` names, for the OpenAPI document.
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)] // read only by the schema derive
pub(crate) enum StatementFormat {
    Camt,
    Mt940,
    Ofx,
    Csv,
}

/// The form an import sends, for the OpenAPI document.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // read only by the schema derive
pub(crate) struct ImportForm {
    /// One or more statement files (any part with a file name is read).
    #[schema(value_type = Vec<String>, format = Binary)]
    files: Vec<Vec<u8>>,
    /// A CSV profile (JSON, docs/imports.md) for a layout Tributary does
    /// not know.
    profile: Option<String>,
    /// Where statements that name no account go (a CSV export without an
    /// account column): the id of one of your accounts of imported
    /// statements. Without it (and without `new_account_name`) each goes
    /// to an account of its own per currency and layout.
    #[schema(value_type = Option<i64>, minimum = 1)]
    account: Option<String>,
    /// …or a new account of this name (1 to 100 characters), with
    /// `new_account_currency`.
    new_account_name: Option<String>,
    /// The new account's currency, a three-letter ISO 4217 code.
    #[schema(min_length = 3, max_length = 3)]
    new_account_currency: Option<String>,
}

/// The multipart fields that choose where statements naming no account go.
pub(crate) const ACCOUNT_FIELD: &str = "account";
pub(crate) const NEW_NAME_FIELD: &str = "new_account_name";
pub(crate) const NEW_CURRENCY_FIELD: &str = "new_account_currency";

/// The field of `POST /imports` a target's refusal is about.
fn field_name(field: TargetField) -> &'static str {
    match field {
        TargetField::Account => ACCOUNT_FIELD,
        TargetField::NewAccountName => NEW_NAME_FIELD,
        TargetField::NewAccountCurrency => NEW_CURRENCY_FIELD,
    }
}

/// The target an upload's `account`, `new_account_name` and
/// `new_account_currency` fields choose (empty fields count as absent).
fn target_from_fields(
    fields: &std::collections::HashMap<String, String>,
) -> Result<ImportTarget, ApiError> {
    let given = |name: &str| fields.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
    let invalid = |message: String| ApiError::bad_request("INVALID_PARAMETER", message);
    match (
        given(ACCOUNT_FIELD),
        given(NEW_NAME_FIELD),
        given(NEW_CURRENCY_FIELD),
    ) {
        (None, None, None) => Ok(ImportTarget::Automatic),
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => Err(invalid(format!(
            "Give either `{ACCOUNT_FIELD}` (an account of yours) or `{NEW_NAME_FIELD}` and `{NEW_CURRENCY_FIELD}` (a new account), not both."
        ))),
        (Some(raw), None, None) => raw
            .parse::<i64>()
            .ok()
            .filter(|id| *id > 0)
            .map(|id| ImportTarget::Account(AccountId::new(id)))
            .ok_or_else(|| {
                invalid(format!(
                    "`{ACCOUNT_FIELD}` must be the id of one of your accounts of imported statements (a positive integer), got `{raw}`."
                ))
            }),
        (None, Some(_), None) => Err(invalid(format!(
            "`{NEW_NAME_FIELD}` needs `{NEW_CURRENCY_FIELD}`: the new account's three-letter currency code."
        ))),
        (None, None, Some(_)) => Err(invalid(format!(
            "`{NEW_CURRENCY_FIELD}` needs `{NEW_NAME_FIELD}`: the new account's name."
        ))),
        (None, Some(name), Some(currency)) => {
            ImportTarget::new_account(name, currency).map_err(|why| target_refused(&why))
        }
    }
}

/// A target that cannot take the upload's statements, naming its field:
/// 422 `CURRENCY_MISMATCH` for a file in another currency than the
/// account's, 400 `INVALID_PARAMETER` otherwise.
fn target_refused(why: &TargetError) -> ApiError {
    let message = format!("`{}`: {why}.", field_name(why.field()));
    match why {
        TargetError::CurrencyMismatch { .. } => ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "CURRENCY_MISMATCH",
            message,
        ),
        _ => ApiError::bad_request("INVALID_PARAMETER", message),
    }
}

#[utoipa::path(
    post,
    path = "/imports",
    operation_id = "import_statements",
    tag = "Imports",
    summary = "Import statement files",
    description = "camt.052/053/054, MT940, OFX/QFX and CSV, in one multipart upload of at most 20 MiB. Every file is read before anything is stored: one that does not read stores nothing and says why. A re-import changes nothing. Statements that name their account (an IBAN in the file, a CSV account column) go to it; the others go to `account`, or to a new account (`new_account_name`, `new_account_currency`), else to an account of their own per currency and layout.",
    params(("format" = inline(Option<StatementFormat>), Query, description = "camt, mt940, ofx or csv, when the content does not say.")),
    request_body(content = ImportForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "What the import changed, and what the readers noticed.", body = ImportAnswer),
        (status = 400, description = "`INVALID_UPLOAD`, `FILE_UNREADABLE` (names the file and the place), `INVALID_PARAMETER` (names the field: `format`, `profile`, `account` not one of your accounts of imported statements, `new_account_name` empty or taken, `new_account_currency` not three letters), `CONTROL_CHARACTER`.", body = Envelope),
        (status = 401, response = responses::Unauthorized),
        (status = 403, description = "`KEY_RESTRICTED`: a key limited to some accounts cannot import.", body = Envelope),
        (status = 409, description = "`ACCOUNT_LIMIT_REACHED` (Platform): the import would pass the user's account limit; nothing is stored.", body = Envelope),
        (status = 413, description = "`UPLOAD_TOO_LARGE`.", body = Envelope),
        (status = 422, description = "`CURRENCY_MISMATCH`: a file states amounts in another currency than the chosen account's (or the new account's); the message names the field and both currencies, and nothing is stored.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn upload<C: Credential>(
    credential: C,
    state: web::Data<AppState>,
    query: web::Query<std::collections::HashMap<String, String>>,
    mut payload: Multipart,
) -> Result<HttpResponse, ApiError> {
    // Checked before a byte of the upload is read.
    let viewer = auth::as_viewer(&state, credential, |_, viewer| Ok(viewer)).await?;
    let format = match query.get("format") {
        Some(name) => Some(Format::parse_name(name).ok_or_else(|| {
            ApiError::bad_request(
                "INVALID_PARAMETER",
                format!("`format` must be camt, mt940, ofx or csv, got `{name}`."),
            )
        })?),
        None => None,
    };
    // A key limited to some accounts may not create others.
    if viewer.account_scope.is_some() {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "KEY_RESTRICTED",
            "Keys limited to some accounts cannot import statements.",
        ));
    }
    let Upload { files, fields } = read_upload(&mut payload).await.map_err(|err| match err {
        UploadError::TooLarge => too_large(),
        UploadError::Unreadable(why) => ApiError::bad_request("INVALID_UPLOAD", why),
        UploadError::ControlCharacter(refusal) => {
            ApiError::bad_request("CONTROL_CHARACTER", refusal.to_string())
        }
    })?;
    // A CSV layout Tributary does not know is described by a profile, the
    // JSON `tributary import --profile` reads, sent as a `profile` part.
    let profile = fields
        .get("profile")
        .map(|json| {
            serde_json::from_str::<CsvProfile>(json).map_err(|err| {
                ApiError::bad_request(
                    "INVALID_PARAMETER",
                    format!("`profile` is not a CSV profile (docs/imports.md): {err}."),
                )
            })
        })
        .transpose()?;
    let target = target_from_fields(&fields)?;
    if files.is_empty() {
        return Err(ApiError::bad_request(
            "INVALID_UPLOAD",
            "Send the statement files as multipart/form-data file parts.",
        ));
    }
    let file_count = files.len();
    let statements = read_statements(files, import::Reading { format, profile })
        .await?
        .map_err(|file| {
            let advice = if file.reason.wants_format_or_profile() {
                " Name the format with ?format=camt|mt940|ofx|csv, or describe a CSV layout with a `profile` part (docs/imports.md)."
            } else {
                ""
            };
            ApiError::bad_request(
                "FILE_UNREADABLE",
                format!("{}: {}. Nothing was imported.{advice}", file.name, file.reason),
            )
        })?;
    let user = viewer.user_id;
    let now = state.clock.now().naive_utc();
    let summary = with_conn(&state, move |conn| {
        import::store_into(conn, user, statements, &target, now).map_err(|err| match err {
            StoreError::Storage(err) => err.into(),
            StoreError::Target(why) => target_refused(&why),
        })
    })
    .await?;
    state
        .metrics
        .imported(summary.added, summary.updated, summary.unchanged);
    Ok(HttpResponse::Ok().json(ImportAnswer {
        files: file_count,
        statements: summary.statements,
        accounts: summary.accounts,
        added: summary.added,
        updated: summary.updated,
        skipped: summary.unchanged,
        notes: summary.notes,
        target_account: summary.target_account,
        investment_transactions: (!summary.activity.is_none()).then_some(ActivityWritten {
            added: summary.activity.added,
            updated: summary.activity.updated,
        }),
    }))
}
