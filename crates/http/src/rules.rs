//! `/rules` (docs/enrichment.md, "Rules"): a person's own enrichment
//! rules. Mounted for both interfaces, behind their credentials; a
//! credential limited to some accounts may not use them (a rule applies to
//! every account). A change is applied to new rows at once and to stored
//! ones by the workers; `GET /rules` tells how far they are.

use crate::auth::{self, Credential};
use crate::error::{ApiError, Envelope};
use crate::openapi::responses;
use crate::routes::Operation;
use crate::state::AppState;
use crate::webhooks::time;
use crate::wire::nullable_decimal_schema;
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use serde::Serialize;
use serde_json::{Map, Value};
use tributary_domain::access::Viewer;
use tributary_domain::enrich::rules::{Actions, Conditions, MAX_RULES, Rule};
use tributary_domain::ids::{RuleId, UserId};
use tributary_domain::money::{Decimal, json as decimal_json, parse_decimal};
use tributary_domain::taxonomy::Subcategory;
use tributary_storage::reenrich::{self, Progress};
use tributary_storage::rules::{self as store, RuleChangeError, RuleRecord};
use utoipa::ToSchema;

/// The rules endpoints, for credentials `A`.
pub fn operations<A: Credential>() -> Vec<Operation> {
    vec![
        Operation::new::<__path_list_rules, _, _>(list_rules::<A>),
        Operation::new::<__path_create_rule, _, _>(create_rule::<A>),
        Operation::new::<__path_replace_rule, _, _>(replace_rule::<A>),
        Operation::new::<__path_delete_rule, _, _>(delete_rule::<A>),
    ]
}

/// What a transaction must have for the rule to apply: every field given
/// (at least one); a field not given is left out.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleMatch {
    /// Words of the bank's text (the provider's merchant or the
    /// description), whole and in order, in any case, accents ignored.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 200, examples("blue bottle"))]
    text: Option<String>,
    /// The clean merchant (the wire's `merchant` before rules), the whole
    /// name, in any case.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 200, examples("Blue Bottle"))]
    merchant: Option<String>,
    /// The signed amount (negative: money out) is at least this.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "decimal_json::serialize_option"
    )]
    #[schema(schema_with = nullable_decimal_schema)]
    amount_min: Option<Decimal>,
    /// The signed amount is at most this.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "decimal_json::serialize_option"
    )]
    #[schema(schema_with = nullable_decimal_schema)]
    amount_max: Option<Decimal>,
    /// Only transactions of this account.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1)]
    account_id: Option<i64>,
}

/// What the rule sets (at least one); a field not set is left out.
#[derive(Debug, Serialize, ToSchema)]
pub struct RuleSet {
    /// The merchant the transactions show.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(examples("Blue Bottle Coffee"))]
    merchant: Option<String>,
    /// A subcategory id of the taxonomy (docs/enrichment.md,
    /// "Categories"); the category follows from it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(examples("food_and_drink.cafes"))]
    subcategory: Option<String>,
    /// Answers only, with `subcategory`: its top-level category.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(read_only, examples("Food & Drink"))]
    category: Option<String>,
}

/// A rule as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleView {
    #[schema(examples("3"))]
    id: String,
    #[serde(rename = "match")]
    #[schema(rename = "match")]
    when: RuleMatch,
    set: RuleSet,
    #[schema(value_type = String, format = DateTime)]
    created_at: String,
}

/// A rule to keep: `match` and `set` as [`RuleView`] shows them (at least
/// one field of each), without `set.category`.
/// `id` and `createdAt` of an answer sent back are ignored.
#[derive(Debug, ToSchema)]
#[allow(dead_code)] // read only by the schema derive; the body is read by `parse_rule`
pub struct RuleInput {
    #[schema(rename = "match")]
    when: RuleMatch,
    set: RuleSetInput,
}

/// [`RuleSet`] as a request gives it.
#[derive(Debug, ToSchema)]
#[allow(dead_code)] // read only by the schema derive
pub struct RuleSetInput {
    #[schema(min_length = 1, max_length = 200, examples("Blue Bottle Coffee"))]
    merchant: Option<String>,
    #[schema(examples("food_and_drink.cafes"))]
    subcategory: Option<String>,
}

/// How far the workers are in applying the rules to what is stored.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Applying {
    /// Transactions read so far.
    checked: i64,
    /// Transactions there were when the latest change of rules was made.
    total: i64,
    /// Transactions whose merchant or category changed.
    changed: i64,
    #[schema(value_type = String, format = DateTime)]
    requested_at: String,
    /// Null while under way.
    #[schema(value_type = Option<String>, format = DateTime)]
    finished_at: Option<String>,
}

