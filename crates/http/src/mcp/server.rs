//! The MCP server's side of the protocol: what it says of itself, its tool
//! list, and calls dispatched to [`super::tools`] as the asker the
//! endpoint checked.

use super::tools::{self, Asker, Failure};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};

/// What the model is told when it connects.
const INSTRUCTIONS: &str = "Tributary holds this person's own financial data, read-only: bank, card, loan and brokerage accounts synced from their banks or imported from statement files, with balances, transactions (categorised and with clean merchant names by Tributary's enrichment) and investment holdings. Call list_accounts first; the other tools take its ids as account_id. Every amount is exact: a decimal string with its ISO 4217 currency, negative for money out; quote amounts as given and never add amounts of different currencies. Dates are YYYY-MM-DD. Answers are bounded: when next_cursor is set, more follows with another call. Nothing here can move money or change anything.";

/// The finance server: stateless, one per request (the asker comes with
/// each request).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FinanceServer;

impl ServerHandler for FinanceServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("tributary", env!("CARGO_PKG_VERSION")).with_title("Tributary"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::all()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::named(name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let asker = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Asker>())
            .cloned()
            // The endpoint puts the asker into every request it forwards.
            .ok_or_else(|| ErrorData::internal_error("no credential reached the server", None))?;
        let name = request.name.clone();
        let arguments = request.arguments.unwrap_or_default();
        match tools::call(&asker, &name, arguments).await {
            None => Err(ErrorData::invalid_params(
                format!("Unknown tool `{name}`: tools/list names the tools there are."),
                None,
            )),
            Some(Ok(answer)) => Ok(answer.into_result().into()),
            Some(Err(Failure::Arguments(why))) => Err(ErrorData::invalid_params(why, None)),
            Some(Err(Failure::Refused(err))) => {
                // A server-side failure is logged with its cause; the model
                // gets the generic sentence and the request id.
                let request = err.log_fault();
                Ok(tools::refusal(&err, request.as_deref()).into())
            }
        }
    }
}
