//! The API reference page, `/api/v1/docs` and `/api/platform/docs`:
//! rendered on the server from the interface's OpenAPI document (nothing
//! from a CDN, no JavaScript), one section per operation with its
//! parameters, an example request and answers, and a curl line. `?q=`
//! narrows it to the operations whose method, path, summary or tag
//! contain the words.

use super::page::{PageError, render};
use crate::interface::Interface;
use crate::openapi;
use crate::state::AppState;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// How deep an example follows nested schemas; the documents nest three
/// levels at most, and a self-referencing schema must still end.
const EXAMPLE_DEPTH: usize = 8;

/// The longest search a page takes, in characters.
const QUERY_MAX_CHARS: usize = 200;

pub(super) struct TagSection {
    pub name: String,
    pub description: String,
    pub operations: Vec<OperationView>,
}

pub(super) struct OperationView {
    /// The page anchor: the operation id.
    pub anchor: String,
    pub method: String,
    pub path: String,
    pub summary: String,
    pub description: String,
    /// "x-api-key", "Bearer token", "app credentials (Basic)", "none".
    pub auth: String,
    pub params: Vec<ParamView>,
    pub body: Option<BodyView>,
    pub responses: Vec<ResponseView>,
    pub curl: String,
}

pub(super) struct ParamView {
    pub name: String,
    pub location: String,
    pub required: bool,
    pub kind: String,
    pub description: String,
}

pub(super) struct BodyView {
    pub content_type: String,
    pub example: String,
}

pub(super) struct ResponseView {
    pub status: String,
    pub description: String,
    pub example: Option<String>,
}

#[derive(Template)]
#[template(path = "api_reference.html")]
struct ReferencePage<'a> {
    title: &'a str,
    intro: &'a str,
    document: &'a str,
    q: &'a str,
    tags: Vec<TagSection>,
    shown: usize,
    total: usize,
}

#[derive(Debug, Deserialize)]
pub(super) struct Search {
    #[serde(default)]
    q: String,
}

#[utoipa::path(
    get,
    path = "/docs",
    operation_id = "reference_page",
    tag = "Reference",
    summary = "The reference page",
    description = "This document as a page: every operation with its parameters, examples and a curl line; `q` narrows it.",
    security(()),
    params(("q" = Option<String>, Query, description = "Words an operation's method, path, summary or tag must contain.")),
    responses(
        (status = 200, description = "The page.", content_type = "text/html", body = String),
        (status = 400, description = "The search is longer than 200 characters (an HTML page).", content_type = "text/html", body = String),
    )
)]
pub(super) async fn page(
    req: HttpRequest,
    state: web::Data<AppState>,
    search: web::Query<Search>,
) -> Result<HttpResponse, PageError> {
    let interface = openapi::interface_of(&req);
    let q = search.q.trim();
    if q.chars().count() > QUERY_MAX_CHARS {
        return Err(PageError::bad_request(format!(
            "Search: at most {QUERY_MAX_CHARS} characters."
        )));
    }
    let document: Value =
        serde_json::from_str(openapi::document_json(interface)).map_err(PageError::internal)?;
    let base = state.absolute_url(&req, "");
    let mut tags = sections(&document, &base);
    let total = tags.iter().map(|t| t.operations.len()).sum();
    let words: Vec<String> = q.split_whitespace().map(str::to_lowercase).collect();
    for tag in &mut tags {
        let name = tag.name.to_lowercase();
        tag.operations.retain(|op| {
            let text = format!("{} {} {} {name}", op.method, op.path, op.summary).to_lowercase();
            words.iter().all(|w| text.contains(w.as_str()))
        });
    }
    tags.retain(|t| !t.operations.is_empty());
    let shown = tags.iter().map(|t| t.operations.len()).sum();
    let (title, intro, document_path) = match interface {
        Interface::Personal => (
            "Personal API reference",
            "Read your own accounts, transactions, balances and holdings with an API key (the dashboard makes one).",
            openapi::PERSONAL_DOCUMENT,
        ),
        Interface::Platform => (
            "Platform API reference",
            "For apps: manage users with the app's credentials, get their consent with OAuth 2 (authorization code with PKCE), and read their data with the bearer token.",
            openapi::PLATFORM_DOCUMENT,
        ),
    };
    render(&ReferencePage {
        title,
        intro,
        document: document_path,
        q,
        tags,
        shown,
        total,
    })
}