/// The answer of `GET /rules`.
#[derive(Debug, Serialize, ToSchema)]
pub struct RuleList {
    /// Oldest first: for each field, the first matching rule that sets it
    /// decides.
    rules: Vec<RuleView>,
    /// The latest application to stored transactions; null if rules never
    /// changed.
    #[schema(required = true)]
    applying: Option<Applying>,
}

impl From<RuleRecord> for RuleView {
    fn from(record: RuleRecord) -> Self {
        let Rule { when, then } = record.rule;
        RuleView {
            id: record.id.to_string(),
            when: RuleMatch {
                text: when.text,
                merchant: when.merchant,
                amount_min: when.amount_min,
                amount_max: when.amount_max,
                account_id: when.account_id,
            },
            set: RuleSet {
                merchant: then.merchant,
                subcategory: then.subcategory.map(|s| s.id.to_owned()),
                category: then.subcategory.map(|s| s.category.name().to_owned()),
            },
            created_at: time(record.created_at),
        }
    }
}

impl From<Progress> for Applying {
    fn from(p: Progress) -> Self {
        Applying {
            checked: p.checked,
            total: p.total,
            changed: p.changed,
            requested_at: time(p.requested_at),
            finished_at: p.finished_at.map(time),
        }
    }
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::bad_request("INVALID_RULE", message)
}

/// Reads a rule from a request body, naming the field that cannot be used.
fn parse_rule(body: &[u8]) -> Result<Rule, ApiError> {
    let value: Value = serde_json::from_slice(body).map_err(|err| {
        ApiError::bad_request(
            "INVALID_BODY",
            format!("The body does not read as JSON: {err}."),
        )
    })?;
    let Value::Object(mut top) = value else {
        return Err(invalid(
            "The body must be an object with `match` and `set`.",
        ));
    };
    let when = object(&mut top, "match")?;
    let then = object(&mut top, "set")?;
    // A rule as an answer showed it may be sent back whole.
    for read_only in ["id", "createdAt"] {
        top.remove(read_only);
    }
    no_others(&top, "")?;
    let mut when = when.unwrap_or_default();
    let mut then = then.unwrap_or_default();
    let rule = Rule {
        when: Conditions {
            text: text(&mut when, "match.text")?,
            merchant: text(&mut when, "match.merchant")?,
            amount_min: amount(&mut when, "match.amountMin")?,
            amount_max: amount(&mut when, "match.amountMax")?,
            account_id: account(&mut when, "match.accountId")?,
        },
        then: Actions {
            merchant: text(&mut then, "set.merchant")?,
            subcategory: subcategory(&mut then, "set.subcategory")?,
        },
    };
    // `set.category` as an answer shows it may come back in a rule sent
    // again: it must agree with the subcategory.
    if let Some(category) = then.remove("category").filter(|c| !c.is_null()) {
        let agrees = rule
            .then
            .subcategory
            .is_some_and(|s| category.as_str() == Some(s.category.name()));
        if !agrees {
            return Err(invalid(
                "`set.category` follows from `set.subcategory`; send the subcategory id alone.",
            ));
        }
    }
    no_others(&when, "match.")?;
    no_others(&then, "set.")?;
    rule.check()
        .map_err(|err| invalid(format!("{err} (field `{}`).", err.field())))?;
    Ok(rule)
}

fn object(
    from: &mut Map<String, Value>,
    field: &str,
) -> Result<Option<Map<String, Value>>, ApiError> {
    match from.remove(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(map)) => Ok(Some(map)),
        Some(_) => Err(invalid(format!("`{field}` must be an object."))),
    }
}

fn no_others(map: &Map<String, Value>, prefix: &str) -> Result<(), ApiError> {
    match map.keys().next() {
        None => Ok(()),
        Some(key) => Err(invalid(format!(
            "`{prefix}{key}` is not a field of a rule."
        ))),
    }
}

fn text(map: &mut Map<String, Value>, field: &str) -> Result<Option<String>, ApiError> {
    match map.remove(leaf(field)) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.trim().to_owned())),
        Some(_) => Err(invalid(format!("`{field}` must be a string."))),
    }
}

fn amount(map: &mut Map<String, Value>, field: &str) -> Result<Option<Decimal>, ApiError> {
    let text = match map.remove(leaf(field)) {
        None | Some(Value::Null) => return Ok(None),
        // Exact digits: numbers are read as written (arbitrary precision).
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => return Err(invalid(format!("`{field}` must be a number."))),
    };
    parse_decimal(text.trim())
        .map(Some)
        .map_err(|_| invalid(format!("`{field}` must be a decimal number, got `{text}`.")))
}

