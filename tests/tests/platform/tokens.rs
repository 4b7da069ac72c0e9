//! The token endpoint, authorization codes, PKCE, revocation and the
//! RFC 8414 metadata (`/api/platform/oauth/*`, `/.well-known/…`).

use super::*;

#[actix_web::test]
async fn an_integrator_registers_reads_refreshes_and_reads_again_with_the_oauth2_crate() {
    on_every_backend(|server| async move {
        let (public_id, _, access, refresh) = user_with_bank(&server, "ana@example.com").await;
        let first = get_with(&server, "/api/platform/v1/accounts", &access).await;
        assert_eq!(first.status(), StatusCode::OK);
        let accounts: Value = first.json().await.unwrap();
        assert!(accounts["total"].as_u64().unwrap() >= 3);
        assert_eq!(accounts["accounts"][0]["provider"], "sandbox");

        let client = BasicClient::new(ClientId::new(server.app_a.client_id().to_owned()))
            .set_client_secret(ClientSecret::new(server.app_a.secret().to_owned()))
            .set_token_uri(TokenUrl::new(server.url("/api/platform/oauth/token")).unwrap());
        let http = oauth2::reqwest::ClientBuilder::new().redirect(oauth2::reqwest::redirect::Policy::none()).build().unwrap();
        let refreshed = client.exchange_refresh_token(&RefreshToken::new(refresh.clone())).request_async(&http).await.unwrap();
        assert_eq!(refreshed.expires_in(), Some(std::time::Duration::from_secs(3600)));
        let new_access = refreshed.access_token().secret().clone();
        let new_refresh = refreshed.refresh_token().unwrap().secret().clone();
        let again = get_with(&server, "/api/platform/v1/accounts", &new_access).await;
        assert_eq!(again.status(), StatusCode::OK);
        assert_eq!(again.json::<Value>().await.unwrap(), accounts);

        // The old refresh token again: refused, and the new family with it.
        let replay = client.exchange_refresh_token(&RefreshToken::new(refresh)).request_async(&http).await.unwrap_err();
        let RequestTokenError::ServerResponse(error) = replay else { panic!("expected an OAuth error") };
        assert_eq!(*error.error(), BasicErrorResponseType::InvalidGrant);
        let after = client.exchange_refresh_token(&RefreshToken::new(new_refresh)).request_async(&http).await.unwrap_err();
        assert!(matches!(after, RequestTokenError::ServerResponse(ref e) if *e.error() == BasicErrorResponseType::InvalidGrant));
        assert_eq!(get_with(&server, "/api/platform/v1/accounts", &new_access).await.status(), StatusCode::UNAUTHORIZED);

        // The token response carries user_id (the oauth2 crate ignores it).
        let (status, body) = register(&server, &server.app_a, "ana@example.com").await;
        assert_eq!((status, body["user_id"].as_str()), (StatusCode::OK, Some(public_id.as_str())), "the same user again: 200");
        let (status, body, headers) =
            token_request(&server, &[("grant_type", "refresh_token"), ("refresh_token", body["refresh_token"].as_str().unwrap())], Some(&server.app_a)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["user_id"], public_id.as_str());
        assert_eq!(body["token_type"], "Bearer");
        assert_eq!(headers["cache-control"], "no-store");
        server
    })
    .await;
}

/// Whether every token given is revoked in the database.
fn all_revoked(server: &PlatformServer, tokens: &[&str]) -> bool {
    let mut conn = server.database.db().conn().unwrap();
    tokens.iter().all(|token| {
        tributary_storage::oauth::find_token(&mut conn, &tributary_auth::secret::hash(token))
            .unwrap()
            .is_some_and(|record| record.revoked_at.is_some())
    })
}

