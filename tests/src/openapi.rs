//! Callers of the running servers' OpenAPI documents: credentials and ids
//! that let a request reach each operation's logic, and the document
//! itself (tests/tests/openapi.rs, tests/tests/control_characters.rs).

use crate::TestServer;
use crate::platform::PlatformServer;
use reqwest::{Client, Method, StatusCode};
use serde_json::Value;

/// Credentials and ids that let a request reach each operation's logic.
#[derive(Debug)]
pub struct Caller {
    pub base: String,
    pub document_path: &'static str,
    pub headers: Vec<(String, String)>,
    /// The app's client id and secret, for the operations that take them.
    pub app_basic: Option<(String, String)>,
    pub account_id: String,
    pub connection_id: String,
    pub user_id: String,
}

impl Caller {
    /// `path` of the document with its parameters filled with real ids.
    pub fn url(&self, path: &str) -> String {
        format!(
            "{}{}",
            self.base,
            path.replace("{accountId}", &self.account_id)
                .replace("{connectionId}", &self.connection_id)
                .replace("{user_id}", &self.user_id)
        )
    }

    /// `request` with the credentials `operation` takes: the app's when
    /// its security names `appBasic`, the user's otherwise.
    pub fn authorized(
        &self,
        mut request: reqwest::RequestBuilder,
        operation: &Value,
    ) -> reqwest::RequestBuilder {
        match (&self.app_basic, takes_app_credentials(operation)) {
            (Some((id, secret)), true) => request.basic_auth(id, Some(secret)),
            _ => {
                for (name, value) in &self.headers {
                    request = request.header(name, value);
                }
                request
            }
        }
    }

    /// The document this server serves.
    pub async fn document(&self) -> Value {
        let response = Client::new()
            .get(format!("{}{}", self.base, self.document_path))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/json")
        );
        response.json().await.unwrap()
    }
}

/// Whether `operation`'s security names the app's credentials.
pub fn takes_app_credentials(operation: &Value) -> bool {
    operation["security"]
        .as_array()
        .is_some_and(|s| s.iter().any(|r| r.get("appBasic").is_some()))
}

/// Every `(path, method, operation)` of `document`.
pub fn operations(document: &Value) -> Vec<(String, Method, Value)> {
    let mut all = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            if let Ok(method) = method.to_uppercase().parse::<Method>() {
                all.push((path.clone(), method, operation.clone()));
            }
        }
    }
    all
}

/// Alice's key and her seeded accounts.
pub fn personal_caller(server: &TestServer) -> Caller {
    Caller {
        base: server.base_url.clone(),
        document_path: "/api/v1/openapi.json",
        headers: vec![("x-api-key".into(), server.world.alice_key.clone())],
        app_basic: None,
        account_id: server.world.alice_imported.to_string(),
        connection_id: server.world.alice_sandbox_connection.to_string(),
        user_id: String::new(),
    }
}

/// A user of app A with a statement imported, and a bearer token for them.
pub async fn platform_caller(server: &PlatformServer) -> Caller {
    let (token, user_id) = crate::platform::user_with_statement(server, "fuzz@example.com").await;
    let connections = server
        .bearer_json(Method::GET, "/api/platform/v1/connections", &token)
        .await;
    let accounts = server
        .bearer_json(Method::GET, "/api/platform/v1/accounts", &token)
        .await;
    Caller {
        base: server.base_url.clone(),
        document_path: "/api/platform/openapi.json",
        headers: vec![("Authorization".into(), format!("Bearer {token}"))],
        app_basic: Some((
            server.app_a.client_id().to_owned(),
            server.app_a.secret().to_owned(),
        )),
        account_id: accounts["accounts"][0]["id"].to_string(),
        connection_id: connections["connections"][0]["id"].to_string(),
        user_id,
    }
}
