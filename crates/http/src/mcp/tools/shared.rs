//! What every tool shares: who asks, an answer and its text, why a call
//! has none, the catalogue entry, and the checks of the arguments several
//! tools take. A leaf: the tools and their dispatcher import it.

use crate::error::ApiError;
use crate::state::AppState;
use actix_web::web;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use schemars::JsonSchema;
use serde::Serialize;
use std::sync::Arc;
use tributary_domain::access::Viewer;
use tributary_domain::ids::AccountId;
use tributary_storage::AnyConnection;

/// Who asks, and where their data is: put into each request by the
/// endpoint once the credential is checked.
#[derive(Clone)]
pub(crate) struct Asker {
    pub state: web::Data<AppState>,
    pub viewer: Viewer,
}

impl Asker {
    /// Runs `work` as the asker, on a pooled connection off the async
    /// runtime.
    pub(super) async fn read<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut AnyConnection, &Viewer) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, Failure> {
        let viewer = self.viewer.clone();
        crate::fault::with_conn(&self.state, move |conn| work(conn, &viewer))
            .await
            .map_err(Failure::Refused)
    }
}

/// Why a call has no answer.
pub(crate) enum Failure {
    /// The arguments do not fit the tool's input schema: a protocol error
    /// (JSON-RPC -32602) naming what is wrong.
    Arguments(String),
    /// The question cannot be answered as asked (an account not visible,
    /// a cursor of another query): a tool result marked as an error, with
    /// the API's stable code, so the model can correct itself.
    Refused(ApiError),
}

impl From<ApiError> for Failure {
    fn from(err: ApiError) -> Self {
        Failure::Refused(err)
    }
}

/// A tool's answer: its structured content and the short text a model or
/// a person reads.
pub(crate) struct Answer {
    structured: serde_json::Value,
    text: String,
}

impl Answer {
    pub(super) fn new(structured: &impl Serialize, text: String) -> Self {
        Answer {
            // The answer types serialize infallibly (strings, numbers,
            // lists): a failure here is a bug, shown rather than hidden.
            structured: serde_json::to_value(structured)
                .unwrap_or_else(|err| serde_json::json!({ "error": err.to_string() })),
            text,
        }
    }

    pub(crate) fn into_result(self) -> CallToolResult {
        let mut result = CallToolResult::structured(self.structured);
        result.content = vec![ContentBlock::text(self.text)];
        result
    }
}

/// A refusal as the tool result a model reads: text only, since the
/// structured content of a result must fit the tool's output schema, which
/// describes answers.
pub(crate) fn refusal(err: &ApiError, request: Option<&str>) -> CallToolResult {
    let mut text = format!("{}: {}", err.code(), err.message());
    if let Some(request) = request {
        text.push_str(&format!(" (request {request})"));
    }
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// One tool of the catalogue.
pub(super) struct Spec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub input: fn() -> Arc<JsonObject>,
    pub output: fn() -> Arc<JsonObject>,
}

pub(super) fn schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    rmcp::handler::server::common::schema_for_type::<T>()
}

pub(super) fn output_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    rmcp::handler::server::common::schema_for_output::<T>()
}

/// Longest text argument (a search, a merchant, a category).
const MAX_TEXT: usize = 200;

/// `value` of the argument `name`, when it is short enough to be a
/// question and not blank.
pub(super) fn short_text(name: &str, value: Option<String>) -> Result<Option<String>, Failure> {
    match value {
        Some(text) if text.chars().count() > MAX_TEXT => Err(Failure::Arguments(format!(
            "`{name}` is longer than {MAX_TEXT} characters."
        ))),
        Some(text) if text.trim().is_empty() => Ok(None),
        other => Ok(other.map(|t| t.trim().to_owned())),
    }
}

/// An account id argument, checked like the API's path parameter.
pub(super) fn account_argument(raw: Option<i64>) -> Result<Option<AccountId>, Failure> {
    raw.map(|id| {
        crate::data::parse_account_id(&id.to_string()).map_err(|_| {
            Failure::Arguments(format!(
                "`account_id` must be a positive integer (an id from list_accounts), got {id}."
            ))
        })
    })
    .transpose()
}

/// A `YYYY-MM-DD` argument.
pub(super) fn date_argument(
    name: &str,
    raw: Option<String>,
) -> Result<Option<chrono::NaiveDate>, Failure> {
    raw.map(|raw| crate::data::parse_date(name, &raw).map_err(Failure::Refused))
        .transpose()
}

/// `from` and `to`, each inclusive, in order.
pub(super) fn date_range(
    from: Option<String>,
    to: Option<String>,
) -> Result<(Option<chrono::NaiveDate>, Option<chrono::NaiveDate>), Failure> {
    crate::data::in_order(date_argument("from", from)?, date_argument("to", to)?)
        .map_err(Failure::Refused)
}

/// A decimal as exact text, the sign where it belongs (`-12.50`).
pub(super) fn exact(amount: &tributary_domain::money::Decimal) -> String {
    amount.to_string()
}

/// At most `max` lines of `lines`, then a line saying how many more there
/// are: the text rendering stays short whatever the answer holds (the
/// structured content has them all).
pub(super) fn listed(lines: impl ExactSizeIterator<Item = String>, max: usize) -> String {
    let total = lines.len();
    let mut text: Vec<String> = lines.take(max).collect();
    if total > max {
        text.push(format!(
            "… and {} more (in the structured content).",
            total - max
        ));
    }
    text.join("\n")
}
