//! The tools an assistant may call (docs/mcp.md, "Tools"): each reads, none
//! writes. A tool's arguments are checked against its input schema by
//! serde (an unknown field, a wrong type or an oversized value is a
//! protocol error naming the field); a question the data cannot answer
//! (an account the credential does not see, a date range backwards) is a
//! tool error the model can read and correct. Every answer is structured
//! content under the tool's output schema and a short text rendering of
//! it, bounded in size, with a cursor and a note where it was cut.

mod accounts;
mod balances;
mod changes;
mod holdings;
mod insights;
mod investments;
mod shared;
mod transactions;

pub(crate) use shared::{Asker, Failure, refusal};

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde::de::DeserializeOwned;
use shared::{Answer, Spec};

const CATALOGUE: [Spec; 8] = [
    accounts::SPEC,
    transactions::SPEC,
    balances::SPEC,
    holdings::SPEC,
    investments::SPEC,
    insights::SPENDING,
    insights::RECURRING,
    changes::SPEC,
];

/// Every tool, as `tools/list` shows them.
pub(crate) fn all() -> Vec<Tool> {
    CATALOGUE.iter().map(tool).collect()
}

/// The tool called `name`, if there is one.
pub(crate) fn named(name: &str) -> Option<Tool> {
    CATALOGUE.iter().find(|spec| spec.name == name).map(tool)
}

fn tool(spec: &Spec) -> Tool {
    Tool::new(spec.name, spec.description, (spec.input)())
        .with_title(spec.title)
        .with_raw_output_schema((spec.output)())
        .with_annotations(
            ToolAnnotations::with_title(spec.title)
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                // The data is the person's own accounts, nothing beyond.
                .open_world(false),
        )
}

/// Calls the tool `name` with `arguments` as `asker`; `None` when there is
/// no such tool.
pub(crate) async fn call(
    asker: &Asker,
    name: &str,
    arguments: JsonObject,
) -> Option<Result<Answer, Failure>> {
    Some(match name {
        accounts::NAME => with(arguments, |a| accounts::run(asker, a)).await,
        transactions::NAME => with(arguments, |a| transactions::run(asker, a)).await,
        balances::NAME => with(arguments, |a| balances::run(asker, a)).await,
        holdings::NAME => with(arguments, |a| holdings::run(asker, a)).await,
        investments::NAME => with(arguments, |a| investments::run(asker, a)).await,
        insights::SPENDING_NAME => with(arguments, |a| insights::spending(asker, a)).await,
        insights::RECURRING_NAME => with(arguments, |a| insights::recurring(asker, a)).await,
        changes::NAME => with(arguments, |a| changes::run(asker, a)).await,
        _ => return None,
    })
}

/// `tool` called with the arguments as its input type, or the protocol
/// error naming what does not fit.
async fn with<T: DeserializeOwned, F: Future<Output = Result<Answer, Failure>>>(
    arguments: JsonObject,
    tool: impl FnOnce(T) -> F,
) -> Result<Answer, Failure> {
    let arguments = serde_path_to_error::deserialize(serde_json::Value::Object(arguments))
        .map_err(|err| {
            let path = err.path().to_string();
            let at = if path == "." {
                String::new()
            } else {
                format!("`{path}`: ")
            };
            Failure::Arguments(format!("The arguments do not fit: {at}{}.", err.inner()))
        })?;
    tool(arguments).await
}