/// The document's operations grouped by their first tag, in the
/// document's tag order.
pub(super) fn sections(document: &Value, base: &str) -> Vec<TagSection> {
    let mut sections: Vec<TagSection> = document["tags"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|tag| TagSection {
            name: text(&tag["name"]),
            description: prose(&text(&tag["description"])),
            operations: Vec::new(),
        })
        .collect();
    let empty = Map::new();
    for (path, item) in document["paths"].as_object().unwrap_or(&empty) {
        for method in ["get", "post", "put", "delete", "patch"] {
            let Some(operation) = item.get(method) else {
                continue;
            };
            let view = operation_view(document, base, method, path, operation);
            let tag = operation["tags"][0].as_str().unwrap_or("Other").to_owned();
            match sections.iter_mut().find(|s| s.name == tag) {
                Some(section) => section.operations.push(view),
                None => sections.push(TagSection {
                    name: tag,
                    description: String::new(),
                    operations: vec![view],
                }),
            }
        }
    }
    sections.retain(|s| !s.operations.is_empty());
    sections
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

fn operation_view(
    document: &Value,
    base: &str,
    method: &str,
    path: &str,
    operation: &Value,
) -> OperationView {
    let params: Vec<ParamView> = operation["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| ParamView {
            name: text(&p["name"]),
            location: text(&p["in"]),
            required: p["required"].as_bool().unwrap_or(false),
            kind: type_name(document, &p["schema"]),
            description: prose(&text(&p["description"])),
        })
        .collect();
    let body = operation["requestBody"]["content"]
        .as_object()
        .and_then(|content| content.iter().next())
        .map(|(content_type, media)| BodyView {
            content_type: content_type.clone(),
            example: pretty(&example(document, &media["schema"], 0)),
        });
    let responses = operation["responses"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(status, response)| {
            let response = resolve(document, response);
            let description = text(&response["description"]);
            let example = response["content"]
                .as_object()
                .and_then(|content| content.get("application/json"))
                .map(|media| {
                    let mut value = example(document, &media["schema"], 0);
                    fit_error_example(&mut value, status, &description);
                    pretty(&value)
                });
            ResponseView {
                status: status.clone(),
                description: prose(&description),
                example,
            }
        })
        .collect();
    let security = operation
        .get("security")
        .or_else(|| document.get("security"));
    let auth = auth_in_words(security);
    OperationView {
        anchor: text(&operation["operationId"]),
        method: method.to_uppercase(),
        path: path.to_owned(),
        summary: text(&operation["summary"]),
        description: prose(&text(&operation["description"])),
        curl: curl(method, base, path, &params, security, &body),
        auth,
        params,
        body,
        responses,
    }
}

/// Description text as HTML: escaped, with the `backticked` names the
/// documents use set as code (a lone backtick stays as it is).
pub(super) fn prose(text: &str) -> String {
    let escape = super::page::escape_html;
    let parts: Vec<&str> = text.split('`').collect();
    let mut html = String::new();
    for (i, part) in parts.iter().enumerate() {
        let closed = i + 1 < parts.len() || i % 2 == 0;
        match (i % 2, closed) {
            (1, true) => {
                html.push_str("<code>");
                html.push_str(&escape(part));
                html.push_str("</code>");
            }
            (1, false) => {
                html.push('`');
                html.push_str(&escape(part));
            }
            _ => html.push_str(&escape(part)),
        }
    }
    html
}

