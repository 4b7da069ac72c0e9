//! `/rules`: a person's rules for merchants and categories
//! (docs/enrichment.md, "Rules"), in the dashboard. Each transaction row
//! of an account page links here with its merchant filled in ("Always
//! categorise …"); one submit keeps the rule, and the workers apply it to
//! what is stored.

use super::session;
use crate::state::AppState;
use crate::web::confirm::Ask;
use crate::web::page::{PageError, render, see_other, when};
use crate::web::session::{CsrfForm, with_conn};
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use serde::Deserialize;
use tributary_domain::enrich::rules::{Actions, Conditions, MAX_TEXT, Rule};
use tributary_domain::ids::RuleId;
use tributary_domain::taxonomy::{Category, Subcategory};
use tributary_storage::rules::{self as store, RuleChangeError};
use tributary_storage::{AnyConnection, reenrich};

pub(super) const PATH: &str = "/rules";

/// What the new-rule form starts with, from a transaction row's link.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Prefill {
    #[serde(default)]
    merchant: String,
    #[serde(default)]
    subcategory: String,
}

/// The form as posted.
#[derive(Debug, Deserialize)]
pub(super) struct NewRuleForm {
    csrf: String,
    #[serde(default)]
    match_merchant: String,
    #[serde(default)]
    match_text: String,
    #[serde(default)]
    set_merchant: String,
    #[serde(default)]
    set_subcategory: String,
}

struct RuleRow {
    id: RuleId,
    when: String,
    then: String,
}

struct Group {
    name: &'static str,
    options: Vec<Choice>,
}

struct Choice {
    id: &'static str,
    name: &'static str,
    selected: bool,
}

#[derive(Template)]
#[template(path = "dashboard_rules.html")]
struct RulesPage<'a> {
    title: &'a str,
    email: &'a str,
    csrf: &'a str,
    rules: Vec<RuleRow>,
    /// How far applying the latest change is, in words.
    applying: Option<String>,
    merchant: &'a str,
    groups: Vec<Group>,
    max_text: usize,
}

fn row(record: store::RuleRecord) -> RuleRow {
    RuleRow {
        id: record.id,
        when: record.rule.conditions_in_words().join(" and "),
        then: record.rule.actions_in_words().join(", "),
    }
}

fn groups(selected: &str) -> Vec<Group> {
    Category::ALL
        .into_iter()
        .map(|category| Group {
            name: category.name(),
            options: category
                .subcategories()
                .map(|s| Choice {
                    id: s.id,
                    name: s.name,
                    selected: s.id == selected,
                })
                .collect(),
        })
        .collect()
}

pub(super) async fn page(
    req: HttpRequest,
    state: web::Data<AppState>,
    prefill: web::Query<Prefill>,
) -> Result<HttpResponse, PageError> {
    let signed_in = session::required(&req, &state).await?;
    let user = signed_in.user.id;
    let (rules, progress) = with_conn(&state, move |conn| {
        Ok((store::list(conn, user)?, reenrich::progress(conn, user)?))
    })
    .await?;
    let applying = progress.map(|p| match p.finished_at {
        Some(at) => format!(
            "Applied to your {} stored transactions ({} changed), {}.",
            p.checked,
            p.changed,
            when(Some(at), "")
        ),
        None => format!(
            "Applying to your stored transactions: {} of {} read, {} changed so far.",
            p.checked, p.total, p.changed
        ),
    });
    render(&RulesPage {
        title: "Rules",
        email: &signed_in.user.email,
        csrf: &signed_in.csrf(),
        rules: rules.into_iter().map(row).collect(),
        applying,
        merchant: prefill.merchant.trim(),
        groups: groups(prefill.subcategory.trim()),
        max_text: MAX_TEXT,
    })
}

fn optional(text: &str) -> Option<String> {
    Some(text.trim().to_owned()).filter(|t| !t.is_empty())
}

/// `POST /rules`: one rule from the form.
pub(super) async fn create(
    req: HttpRequest,
    state: web::Data<AppState>,
    form: web::Form<NewRuleForm>,
) -> Result<HttpResponse, PageError> {
    let signed_in = session::form(&req, &state, &form.csrf).await?;
    let subcategory = match form.set_subcategory.trim() {
        "" => None,
        id => Some(
            Subcategory::from_id(id)
                .ok_or_else(|| PageError::bad_request("Category: choose one from the list."))?,
        ),
    };
    let rule = Rule {
        when: Conditions {
            merchant: optional(&form.match_merchant),
            text: optional(&form.match_text),
            ..Conditions::default()
        },
        then: Actions {
            merchant: optional(&form.set_merchant),
            subcategory,
        },
    };
    rule.check().map_err(|err| {
        let field = match err.field() {
            "match.merchant" => "Merchant",
            "match.text" => "Text",
            "set.merchant" => "Show as",
            "set" => "Category or Show as",
            _ => "Merchant or Text",
        };
        PageError::bad_request(format!("{field}: {err}."))
    })?;
    let user = signed_in.user.id;
    let now = state.clock.now().naive_utc();
    with_conn(&state, move |conn| {
        store::create(conn, user, &rule, now).map_err(|err| match err {
            RuleChangeError::TooMany => PageError::bad_request(err.to_string()),
            RuleChangeError::UnknownAccount(_) => PageError::not_found(),
            RuleChangeError::Storage(err) => err.into(),
        })
    })
    .await?;
    Ok(see_other(PATH))
}

/// `GET /rules/{id}/delete`: asks first, about a rule of the person's.
pub(super) async fn delete_form(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let name_of = |conn: &mut AnyConnection, user, id: RuleId| {
        Ok(store::list(conn, user)?
            .into_iter()
            .find(|record| record.id == id)
            .map(|record| record.rule.to_string()))
    };
    let ask = |rule| Ask {
        title: "Delete a rule",
        question: format!("Delete the rule “{rule}”?"),
        consequence: "New transactions no longer follow it, and those it changed go back to what Tributary works out (or another rule says) as your stored transactions are read again.",
        button: "Delete the rule",
        button_id: "delete-rule",
        danger: true,
        keep: "Keep it",
    };
    super::ask_about_own(&req, &state, &path, name_of, ask, PATH).await
}

/// `POST /rules/{id}/delete`.
pub(super) async fn delete(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    form: web::Form<CsrfForm>,
) -> Result<HttpResponse, PageError> {
    let signed_in = session::form(&req, &state, &form.csrf).await?;
    let id: RuleId = path.parse().map_err(|_| PageError::not_found())?;
    let user = signed_in.user.id;
    let now = state.clock.now().naive_utc();
    let deleted = with_conn(&state, move |conn| Ok(store::delete(conn, user, id, now)?)).await?;
    if !deleted {
        return Err(PageError::not_found());
    }
    Ok(see_other(PATH))
}