#[actix_web::test]
async fn concurrent_refreshes_of_one_token_leave_every_token_of_the_family_revoked() {
    on_every_backend(|server| async move {
        for round in 0..10 {
            let (status, body) =
                register(&server, &server.app_a, &format!("race{round}@example.com")).await;
            assert_eq!(status, StatusCode::CREATED);
            let access = body["access_token"].as_str().unwrap().to_owned();
            let refresh = body["refresh_token"].as_str().unwrap().to_owned();
            let form = [
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh.as_str()),
            ];
            let requests = (0..20).map(|_| token_request(&server, &form, Some(&server.app_a)));
            let answers = futures_util::future::join_all(requests).await;
            let winners: Vec<&Value> = answers
                .iter()
                .filter(|(status, _, _)| *status == StatusCode::OK)
                .map(|(_, body, _)| body)
                .collect();
            assert_eq!(winners.len(), 1, "round {round}: exactly one rotation wins");
            for (status, body, _) in &answers {
                assert!(
                    *status == StatusCode::OK || body["error"] == "invalid_grant",
                    "round {round}: {status} {body}"
                );
            }
            let (new_access, new_refresh) = (
                winners[0]["access_token"].as_str().unwrap(),
                winners[0]["refresh_token"].as_str().unwrap(),
            );
            assert!(
                all_revoked(&server, &[&access, &refresh, new_access, new_refresh]),
                "round {round}: the replay revoked the whole family, the winner's new pair included"
            );
            let (status, _, _) = token_request(
                &server,
                &[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", new_refresh),
                ],
                Some(&server.app_a),
            )
            .await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "round {round}");
            assert_eq!(
                get_with(&server, "/api/platform/v1/accounts", new_access)
                    .await
                    .status(),
                StatusCode::UNAUTHORIZED
            );
        }
        server
    })
    .await;
}

