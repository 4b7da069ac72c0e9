//! `POST /v1/users` (create or get), `PUT` and `DELETE /v1/users/{user_id}`.

use crate::auth::AppClient;
use crate::data::with_conn;
use crate::error::ApiError;
use crate::state::AppState;
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use serde::Serialize;
use serde_json::{Map, Value};
use tributary_auth::oauth;
use tributary_domain::email::normalize_email;
use tributary_domain::ids::AppId;
use tributary_storage::apps::{self, AppUserChanges, NewAppUser};
use tributary_storage::users::UserRecord;
use tributary_storage::{AnyConnection, StorageError};

#[derive(Serialize)]
struct CreatedUser {
    user_id: String,
    external_user_id: Option<String>,
    access_token: String,
    refresh_token: String,
    token_type: &'static str,
    expires_in: i64,
}

#[derive(Serialize)]
struct UserBody {
    user: User,
}

#[derive(Serialize)]
struct User {
    user_id: String,
    external_user_id: Option<String>,
    email: String,
    limits: Value,
}

impl From<UserRecord> for User {
    fn from(user: UserRecord) -> Self {
        let limits = match user.max_accounts {
            Some(max) => serde_json::json!({ "max_accounts": max }),
            None => serde_json::json!({}),
        };
        User {
            user_id: user.public_id.unwrap_or_default(),
            external_user_id: user.external_user_id,
            email: user.email,
            limits,
        }
    }
}

fn object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::bad_request(
            "INVALID_BODY",
            "The body must be a JSON object.",
        )),
        Err(err) => Err(ApiError::bad_request(
            "INVALID_BODY",
            format!("The body is not valid JSON: {err}."),
        )),
    }
}

fn email_field(value: &Value) -> Result<String, ApiError> {
    let text = value
        .as_str()
        .ok_or_else(|| ApiError::bad_request("INVALID_EMAIL", "`email` must be a string."))?;
    normalize_email(text)
        .map_err(|err| ApiError::bad_request("INVALID_EMAIL", format!("`email`: {err}.")))
}

fn external_id_field(value: &Value) -> Result<Option<String>, ApiError> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) if s.len() <= 255 => Ok(Some(s.clone())),
        _ => Err(ApiError::bad_request(
            "INVALID_EXTERNAL_USER_ID",
            "`external_user_id` must be a string of at most 255 characters, or null.",
        )),
    }
}

/// `limits`: an object whose only key is `max_accounts` (a whole number,
/// or null for no limit).
fn limits_field(value: &Value) -> Result<Option<i32>, ApiError> {
    let map = value
        .as_object()
        .ok_or_else(|| ApiError::bad_request("INVALID_LIMITS", "`limits` must be an object."))?;
    if let Some(unknown) = map.keys().find(|k| *k != "max_accounts") {
        return Err(ApiError::bad_request(
            "INVALID_LIMITS",
            format!("`limits.{unknown}` is not a known limit (known: max_accounts)."),
        ));
    }
    match map.get("max_accounts") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .and_then(|n| i32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| {
                ApiError::bad_request(
                    "INVALID_LIMITS",
                    "`limits.max_accounts` must be a whole number from 0.",
                )
            }),
    }
}

fn app_user(
    conn: &mut AnyConnection,
    app_id: AppId,
    public_id: &str,
) -> Result<UserRecord, ApiError> {
    apps::find_app_user(conn, app_id, public_id)?.ok_or_else(|| {
        ApiError::not_found(
            "USER_NOT_FOUND",
            "No user with this id belongs to this app.",
        )
    })
}

pub(super) async fn create_or_get(
    AppClient(app): AppClient,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let body = object(&body)?;
    let email = email_field(
        body.get("email")
            .ok_or_else(|| ApiError::bad_request("INVALID_EMAIL", "`email` is required."))?,
    )?;
    let external = body
        .get("external_user_id")
        .map(external_id_field)
        .transpose()?
        .flatten();
    let limits = body.get("limits").map(limits_field).transpose()?;
    let max_accounts = limits.flatten();
    let now = state.clock.now().naive_utc();
    let (user, created, pair) = with_conn(&state, move |conn| {
        let public_id = oauth::new_user_public_id();
        let (user, created) = apps::create_or_get_app_user(
            conn,
            &NewAppUser {
                app_id: app.id,
                email: &email,
                public_id: &public_id,
                external_user_id: external.as_deref(),
                max_accounts,
                now,
            },
        )?;
        // Limits sent for a user who exists are applied, not dropped: the
        // integrator says what this user may do now. (Other fields of an
        // existing user change only through PUT.)
        let user = match limits {
            Some(limits) if !created => apps::update_app_user(
                conn,
                user.id,
                &AppUserChanges {
                    email: None,
                    external_user_id: None,
                    max_accounts: Some(limits),
                },
                now,
            )?,
            _ => user,
        };
        let pair = oauth::issue_pair(conn, app.id, user.id, &oauth::new_family(), now)?;
        Ok((user, created, pair))
    })
    .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(HttpResponse::build(status)
        .insert_header(("Cache-Control", "no-store"))
        .json(CreatedUser {
            user_id: user.public_id.unwrap_or_default(),
            external_user_id: user.external_user_id,
            access_token: pair.access_token,
            refresh_token: pair.refresh_token,
            token_type: "Bearer",
            expires_in: pair.expires_in,
        }))
}

pub(super) async fn update(
    AppClient(app): AppClient,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let body = object(&body)?;
    let email = body.get("email").map(email_field).transpose()?;
    let external = body
        .get("external_user_id")
        .map(external_id_field)
        .transpose()?;
    let limits = body.get("limits").map(limits_field).transpose()?;
    let now = state.clock.now().naive_utc();
    let public_id = path.into_inner();
    let user = with_conn(&state, move |conn| {
        let user = app_user(conn, app.id, &public_id)?;
        if let Some(email) = &email
            && *email != user.email
            && apps::find_app_user_by_email(conn, app.id, email)?.is_some()
        {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "EMAIL_TAKEN",
                "Another user of this app has this e-mail address.",
            ));
        }
        let changes = AppUserChanges {
            email: email.as_deref(),
            external_user_id: external.as_ref().map(|e| e.as_deref()),
            max_accounts: limits,
        };
        apps::update_app_user(conn, user.id, &changes, now).map_err(|err| match err {
            StorageError::Conflict(_) => ApiError::new(
                StatusCode::CONFLICT,
                "EMAIL_TAKEN",
                "Another user of this app has this e-mail address.",
            ),
            other => other.into(),
        })
    })
    .await?;
    Ok(HttpResponse::Ok().json(UserBody { user: user.into() }))
}

pub(super) async fn delete(
    AppClient(app): AppClient,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let public_id = path.into_inner();
    with_conn(&state, move |conn| {
        let user = app_user(conn, app.id, &public_id)?;
        apps::delete_user(conn, user.id)?;
        Ok(())
    })
    .await?;
    Ok(HttpResponse::NoContent().finish())
}
