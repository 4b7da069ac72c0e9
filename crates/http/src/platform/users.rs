//! `POST /v1/users` (create or get), `PUT` and `DELETE /v1/users/{user_id}`.

use crate::auth::AppClient;
use crate::data::with_conn;
use crate::error::{ApiError, Envelope};
use crate::openapi::responses;
use crate::state::AppState;
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use rust_decimal::prelude::ToPrimitive as _;
use serde::Serialize;
use serde_json::{Map, Value};
use tributary_auth::oauth;
use tributary_domain::email::normalize_email;
use tributary_domain::ids::AppId;
use tributary_domain::money::Decimal;
use tributary_storage::apps::{self, AppUserChanges, NewAppUser};
use tributary_storage::users::UserRecord;
use tributary_storage::{AnyConnection, StorageError};

/// A user of the app, with a token pair to read their data.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct CreatedUser {
    #[schema(examples("usr_4kq2v7x9d1m3p8s6"))]
    user_id: String,
    #[schema(required = true)]
    external_user_id: Option<String>,
    /// `tat_…`, for an hour.
    access_token: String,
    /// `trt_…`, single use: each refresh returns a new pair.
    refresh_token: String,
    #[schema(value_type = String, examples("Bearer"))]
    token_type: &'static str,
    /// Seconds.
    #[schema(examples(3600))]
    expires_in: i64,
}

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct UserBody {
    user: User,
}

#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct User {
    user_id: String,
    #[schema(required = true)]
    external_user_id: Option<String>,
    email: String,
    /// `{"max_accounts": n}`, or `{}` for no limit.
    #[schema(value_type = Limits)]
    limits: Value,
}

/// What a user may do. `max_accounts`: a whole number from 0, or null for
/// no limit. An unknown limit is refused (a misspelt one must not pass
/// unnoticed).
#[derive(utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // read only by the schema derive
pub(crate) struct Limits {
    #[schema(minimum = 0, maximum = 2147483647)]
    max_accounts: Option<i32>,
}

/// A user to create (or find by e-mail address).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // read only by the schema derive
pub(crate) struct NewUser {
    #[schema(format = Email, min_length = 3, max_length = 254, examples("ada@example.com"))]
    email: String,
    /// The app's own id for the user, at most 255 characters.
    #[schema(max_length = 255)]
    external_user_id: Option<String>,
    limits: Option<Limits>,
}

/// Changes to a user: only the fields given change.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // read only by the schema derive
pub(crate) struct UserChanges {
    #[schema(format = Email, min_length = 3, max_length = 254)]
    email: Option<String>,
    #[schema(max_length = 255)]
    external_user_id: Option<String>,
    limits: Option<Limits>,
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

/// A field that is there and not null: `"limits": null` (or an `email`
/// of null in a change) is the same as leaving the field out, as JSON
/// clients that write every field of their struct send it.
fn given<'a>(body: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    body.get(name).filter(|value| !value.is_null())
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
        Some(v) => whole_number(v).map(Some).ok_or_else(|| {
            ApiError::bad_request(
                "INVALID_LIMITS",
                "`limits.max_accounts` must be a whole number from 0.",
            )
        }),
    }
}

/// A JSON number with no fraction, from 0 to `i32::MAX`: `3` or `3.0`
/// (JSON Schema counts both as the integer 3), never `3.5`.
fn whole_number(value: &Value) -> Option<i32> {
    let written = value.as_number()?.to_string();
    let number = written
        .parse::<Decimal>()
        .or_else(|_| Decimal::from_scientific(&written))
        .ok()?;
    if !number.fract().is_zero() || number.is_sign_negative() {
        return None;
    }
    number.to_i32()
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

#[utoipa::path(
    post,
    path = "/users",
    operation_id = "create_user",
    tag = "Users",
    summary = "Create a user (or get the one with this e-mail address)",
    description = "Answers the user with a fresh token pair: 201 when created, 200 when the app already had a user with this address (limits sent are applied to them).",
    security(("appBasic" = [])),
    request_body = NewUser,
    responses(
        (status = 201, description = "Created.", body = CreatedUser, links(
            ("update" = (operation_id = "update_user", parameters(("user_id" = "$response.body#/user_id")), description = "Change the user.")),
            ("delete" = (operation_id = "delete_user", parameters(("user_id" = "$response.body#/user_id")), description = "Delete the user.")),
        )),
        (status = 200, description = "The app's existing user with this address.", body = CreatedUser),
        (status = 400, description = "`INVALID_BODY`, `INVALID_EMAIL`, `INVALID_EXTERNAL_USER_ID`, `INVALID_LIMITS`.", body = Envelope),
        (status = 401, response = responses::AppUnauthorized),
        (status = 503, response = responses::Unavailable),
    )
)]
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
    let limits = given(&body, "limits").map(limits_field).transpose()?;
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
        let pair = oauth::issue_pair(conn, (app.id, user.id, None), &oauth::new_family(), now)?;
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

#[utoipa::path(
    put,
    path = "/users/{user_id}",
    operation_id = "update_user",
    tag = "Users",
    summary = "Change a user",
    security(("appBasic" = [])),
    params(("user_id" = String, Path, description = "The user's id (`usr_…`).")),
    request_body = UserChanges,
    responses(
        (status = 200, description = "The user as changed.", body = UserBody),
        (status = 400, description = "`INVALID_BODY`, `INVALID_EMAIL`, `INVALID_EXTERNAL_USER_ID`, `INVALID_LIMITS`.", body = Envelope),
        (status = 401, response = responses::AppUnauthorized),
        (status = 404, description = "`USER_NOT_FOUND`: no such user of this app.", body = Envelope),
        (status = 409, description = "`EMAIL_TAKEN`: another user of this app has the address.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
pub(super) async fn update(
    AppClient(app): AppClient,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let body = object(&body)?;
    let email = given(&body, "email").map(email_field).transpose()?;
    let external = body
        .get("external_user_id")
        .map(external_id_field)
        .transpose()?;
    let limits = given(&body, "limits").map(limits_field).transpose()?;
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

#[utoipa::path(
    delete,
    path = "/users/{user_id}",
    operation_id = "delete_user",
    tag = "Users",
    summary = "Delete a user and erase their data",
    security(("appBasic" = [])),
    params(("user_id" = String, Path, description = "The user's id (`usr_…`).")),
    responses(
        (status = 204, description = "Deleted: their connections, accounts, transactions and tokens are gone."),
        (status = 401, response = responses::AppUnauthorized),
        (status = 404, description = "`USER_NOT_FOUND`.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_limit_is_a_whole_number_however_json_writes_it() {
        for (written, expected) in [
            (json!(3), Some(3)),
            (json!(3.0), Some(3)),
            (json!(0), Some(0)),
            (json!(2147483647), Some(i32::MAX)),
            (json!(3.5), None),
            (json!(-1), None),
            (json!(2147483648_i64), None),
            (json!("3"), None),
        ] {
            assert_eq!(whole_number(&written), expected, "{written}");
        }
        let exponent: Value = serde_json::from_str("1e2").unwrap();
        assert_eq!(whole_number(&exponent), Some(100));
    }
}