#[actix_web::test]
async fn code_reuse_revokes_what_the_first_redemption_issued() {
    on_every_backend(|server| async move {
        let (_, user, _, _) = user_with_bank(&server, "reuse@example.com").await;
        let redirect = server.app_a.redirect_uris[0].clone();
        let code = issue_code(&server, &server.app_a, user, &redirect, None)
            .await
            .unwrap();
        let (status, first, _) = redeem(&server, &server.app_a, &code, &redirect).await;
        assert_eq!(status, StatusCode::OK, "{first}");
        let access = first["access_token"].as_str().unwrap();
        assert_eq!(
            get_with(&server, "/api/platform/v1/accounts", access)
                .await
                .status(),
            StatusCode::OK
        );
        let (status, second, _) = redeem(&server, &server.app_a, &code, &redirect).await;
        assert_eq!(
            (status, second["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant"))
        );
        assert_eq!(
            get_with(&server, "/api/platform/v1/accounts", access)
                .await
                .status(),
            StatusCode::UNAUTHORIZED
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn redirect_uri_must_be_the_one_the_code_was_issued_for() {
    on_every_backend(|server| async move {
        let (_, user, _, _) = user_with_bank(&server, "redirect@example.com").await;
        let code = issue_code(
            &server,
            &server.app_a,
            user,
            &server.app_a.redirect_uris[0],
            None,
        )
        .await
        .unwrap();
        let other = server.app_a.redirect_uris[1].as_str();
        let (status, body, _) = redeem(&server, &server.app_a, &code, other).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant"))
        );
        assert!(
            body["error_description"]
                .as_str()
                .unwrap()
                .contains("redirect_uri")
        );
        // A redirect URI the app never registered gets no code at all.
        let err = issue_code(
            &server,
            &server.app_a,
            user,
            "https://evil.example/cb",
            None,
        )
        .await
        .unwrap_err();
        assert!(err.starts_with("invalid_request"), "{err}");
        server
    })
    .await;
}

#[actix_web::test]
async fn a_code_of_app_a_cannot_be_redeemed_by_app_b() {
    on_every_backend(|server| async move {
        let (_, user, _, _) = user_with_bank(&server, "cross@example.com").await;
        let redirect = server.app_a.redirect_uris[0].clone();
        let code = issue_code(&server, &server.app_a, user, &redirect, None)
            .await
            .unwrap();
        let (status, body, _) = redeem(&server, &server.app_b, &code, &redirect).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant"))
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn an_expired_code_is_refused() {
    on_every_backend(|server| async move {
        let (_, user, _, _) = user_with_bank(&server, "late@example.com").await;
        let redirect = server.app_a.redirect_uris[0].clone();
        let code = issue_code(&server, &server.app_a, user, &redirect, None)
            .await
            .unwrap();
        server.clock.advance(chrono::Duration::minutes(10));
        let (status, body, _) = redeem(&server, &server.app_a, &code, &redirect).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant"))
        );
        assert!(
            body["error_description"]
                .as_str()
                .unwrap()
                .contains("expired")
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn an_access_token_expires_after_an_hour() {
    on_every_backend(|server| async move {
        let (_, _, access, _) = user_with_bank(&server, "hour@example.com").await;
        server.clock.advance(chrono::Duration::seconds(3599));
        assert_eq!(
            get_with(&server, "/api/platform/v1/accounts", &access)
                .await
                .status(),
            StatusCode::OK
        );
        server.clock.advance(chrono::Duration::seconds(1));
        let expired = get_with(&server, "/api/platform/v1/accounts", &access).await;
        assert_eq!(expired.status(), StatusCode::UNAUTHORIZED);
        let body: Value = expired.json().await.unwrap();
        assert_eq!(body["code"], "ACCESS_TOKEN_EXPIRED");
        server
    })
    .await;
}

#[actix_web::test]
async fn a_public_client_must_use_pkce() {
    on_every_backend(|server| async move {
        let (status, body) = register(&server, &server.app_a, "pub@example.com").await;
        assert_eq!(status, StatusCode::CREATED);
        let user = internal_id(&server, &server.app_a, body["user_id"].as_str().unwrap());
        let app = server.public_app.clone();
        let err = issue_code(&server, &app, user, &app.redirect_uris[0], None)
            .await
            .unwrap_err();
        assert!(err.starts_with("invalid_request"), "{err}");
        // With a challenge, the code exchange needs the verifier.
        let challenge = s256(VERIFIER);
        let code = issue_code(
            &server,
            &app,
            user,
            &app.redirect_uris[0],
            Some((&challenge, "S256")),
        )
        .await
        .unwrap();
        let base = [
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", app.redirect_uris[0].as_str()),
            ("client_id", app.client_id()),
        ];
        let (status, body, _) = token_request(&server, &base, None).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant")),
            "{body}"
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn a_wrong_code_verifier_is_refused_and_the_right_one_accepted() {
    on_every_backend(|server| async move {
        let (status, body) = register(&server, &server.app_a, "pkce@example.com").await;
        assert_eq!(status, StatusCode::CREATED);
        let user = internal_id(&server, &server.app_a, body["user_id"].as_str().unwrap());
        let app = server.public_app.clone();
        let challenge = s256(VERIFIER);
        let redirect = app.redirect_uris[0].as_str();
        let code = issue_code(&server, &app, user, redirect, Some((&challenge, "S256")))
            .await
            .unwrap();
        let wrong = "another-random-code-verifier-of-at-least-43-characters-xyz";
        let form = |verifier: &'static str| {
            vec![
                ("grant_type", "authorization_code"),
                ("code", code.as_str()),
                ("redirect_uri", redirect),
                ("client_id", app.client_id()),
                ("code_verifier", verifier),
            ]
        };
        let (status, body, _) = token_request(&server, &form(wrong), None).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant"))
        );
        let code = issue_code(&server, &app, user, redirect, Some((&challenge, "S256")))
            .await
            .unwrap();
        let (status, body, _) = token_request(
            &server,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", redirect),
                ("client_id", app.client_id()),
                ("code_verifier", VERIFIER),
            ],
            None,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        server
    })
    .await;
}

#[actix_web::test]
async fn plain_pkce_is_refused() {
    on_every_backend(|server| async move {
        let (_, body) = register(&server, &server.app_a, "plain@example.com").await;
        let user = internal_id(&server, &server.app_a, body["user_id"].as_str().unwrap());
        let app = server.public_app.clone();
        let err = issue_code(
            &server,
            &app,
            user,
            &app.redirect_uris[0],
            Some((VERIFIER, "plain")),
        )
        .await
        .unwrap_err();
        assert!(
            err.starts_with("invalid_request") && err.contains("S256"),
            "{err}"
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn a_wrong_client_secret_is_invalid_client() {
    on_every_backend(|server| async move {
        let (_, _, _, refresh) = user_with_bank(&server, "secret@example.com").await;
        let mut impostor = server.app_a.clone();
        impostor.secret = Some("tcs_wrongwrongwrongwrongwrongwrongwrongwrongwro".into());
        let (status, body, headers) = token_request(
            &server,
            &[("grant_type", "refresh_token"), ("refresh_token", &refresh)],
            Some(&impostor),
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::UNAUTHORIZED, Some("invalid_client"))
        );
        assert!(
            headers["www-authenticate"]
                .to_str()
                .unwrap()
                .starts_with("Basic")
        );
        let (status, _) = register(&server, &impostor, "x@example.com").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        // Credentials in the body work as well as in the header.
        let (status, body, _) = token_request(
            &server,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", &refresh),
                ("client_id", server.app_a.client_id()),
                ("client_secret", server.app_a.secret()),
            ],
            None,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        server
    })
    .await;
}

#[actix_web::test]
async fn refresh_after_the_user_was_deleted_is_invalid_grant() {
    on_every_backend(|server| async move {
        let (public_id, user, access, refresh) = user_with_bank(&server, "gone@example.com").await;
        let deleted = Client::new()
            .delete(server.url(&format!("/api/platform/v1/users/{public_id}")))
            .basic_auth(server.app_a.client_id(), Some(server.app_a.secret()))
            .send()
            .await
            .unwrap();
        assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
        let (status, body, _) = token_request(
            &server,
            &[("grant_type", "refresh_token"), ("refresh_token", &refresh)],
            Some(&server.app_a),
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant"))
        );
        assert_eq!(
            get_with(&server, "/api/platform/v1/accounts", &access)
                .await
                .status(),
            StatusCode::UNAUTHORIZED
        );
        // Every row of the user is gone.
        let everything = tributary_storage::testing::dump_rows(server.database.db());
        assert!(
            everything.contains("app-a"),
            "the dump shows the data that remains"
        );
        assert!(!everything.contains("gone@example.com"));
        assert!(
            apps::find_app_user(
                &mut server.database.db().conn().unwrap(),
                server.app_a.record.id,
                &public_id
            )
            .unwrap()
            .is_none()
        );
        let _ = user;
        server
    })
    .await;
}

#[actix_web::test]
async fn the_token_endpoint_speaks_rfc_6749_errors_and_json_bodies() {
    on_every_backend(|server| async move {
        let (_, _, _, refresh) = user_with_bank(&server, "json@example.com").await;
        let (status, body, _) = token_request(&server, &[("grant_type", "password")], Some(&server.app_a)).await;
        assert_eq!((status, body["error"].as_str()), (StatusCode::BAD_REQUEST, Some("unsupported_grant_type")));
        let (status, body, _) = token_request(&server, &[("grant_type", "refresh_token")], Some(&server.app_a)).await;
        assert_eq!((status, body["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_request")));
        let json = Client::new()
            .post(server.url("/api/platform/oauth/token"))
            .json(&serde_json::json!({"grant_type": "refresh_token", "refresh_token": refresh, "client_id": server.app_a.client_id(), "client_secret": server.app_a.secret()}))
            .send()
            .await
            .unwrap();
        assert_eq!(json.status(), StatusCode::OK);
        let body: Value = json.json().await.unwrap();
        for field in ["access_token", "refresh_token", "token_type", "expires_in", "user_id"] {
            assert!(body.get(field).is_some(), "{field}");
        }
        server
    })
    .await;
}

#[actix_web::test]
async fn no_secret_token_or_code_is_stored_in_plain_text() {
    on_every_backend(|server| async move {
        let (_, user, access, refresh) = user_with_bank(&server, "plain-text@example.com").await;
        let redirect = server.app_a.redirect_uris[0].clone();
        let code = issue_code(&server, &server.app_a, user, &redirect, None)
            .await
            .unwrap();
        let (_, pair, _) = redeem(&server, &server.app_a, &code, &redirect).await;
        let portal: Value = json_answer(
            Client::new()
                .post(server.url("/api/platform/v1/portal_sessions"))
                .bearer_auth(&access),
        )
        .await;
        let everything = dump(server.database.db());
        let secrets = [
            server.app_a.secret().to_owned(),
            server.app_b.secret().to_owned(),
            access,
            refresh,
            code,
            pair["access_token"].as_str().unwrap().to_owned(),
            pair["refresh_token"].as_str().unwrap().to_owned(),
            portal["url"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .to_owned(),
        ];
        // The dump holds what was stored (so its silence means something):
        // the apps, and the SHA-256 of the first access token.
        assert!(
            everything.contains(server.app_a.client_id()),
            "the dump holds the apps"
        );
        assert!(
            everything.contains(&tributary_auth::secret::hash(&secrets[2])),
            "the dump holds the token's hash"
        );
        for secret in secrets {
            assert!(
                !everything.contains(&secret),
                "stored in plain text: {}…",
                &secret[..8]
            );
            assert!(
                !everything.contains(&secret[4..]),
                "stored in plain text: {}…",
                &secret[..8]
            );
        }
        server
    })
    .await;
}

#[actix_web::test]
async fn authorization_server_metadata_follows_rfc_8414_and_its_endpoints_work() {
    on_every_backend(|server| async move {
        let response = Client::new()
            .get(server.url("/.well-known/oauth-authorization-server"))
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
        let metadata: Value = response.json().await.unwrap();
        // §2: required members; §3.3: the issuer is the URL the document is
        // published under (the public URL), minus the well-known suffix.
        assert_eq!(metadata["issuer"], tributary_e2e::platform::PUBLIC_URL);
        for member in [
            "authorization_endpoint",
            "token_endpoint",
            "revocation_endpoint",
        ] {
            let url = url::Url::parse(metadata[member].as_str().unwrap()).unwrap();
            assert!(
                url.query().is_none() && url.fragment().is_none(),
                "{member}"
            );
        }
        assert_eq!(
            metadata["response_types_supported"],
            serde_json::json!(["code"])
        );
        assert_eq!(
            metadata["code_challenge_methods_supported"],
            serde_json::json!(["S256"])
        );
        assert_eq!(
            metadata["grant_types_supported"],
            serde_json::json!(["authorization_code", "refresh_token"])
        );
        for method in ["client_secret_basic", "client_secret_post", "none"] {
            assert!(
                metadata["token_endpoint_auth_methods_supported"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|m| m == method),
                "{method}"
            );
        }
        // A client configured from the document alone refreshes a token.
        let (_, _, _, refresh) = user_with_bank(&server, "meta@example.com").await;
        let client = BasicClient::new(ClientId::new(server.app_a.client_id().to_owned()))
            .set_client_secret(ClientSecret::new(server.app_a.secret().to_owned()))
            .set_token_uri(
                TokenUrl::new(
                    server.url(
                        url::Url::parse(metadata["token_endpoint"].as_str().unwrap())
                            .unwrap()
                            .path(),
                    ),
                )
                .unwrap(),
            );
        let http = oauth2::reqwest::ClientBuilder::new()
            .redirect(oauth2::reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        client
            .exchange_refresh_token(&RefreshToken::new(refresh))
            .request_async(&http)
            .await
            .unwrap();
        server
    })
    .await;
}

/// `GET path` on `base` with forged forwarding headers: (Cache-Control, JSON).
async fn get_forged(base: &str, path: &str) -> (String, Value) {
    let response = Client::new()
        .get(format!("{base}{path}"))
        .header("x-forwarded-host", "evil.example")
        .header("x-forwarded-proto", "https")
        .header("forwarded", "host=evil.example;proto=https")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let cache = response.headers()["cache-control"]
        .to_str()
        .unwrap()
        .to_owned();
    (cache, response.json().await.unwrap())
}

#[actix_web::test]
async fn with_a_public_url_the_metadata_is_the_operators_and_may_be_cached() {
    on_every_backend(|server| async move {
        let (cache, metadata) =
            get_forged(&server.base_url, "/.well-known/oauth-authorization-server").await;
        assert_eq!(cache, "public, max-age=3600");
        let public = tributary_e2e::platform::PUBLIC_URL;
        assert_eq!(metadata["issuer"], public);
        assert_eq!(
            metadata["token_endpoint"],
            format!("{public}/api/platform/oauth/token")
        );
        assert_eq!(
            metadata["authorization_response_iss_parameter_supported"],
            true
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn without_a_proxy_forwarding_headers_reach_no_url_and_the_metadata_is_not_cached() {
    for database in tributary_storage::testing::TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let (server, _) = tributary_e2e::platform::start_platform_configured(database, |_| {});
        let (cache, metadata) =
            get_forged(&server.base_url, "/.well-known/oauth-authorization-server").await;
        assert_eq!(
            cache, "private, no-store",
            "read from the request: no cache keeps it"
        );
        assert_eq!(metadata["issuer"], server.base_url.as_str());
        for member in [
            "authorization_endpoint",
            "token_endpoint",
            "revocation_endpoint",
        ] {
            let url = metadata[member].as_str().unwrap();
            assert!(
                url.starts_with(&format!("{}/api/platform/oauth/", server.base_url)),
                "{member}: {url}"
            );
        }
        // Links handed out follow the same rule: the portal link.
        let (_, _, access, _) = user_with_bank(&server, "links@example.com").await;
        let portal = json_answer(
            Client::new()
                .post(server.url("/api/platform/v1/portal_sessions"))
                .bearer_auth(&access)
                .header("x-forwarded-host", "evil.example")
                .header("forwarded", "host=evil.example"),
        )
        .await;
        let link = portal["url"].as_str().unwrap();
        assert!(
            link.starts_with(&format!("{}/portal/", server.base_url)),
            "{link}"
        );
        server.stop().await;
    }
}

#[actix_web::test]
async fn behind_a_proxy_the_forwarded_address_is_used_and_still_not_cached() {
    for database in tributary_storage::testing::TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let (server, _) = tributary_e2e::platform::start_platform_configured(database, |config| {
            config.behind_proxy = true;
        });
        let (cache, metadata) =
            get_forged(&server.base_url, "/.well-known/oauth-authorization-server").await;
        assert_eq!(cache, "private, no-store");
        assert_eq!(
            metadata["issuer"], "https://evil.example",
            "what the proxy forwarded"
        );
        server.stop().await;
    }
}

#[actix_web::test]
async fn no_client_authentication_is_401_invalid_client_at_the_token_and_revocation_endpoints() {
    on_every_backend(|server| async move {
        let token_form = [
            ("grant_type", "refresh_token"),
            ("refresh_token", "trt_made-up"),
        ];
        let revoke_form = [("token", "tat_made-up")];
        let requests = [
            Client::new()
                .post(server.url("/api/platform/oauth/token"))
                .form(&token_form),
            Client::new()
                .post(server.url("/api/platform/oauth/revoke"))
                .form(&revoke_form),
            // Another scheme is no client authentication either.
            Client::new()
                .post(server.url("/api/platform/oauth/revoke"))
                .bearer_auth("tat_made-up")
                .form(&revoke_form),
            Client::new()
                .post(server.url("/api/platform/oauth/token"))
                .json(
                    &serde_json::json!({"grant_type": "refresh_token", "refresh_token": "trt_x"}),
                ),
        ];
        for request in requests {
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
            assert_eq!(
                response.headers()["www-authenticate"],
                r#"Basic realm="tributary", charset="UTF-8""#
            );
            assert_eq!(response.headers()["cache-control"], "no-store");
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["error"], "invalid_client", "{body}");
        }
        // Wrong Basic credentials at the revocation endpoint: the same.
        let mut impostor = server.app_a.clone();
        impostor.secret = Some("tcs_wrongwrongwrongwrongwrongwrongwrongwrongwro".into());
        let response = Client::new()
            .post(server.url("/api/platform/oauth/revoke"))
            .basic_auth(impostor.client_id(), Some(impostor.secret()))
            .form(&revoke_form)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert!(response.headers().contains_key("www-authenticate"));
        server
    })
    .await;
}
