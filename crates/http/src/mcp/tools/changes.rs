//! `get_changes`: the change feed (`GET /transactions/sync`,
//! docs/changes.md), for an assistant that keeps notes between
//! conversations and asks only what changed since.

use super::shared::{Answer, Asker, Failure, Spec, account_argument, output_schema, schema};
use super::transactions::TransactionAnswer;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub(super) const NAME: &str = "get_changes";

/// Changes a page holds when the call does not say.
const DEFAULT_COUNT: u32 = 50;
/// The most a page holds.
const MAX_COUNT: u32 = 100;

pub(super) const SPEC: Spec = Spec {
    name: NAME,
    title: "Get changes",
    description: "Transactions added, modified (a pending one that posted keeps its id) and removed since `cursor`, in the order the changes were made. Without `cursor` it starts from the beginning. Keep `next_cursor` and send it next time to learn only what changed; while `has_more` is true, call again at once. A cursor works only with the same `account_id` (or none) and this connection. At most 100 changes a call (50 unless `count` says).",
    input: schema::<ChangesQuery>,
    output: output_schema::<ChangesAnswer>,
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ChangesQuery {
    /// The `next_cursor` of the previous answer; none to start from the beginning.
    cursor: Option<String>,
    /// Changes a page holds, 1 to 100 (default 50).
    #[schemars(range(min = 1, max = 100))]
    count: Option<u32>,
    /// Only this account's changes (an id from list_accounts).
    account_id: Option<i64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct ChangesAnswer {
    added: Vec<TransactionAnswer>,
    modified: Vec<TransactionAnswer>,
    removed: Vec<Removed>,
    /// Send it back as `cursor` next time.
    next_cursor: String,
    /// More changes follow now: call again at once with `next_cursor`.
    has_more: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Removed {
    id: String,
    account_id: i64,
}

pub(super) async fn run(asker: &Asker, query: ChangesQuery) -> Result<Answer, Failure> {
    let account = account_argument(query.account_id)?;
    let count = match query.count {
        None => DEFAULT_COUNT,
        Some(n @ 1..=MAX_COUNT) => n,
        Some(n) => {
            return Err(Failure::Arguments(format!(
                "`count` must be from 1 to {MAX_COUNT}, got {n}."
            )));
        }
    };
    let cursor = query
        .cursor
        .map(|raw| crate::feed::decode_cursor(&raw))
        .transpose()?;
    let page = asker
        .read(move |conn, viewer| {
            crate::feed::changes_past(conn, viewer, cursor, i64::from(count), account)
        })
        .await?;
    let answer = ChangesAnswer {
        added: page.added.iter().map(TransactionAnswer::from).collect(),
        modified: page.modified.iter().map(TransactionAnswer::from).collect(),
        removed: page
            .removed
            .into_iter()
            .map(|r| Removed {
                id: r.id,
                account_id: r.account_id,
            })
            .collect(),
        next_cursor: page.next_cursor,
        has_more: page.has_more,
    };
    let text = format!(
        "{} added, {} modified, {} removed{}. Keep next_cursor: {}",
        answer.added.len(),
        answer.modified.len(),
        answer.removed.len(),
        if answer.has_more {
            "; more follow now"
        } else {
            ""
        },
        answer.next_cursor
    );
    Ok(Answer::new(&answer, text))
}
