//! MCP clients for the tests: the MCP Inspector's CLI (npm
//! `@modelcontextprotocol/inspector`), a third-party MCP client, driving a
//! running server's `/mcp` (installed from npm on first use; the test
//! fails, never skips, without it); and an assistant connecting by URL as
//! the MCP authorization specification says, with the `oauth2` crate.

use crate::TestServer;
use oauth2::basic::BasicClient;
use oauth2::{
    AuthType, AuthUrl, ClientId, CsrfToken, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl,
    TokenUrl,
};
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tributary_domain::money::Decimal;

/// The Inspector version these tests were written against.
pub const INSPECTOR: &str = "@modelcontextprotocol/inspector@2.12.0";

/// The Inspector's CLI, ready to run.
#[derive(Debug, Clone)]
pub struct Inspector {
    cli: PathBuf,
    /// Where it keeps its state (it would write to the home directory).
    storage: PathBuf,
}

/// What one run of the CLI did.
#[derive(Debug)]
pub struct Outcome {
    /// 0 on success; 5 when the tool answered an error result; 1 on a
    /// protocol error; 3 when the server asked for authorization.
    pub exit: i32,
    /// `result` of its JSON output (`Value::Null` when there is none).
    pub result: Value,
    pub stderr: String,
}

impl Inspector {
    /// The CLI in `dir` (a test's `CARGO_TARGET_TMPDIR/mcp-inspector`),
    /// installed there on first use.
    pub fn installed(dir: &Path) -> Self {
        let cli = crate::node::package(
            dir,
            &[INSPECTOR],
            "@modelcontextprotocol/inspector/clients/cli/build/index.js",
        );
        Self {
            cli,
            storage: dir.join("storage"),
        }
    }

    /// `tools/list` at `url` (the server's `/mcp`) with `token` as bearer.
    pub async fn list_tools(&self, url: &str, token: &str) -> Outcome {
        self.run(url, token, &["--method", "tools/list"]).await
    }

    /// `tools/call` of `tool` with `arguments` (a JSON object).
    pub async fn call(&self, url: &str, token: &str, tool: &str, arguments: &Value) -> Outcome {
        let arguments = arguments.to_string();
        self.run(
            url,
            token,
            &[
                "--method",
                "tools/call",
                "--tool-name",
                tool,
                "--tool-args-json",
                &arguments,
            ],
        )
        .await
    }

    /// `tools/call` that must succeed: the structured content.
    pub async fn answer(&self, url: &str, token: &str, tool: &str, arguments: &Value) -> Value {
        let outcome = self.call(url, token, tool, arguments).await;
        assert_eq!(
            outcome.exit, 0,
            "{tool} {arguments}: {} / {}",
            outcome.result, outcome.stderr
        );
        assert!(
            outcome.result["content"][0]["text"]
                .as_str()
                .is_some_and(|t| !t.is_empty()),
            "{tool}: a text rendering beside the structured content: {}",
            outcome.result
        );
        outcome.result["structuredContent"].clone()
    }