/// An error answer's example as that answer reads: the shared envelope's
/// example is a 404's, so a 401 or a 503 shows its own reason phrase and
/// the first code its description names.
fn fit_error_example(value: &mut Value, status: &str, description: &str) {
    let Some(reason) = status
        .parse::<u16>()
        .ok()
        .filter(|s| *s >= 400)
        .and_then(|s| actix_web::http::StatusCode::from_u16(s).ok())
        .and_then(|s| s.canonical_reason())
    else {
        return;
    };
    let Some(envelope) = value.as_object_mut().filter(|o| o.contains_key("code")) else {
        return;
    };
    envelope.insert("error".into(), Value::from(reason));
    let named = description.split('`').skip(1).step_by(2).find(|name| {
        name.len() > 2
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    });
    if let Some(code) = named {
        envelope.insert("code".into(), Value::from(code));
        envelope.insert(
            "message".into(),
            Value::from("A sentence for people, naming the field and why."),
        );
    }
}

/// The schemes an operation accepts, in words.
fn auth_in_words(security: Option<&Value>) -> String {
    let names: Vec<&str> = security
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|requirement| {
            requirement
                .as_object()
                .and_then(|r| r.keys().next())
                .map_or("none", |scheme| match scheme.as_str() {
                    openapi::API_KEY => "API key (x-api-key)",
                    openapi::BEARER => "a user's access token (Bearer)",
                    openapi::APP_BASIC => "the app's client id and secret (Basic)",
                    _ => "none",
                })
        })
        .collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", or ")
    }
}

/// A curl line for the operation, with example values in the path and
/// the credentials as shell variables.
fn curl(
    method: &str,
    base: &str,
    path: &str,
    params: &[ParamView],
    security: Option<&Value>,
    body: &Option<BodyView>,
) -> String {
    let mut url = format!("{base}{path}");
    for p in params.iter().filter(|p| p.location == "path") {
        let sample = if p.kind == "integer" { "1" } else { "usr_…" };
        url = url.replace(&format!("{{{}}}", p.name), sample);
    }
    let mut line = if method == "get" {
        format!("curl '{url}'")
    } else {
        format!("curl -X {} '{url}'", method.to_uppercase())
    };
    let first_scheme = security
        .and_then(Value::as_array)
        .and_then(|r| r.iter().find_map(|r| r.as_object()?.keys().next().cloned()));
    match first_scheme.as_deref() {
        Some(openapi::API_KEY) => line.push_str(" -H \"x-api-key: $TRIBUTARY_API_KEY\""),
        Some(openapi::BEARER) => line.push_str(" -H \"Authorization: Bearer $ACCESS_TOKEN\""),
        Some(openapi::APP_BASIC) => line.push_str(" -u \"$CLIENT_ID:$CLIENT_SECRET\""),
        _ => {}
    }
    if let Some(body) = body {
        match body.content_type.as_str() {
            "multipart/form-data" => line.push_str(" -F files=@statement.xml"),
            "application/x-www-form-urlencoded" => {
                line.push_str(" -d grant_type=authorization_code -d code=… -d redirect_uri=… -d code_verifier=…");
            }
            _ => {
                let compact: String = body
                    .example
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                line.push_str(&format!(
                    " -H 'content-type: application/json' -d '{compact}'"
                ));
            }
        }
    }
    line
}

/// `value` with a `$ref` followed (one level: the documents' references
/// point at components, which do not refer on).
fn resolve<'a>(document: &'a Value, value: &'a Value) -> &'a Value {
    match value["$ref"].as_str() {
        Some(reference) => reference
            .strip_prefix("#/")
            .map(|pointer| format!("/{pointer}"))
            .and_then(|pointer| document.pointer(&pointer))
            .unwrap_or(value),
        None => value,
    }
}

