//! The MCP Inspector's CLI (npm `@modelcontextprotocol/inspector`), a
//! third-party MCP client, driving a running server's `/mcp`: installed
//! from npm on first use (the test fails, never skips, without it).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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