    async fn run(&self, url: &str, token: &str, args: &[&str]) -> Outcome {
        let mut command = Command::new("node");
        // The URL first: the options after it take several values each.
        command
            .arg(&self.cli)
            .arg(url)
            .args(args)
            .args(["--header", &format!("Authorization: Bearer {token}")])
            .args(["--format", "json", "-q", "--stored-auth-only"])
            .env("MCP_STORAGE_DIR", &self.storage)
            .env("NO_PROXY", "127.0.0.1,localhost")
            // Without a terminal it never waits for a browser sign-in.
            .stdin(Stdio::null());
        let output = actix_web::rt::task::spawn_blocking(move || command.output())
            .await
            .expect("the inspector's thread")
            .expect("node runs the MCP Inspector");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let result = stdout
            .lines()
            .last()
            .and_then(|line| serde_json::from_str::<Value>(line).ok())
            .map_or(Value::Null, |v| v["result"].clone());
        Outcome {
            exit: output.status.code().unwrap_or(-1),
            result,
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// Where the assistant's browser comes back (never reached: the test
/// reads the code from the redirect).
pub const CALLBACK: &str = "http://127.0.0.1:9/callback";

/// What an assistant learns and holds.
#[derive(Debug)]
pub struct Assistant {
    /// Where its browser comes back with the code.
    pub callback: String,
    pub client_id: String,
    pub authorize: String,
    pub token: String,
    pub resource: String,
}

pub fn http() -> oauth2::reqwest::Client {
    oauth2::reqwest::ClientBuilder::new()
        .redirect(oauth2::reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Discovery from the 401 and registration, with `callback` as the
/// redirect URI, as an MCP client does them.
pub async fn discover_and_register(server: &TestServer, callback: &str) -> Assistant {
    let client = Client::new();
    let refused = client
        .post(server.url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let challenge = refused.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    let metadata_url = challenge
        .split("resource_metadata=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no resource_metadata in {challenge}"));
    let resource: Value = client
        .get(metadata_url)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(resource["resource"], server.url("/mcp"));
    let issuer = resource["authorization_servers"][0].as_str().unwrap();
    let metadata: Value = client
        .get(format!("{issuer}/.well-known/oauth-authorization-server"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(metadata["issuer"], issuer);
    assert_eq!(
        metadata["code_challenge_methods_supported"],
        json!(["S256"])
    );
    let registered = client
        .post(metadata["registration_endpoint"].as_str().unwrap())
        .json(&json!({
            "client_name": "Test Assistant",
            "redirect_uris": [callback],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "logo_uri": "https://assistant.example/logo.png",
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(registered.status(), StatusCode::CREATED);
    let registered: Value = registered.json().await.unwrap();
    assert_eq!(registered["token_endpoint_auth_method"], "none");
    assert_eq!(registered["redirect_uris"], json!([callback]));
    assert!(registered.get("client_secret").is_none());
    Assistant {
        callback: callback.to_owned(),
        client_id: registered["client_id"].as_str().unwrap().to_owned(),
        authorize: metadata["authorization_endpoint"]
            .as_str()
            .unwrap()
            .to_owned(),
        token: metadata["token_endpoint"].as_str().unwrap().to_owned(),
        resource: resource["resource"].as_str().unwrap().to_owned(),
    }
}

impl Assistant {
    pub fn oauth(
        &self,
    ) -> BasicClient<
        oauth2::EndpointSet,
        oauth2::EndpointNotSet,
        oauth2::EndpointNotSet,
        oauth2::EndpointNotSet,
        oauth2::EndpointSet,
    > {
        BasicClient::new(ClientId::new(self.client_id.clone()))
            .set_auth_type(AuthType::RequestBody)
            .set_auth_uri(AuthUrl::new(self.authorize.clone()).unwrap())
            .set_token_uri(TokenUrl::new(self.token.clone()).unwrap())
            .set_redirect_uri(RedirectUrl::new(self.callback.clone()).unwrap())
    }

    /// The authorization link (path and query on the server) and the PKCE
    /// verifier that goes with it.
    pub fn link(&self, resource: &str) -> (String, PkceCodeVerifier) {
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, _) = self
            .oauth()
            .authorize_url(|| CsrfToken::new("st-42".into()))
            .set_pkce_challenge(challenge)
            .add_extra_param("resource", resource)
            .add_scope(oauth2::Scope::new("mcp".into()))
            .url();
        (format!("{}?{}", url.path(), url.query().unwrap()), verifier)
    }
}

/// `tools/call` of `tool` with `arguments` over plain HTTP, `token` as
/// bearer: the status and the JSON-RPC answer.
pub async fn tool_call(
    server: &TestServer,
    token: &str,
    tool: &str,
    arguments: Value,
) -> (StatusCode, Value) {
    let response = Client::new()
        .post(server.url("/mcp"))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": tool, "arguments": arguments}}))
        .send()
        .await
        .expect("the MCP request");
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Every tool, with `token` (a scoped key, an assistant's token), names
/// only accounts of `seen` in its answers; and naming any of `others`, the
/// same refusal through every tool that takes an account.
pub async fn assert_sees_only(
    server: &TestServer,
    token: &str,
    seen: &BTreeSet<i64>,
    others: &[i64],
) {
    let mut named = Vec::new();
    for (tool, arguments) in [
        ("list_accounts", json!({})),
        (
            "get_transactions",
            json!({"limit": 100, "include_pending": true}),
        ),
        ("get_balance_history", json!({"interval": "daily"})),
        ("get_holdings", json!({})),
        ("get_investment_transactions", json!({})),
        ("spending_summary", json!({"group_by": "merchant"})),
        ("list_recurring", json!({})),
        ("get_changes", json!({"count": 100})),
    ] {
        let (status, answer) = tool_call(server, token, tool, arguments).await;
        assert_eq!(status, StatusCode::OK, "{tool}: {answer}");
        assert_eq!(answer["result"]["isError"], false, "{tool}: {answer}");
        account_ids_in(&answer["result"]["structuredContent"], &mut named);
        if tool == "list_accounts" {
            let listed: BTreeSet<i64> = answer["result"]["structuredContent"]["accounts"]
                .as_array()
                .expect("accounts")
                .iter()
                .filter_map(|a| a["id"].as_i64())
                .collect();
            assert_eq!(&listed, seen);
        }
    }
    assert!(!named.is_empty());
    assert!(
        named.iter().all(|id| seen.contains(id)),
        "{named:?} beyond {seen:?}"
    );
    // Sums name no account: spending over everything the credential sees
    // is the sum of its accounts' own, to the cent, so nothing of a third
    // is in it.
    let spending = |answer: &Value| -> Vec<(String, String, Decimal)> {
        answer["result"]["structuredContent"]["groups"]
            .as_array()
            .expect("groups")
            .iter()
            .map(|g| {
                (
                    g["key"].to_string(),
                    g["currency"].to_string(),
                    g["spent"]
                        .as_str()
                        .expect("spent")
                        .parse()
                        .expect("a decimal"),
                )
            })
            .collect()
    };
    let (_, all) = tool_call(server, token, "spending_summary", json!({})).await;
    let mut summed: std::collections::BTreeMap<(String, String), Decimal> = Default::default();
    for account in seen {
        let (_, one) = tool_call(
            server,
            token,
            "spending_summary",
            json!({"account_id": account}),
        )
        .await;
        for (key, currency, spent) in spending(&one) {
            *summed.entry((key, currency)).or_default() += spent;
        }
    }
    let all: std::collections::BTreeMap<(String, String), Decimal> = spending(&all)
        .into_iter()
        .map(|(key, currency, spent)| ((key, currency), spent))
        .collect();
    assert!(!all.is_empty());
    assert_eq!(all, summed);
    for other in others {
        for tool in [
            "get_transactions",
            "get_balance_history",
            "get_holdings",
            "get_investment_transactions",
            "spending_summary",
            "list_recurring",
            "get_changes",
        ] {
            let (_, answer) = tool_call(server, token, tool, json!({"account_id": other})).await;
            assert_eq!(
                answer["result"]["isError"], true,
                "{tool} {other}: {answer}"
            );
            assert_eq!(
                answer["result"]["content"][0]["text"]
                    .as_str()
                    .and_then(|t| t.split(':').next()),
                Some("ACCOUNT_NOT_FOUND"),
                "{tool} {other}"
            );
            assert!(answer["result"]["structuredContent"].is_null());
        }
    }
}

/// Every number under a key naming an account (`account_id`,
/// `transfer_account_id`).
fn account_ids_in(value: &Value, ids: &mut Vec<i64>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if matches!(k.as_str(), "account_id" | "transfer_account_id")
                    && let Some(id) = v.as_i64()
                {
                    ids.push(id);
                }
                account_ids_in(v, ids);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| account_ids_in(v, ids)),
        _ => {}
    }
}