fn account(map: &mut Map<String, Value>, field: &str) -> Result<Option<i64>, ApiError> {
    match map.remove(leaf(field)) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_i64()
            .filter(|id| *id > 0)
            .map(Some)
            .ok_or_else(|| invalid(format!("`{field}` must be a positive integer."))),
    }
}

fn subcategory(
    map: &mut Map<String, Value>,
    field: &str,
) -> Result<Option<&'static Subcategory>, ApiError> {
    match text(map, field)? {
        None => Ok(None),
        Some(id) => Subcategory::from_id(&id).map(Some).ok_or_else(|| {
            invalid(format!(
                "`{field}` must be a subcategory id of the taxonomy (docs/enrichment.md), such as `groceries.supermarkets`; got `{id}`."
            ))
        }),
    }
}

/// The last part of a dotted field name: the key in its object.
fn leaf(field: &str) -> &str {
    field.rsplit('.').next().unwrap_or(field)
}

fn parse_rule_id(raw: &str) -> Result<RuleId, ApiError> {
    raw.parse::<i64>()
        .ok()
        .filter(|id| *id > 0)
        .map(RuleId::new)
        .ok_or_else(rule_not_found)
}

fn rule_not_found() -> ApiError {
    ApiError::not_found("RULE_NOT_FOUND", "No rule with this id is yours.")
}

/// The person behind a credential that may see every account of theirs.
fn whole_user(viewer: &Viewer) -> Result<UserId, ApiError> {
    if viewer.account_scope.is_some() {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "KEY_RESTRICTED",
            "Credentials limited to some accounts cannot read or change rules (a rule applies to every account); use ones for every account.",
        ));
    }
    Ok(viewer.user_id)
}

fn change_refused(err: RuleChangeError) -> ApiError {
    match err {
        RuleChangeError::TooMany => ApiError::bad_request(
            "TOO_MANY_RULES",
            format!("At most {MAX_RULES} rules; delete one first."),
        ),
        // The same answer for an account that is missing and another's.
        RuleChangeError::UnknownAccount(id) => {
            invalid(format!("`match.accountId`: no account {id} is yours."))
        }
        RuleChangeError::Storage(err) => err.into(),
    }
}

#[utoipa::path(
    get,
    path = "/rules",
    tag = "Insights",
    summary = "List your rules",
    description = "Your enrichment rules, oldest first, and how far the workers are in applying the latest change to stored transactions (docs/enrichment.md, \"Rules\").",
    responses(
        (status = 200, description = "The rules.", body = RuleList),
        (status = 401, response = responses::Unauthorized),
        (status = 403, description = "`KEY_RESTRICTED`: credentials limited to some accounts.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn list_rules<C: Credential>(
    credential: C,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let list = auth::as_viewer(&state, credential, |conn, viewer| {
        let user = whole_user(&viewer)?;
        Ok(RuleList {
            rules: store::list(conn, user)?
                .into_iter()
                .map(Into::into)
                .collect(),
            applying: reenrich::progress(conn, user)?.map(Into::into),
        })
    })
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "private, no-store"))
        .json(list))
}