/// A schema's type in a word: the referenced schema's name, or its type.
fn type_name(document: &Value, schema: &Value) -> String {
    if let Some(reference) = schema["$ref"].as_str() {
        return reference.rsplit('/').next().unwrap_or_default().to_owned();
    }
    let schema = resolve(document, schema);
    match &schema["type"] {
        Value::String(t) => t.clone(),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any".to_owned(),
    }
}

/// An example value for `schema`: its own example where it gives one,
/// else one made from its type.
pub(super) fn example(document: &Value, schema: &Value, depth: usize) -> Value {
    if depth > EXAMPLE_DEPTH {
        return Value::Null;
    }
    let schema = resolve(document, schema);
    if let Some(first) = schema["examples"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    if let Some(example) = schema.get("example") {
        return example.clone();
    }
    if let Some(options) = schema["oneOf"].as_array().or(schema["anyOf"].as_array()) {
        return options
            .iter()
            .map(|option| example(document, option, depth + 1))
            .find(|v| !v.is_null())
            .unwrap_or(Value::Null);
    }
    let kind = match &schema["type"] {
        Value::String(t) => t.as_str(),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if schema.get("properties").is_some() => "object",
        _ => "null",
    };
    match kind {
        "object" => {
            let mut object = Map::new();
            for (name, property) in schema["properties"].as_object().into_iter().flatten() {
                object.insert(name.clone(), example(document, property, depth + 1));
            }
            Value::Object(object)
        }
        "array" => json!([example(document, &schema["items"], depth + 1)]),
        "string" => match schema["format"].as_str() {
            Some("date") => json!("2026-03-09"),
            Some("date-time") => json!("2026-03-09T08:00:00Z"),
            Some("binary") => json!("(file)"),
            _ => json!("string"),
        },
        "integer" => json!(schema["minimum"].as_i64().unwrap_or(1).max(1)),
        "number" => json!(1.5),
        "boolean" => json!(false),
        _ => Value::Null,
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// The API reference page, `/docs` under each interface's API root.
pub(crate) fn operation() -> crate::routes::Operation {
    crate::routes::Operation::new::<__path_page, _, _>(page).page()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_sets_names_as_code_and_escapes_the_rest() {
        assert_eq!(
            prose("Answers `INVALID_DATE` <b> for `from`, a lone ` stays"),
            "Answers <code>INVALID_DATE</code> &#60;b&#62; for <code>from</code>, a lone ` stays"
        );
    }

    #[test]
    fn an_error_example_reads_as_its_own_answer() {
        let mut envelope = json!({"error": "Not Found", "message": "No account", "code": "ACCOUNT_NOT_FOUND", "request_id": "req_1"});
        fit_error_example(
            &mut envelope,
            "401",
            "No credentials: `MISSING_CREDENTIALS`, `INVALID_API_KEY`.",
        );
        assert_eq!(envelope["error"], "Unauthorized");
        assert_eq!(envelope["code"], "MISSING_CREDENTIALS");
        let mut ok = json!({"code": "x"});
        fit_error_example(&mut ok, "200", "`NOT_AN_ERROR`");
        assert_eq!(ok, json!({"code": "x"}));
    }

    #[test]
    fn examples_follow_references_and_stop_on_a_loop() {
        let document = json!({
            "components": {"schemas": {
                "Loop": {"type": "object", "properties": {"next": {"$ref": "#/components/schemas/Loop"}}},
                "Money": {"type": "object", "properties": {
                    "amount": {"type": "number", "examples": [-12.5]},
                    "on": {"type": "string", "format": "date"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "note": {"type": ["string", "null"]},
                }},
            }},
        });
        assert_eq!(
            example(&document, &json!({"$ref": "#/components/schemas/Money"}), 0),
            json!({"amount": -12.5, "on": "2026-03-09", "tags": ["string"], "note": "string"})
        );
        // Ends, with null where the depth ran out.
        let looped = example(&document, &json!({"$ref": "#/components/schemas/Loop"}), 0);
        assert!(looped.pointer("/next/next/next").is_some());
    }
}
