//! MCP tool calls beside the REST requests they wrap, in the same run and
//! against the same server (docs/performance.md, "MCP"): what answering
//! through `/mcp` (JSON-RPC, rmcp's transport, the answer's structured
//! content and its text) costs over the API's own answer.

use crate::load;
use std::net::SocketAddr;
use std::time::Duration;
use tributary_domain::ids::AccountId;

/// One pair: a tool call and the REST request that asks the same.
struct Pair {
    tool: &'static str,
    arguments: String,
    rest: String,
}

/// A row of the MCP table for each pair: `| backend | rows | tool | MCP
/// req/s | p50 µs | p99 µs | REST req/s | p50 µs | p99 µs | MCP / REST |`.
pub async fn compare(
    addr: SocketAddr,
    key: &str,
    account: AccountId,
    (backend, rows): (&str, usize),
    (rounds, seconds, connections): (usize, u64, usize),
) -> anyhow::Result<Vec<String>> {
    let pairs = [
        Pair {
            tool: "list_accounts",
            arguments: "{}".into(),
            rest: "/api/v1/accounts".into(),
        },
        Pair {
            tool: "get_transactions",
            arguments: format!(r#"{{"account_id":{account},"limit":100}}"#),
            rest: format!("/api/v1/accounts/{account}/transactions?limit=100"),
        },
        Pair {
            tool: "spending_summary",
            arguments: r#"{"group_by":"category"}"#.into(),
            rest: "/api/v1/spending?group_by=category".into(),
        },
    ];
    let bearer = format!("Bearer {key}");
    let headers = [
        ("authorization", bearer.as_str()),
        ("accept", "application/json, text/event-stream"),
    ];
    let mut table = Vec::new();
    for pair in &pairs {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{}","arguments":{}}}}}"#,
            pair.tool, pair.arguments
        );
        let call = load::post("/mcp", &headers, &body);
        let answer = load::fetch(addr, &call).await?;
        let text = String::from_utf8_lossy(&answer.body);
        anyhow::ensure!(
            answer.status == 200 && text.contains(r#""isError":false"#),
            "{} answered {}: {text}",
            pair.tool,
            answer.status
        );
        let rest = load::request(&pair.rest, &headers[..1]);
        let (mut mcp_runs, mut rest_runs) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let duration = Duration::from_secs(seconds);
            mcp_runs.push(load::drive(addr, &call, 200, connections, duration).await?);
            rest_runs.push(load::drive(addr, &rest, 200, connections, duration).await?);
        }
        let (mcp, rest) = (crate::median(mcp_runs), crate::median(rest_runs));
        let ratio = mcp.per_second() * 1000 / rest.per_second().max(1);
        table.push(format!(
            "| {backend} | {rows} | {} | {} | {} | {} | {} | {} | {} | {}.{:03} |",
            pair.tool,
            mcp.per_second(),
            mcp.percentile(500),
            mcp.percentile(990),
            rest.per_second(),
            rest.percentile(500),
            rest.percentile(990),
            ratio / 1000,
            ratio % 1000,
        ));
    }
    Ok(table)
}