#[utoipa::path(
    post,
    path = "/rules",
    tag = "Insights",
    summary = "Add a rule",
    description = "Transactions that match `match` (every field given) show what `set` says: a merchant, a subcategory, or both. New transactions get it as they are stored; stored ones as the workers reach them (`GET /rules`, `applying`), each announced as modified in the change feed.",
    request_body = RuleInput,
    responses(
        (status = 201, description = "Kept.", body = RuleView),
        (status = 400, description = "`INVALID_BODY`, `INVALID_RULE` (the message names the field), `TOO_MANY_RULES`.", body = Envelope),
        (status = 401, response = responses::Unauthorized),
        (status = 403, description = "`KEY_RESTRICTED`.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn create_rule<C: Credential>(
    credential: C,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let rule = auth::checked(&state, &credential, parse_rule(&body)).await?;
    let now = state.clock.now().naive_utc();
    let kept = auth::as_viewer(&state, credential, move |conn, viewer| {
        let user = whole_user(&viewer)?;
        store::create(conn, user, &rule, now).map_err(change_refused)
    })
    .await?;
    Ok(HttpResponse::Created().json(RuleView::from(kept)))
}

#[utoipa::path(
    put,
    path = "/rules/{ruleId}",
    tag = "Insights",
    summary = "Change a rule",
    description = "Replaces the rule's `match` and `set`; it keeps its place among your rules.",
    params(("ruleId" = String, Path, description = "The rule's id.")),
    request_body = RuleInput,
    responses(
        (status = 200, description = "Changed.", body = RuleView),
        (status = 400, description = "`INVALID_BODY`, `INVALID_RULE`.", body = Envelope),
        (status = 401, response = responses::Unauthorized),
        (status = 403, description = "`KEY_RESTRICTED`.", body = Envelope),
        (status = 404, description = "`RULE_NOT_FOUND`.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn replace_rule<C: Credential>(
    credential: C,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let parsed = parse_rule_id(&path).and_then(|id| Ok((id, parse_rule(&body)?)));
    let (id, rule) = auth::checked(&state, &credential, parsed).await?;
    let now = state.clock.now().naive_utc();
    let kept = auth::as_viewer(&state, credential, move |conn, viewer| {
        let user = whole_user(&viewer)?;
        store::replace(conn, user, id, &rule, now).map_err(change_refused)
    })
    .await?
    .ok_or_else(rule_not_found)?;
    Ok(HttpResponse::Ok().json(RuleView::from(kept)))
}

#[utoipa::path(
    delete,
    path = "/rules/{ruleId}",
    tag = "Insights",
    summary = "Delete a rule",
    description = "Transactions it decided get what the other rules and the tables say, as the workers reach them.",
    params(("ruleId" = String, Path, description = "The rule's id.")),
    responses(
        (status = 204, description = "Deleted."),
        (status = 401, response = responses::Unauthorized),
        (status = 403, description = "`KEY_RESTRICTED`.", body = Envelope),
        (status = 404, description = "`RULE_NOT_FOUND`.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn delete_rule<C: Credential>(
    credential: C,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = auth::checked(&state, &credential, parse_rule_id(&path)).await?;
    let now = state.clock.now().naive_utc();
    let deleted = auth::as_viewer(&state, credential, move |conn, viewer| {
        let user = whole_user(&viewer)?;
        Ok(store::delete(conn, user, id, now)?)
    })
    .await?;
    if !deleted {
        return Err(rule_not_found());
    }
    Ok(HttpResponse::NoContent().finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(body: &str) -> String {
        parse_rule(body.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn a_rule_reads_from_its_wire_shape_and_names_what_is_wrong() {
        let rule = parse_rule(
            br#"{"match": {"text": " SQ *BLUE BOTTLE ", "amountMin": -10.50, "amountMax": 0, "accountId": 7},
                 "set": {"merchant": "Blue Bottle", "subcategory": "food_and_drink.cafes", "category": "Food & Drink"}}"#,
        )
        .unwrap();
        assert_eq!(rule.when.text.as_deref(), Some("SQ *BLUE BOTTLE"));
        assert_eq!(rule.when.amount_min.unwrap().to_string(), "-10.50");
        assert_eq!(rule.when.amount_max, Some(Decimal::ZERO));
        assert_eq!(rule.when.account_id, Some(7));
        assert_eq!(rule.then.subcategory.unwrap().id, "food_and_drink.cafes");

        assert!(refused("[]").contains("object"));
        assert!(refused("{").contains("JSON"));
        assert!(
            refused(r#"{"match": {"txt": "a"}, "set": {"merchant": "b"}}"#).contains("match.txt")
        );
        assert!(
            refused(r#"{"match": {"text": 3}, "set": {"merchant": "b"}}"#).contains("match.text")
        );
        assert!(
            refused(r#"{"match": {"amountMin": "ten"}, "set": {"merchant": "b"}}"#)
                .contains("match.amountMin")
        );
        assert!(
            refused(r#"{"match": {"accountId": 0}, "set": {"merchant": "b"}}"#)
                .contains("match.accountId")
        );
        assert!(
            refused(r#"{"match": {"text": "a"}, "set": {"subcategory": "food"}}"#)
                .contains("set.subcategory")
        );
        assert!(refused(r#"{"match": {"text": "a"}, "set": {"subcategory": "food_and_drink.cafes", "category": "Groceries"}}"#).contains("set.category"));
        assert!(refused(r#"{"match": {}, "set": {"merchant": "b"}}"#).contains("`match`"));
        assert!(refused(r#"{"match": {"text": "a"}}"#).contains("`set`"));
        assert!(
            refused(r#"{"match": {"text": "a"}, "set": {"merchant": "b"}, "name": "x"}"#)
                .contains("`name`")
        );
        assert!(parse_rule(br#"{"id": "3", "createdAt": "2026-01-01T00:00:00Z", "match": {"text": "a"}, "set": {"merchant": "b"}}"#).is_ok());
    }
}
