//! Key rotation through the CLI, and the key being required on PostgreSQL.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use std::process::{Command, Output};
use tributary_auth::keyring::{Keyring, generate_key};
use tributary_domain::secrets::credentials_context;
use tributary_domain::snapshot::SnapshotInstitution;
use tributary_storage::connections::{self, NewConnection};
use tributary_storage::testing::TestDatabase;
use tributary_storage::{Backend, users};

fn tributary(database_url: &str, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tributary"));
    command
        .args(args)
        .env("TRIBUTARY_DATABASE_URL", database_url)
        .env_remove("TRIBUTARY_SECRET_KEY")
        .env_remove("TRIBUTARY_SECRET_KEY_PREVIOUS");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

#[test]
fn rotation_reseals_every_credential_with_the_new_key() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let db = database.db();
        let (old_key, new_key) = (generate_key(), generate_key());
        let now = chrono::Utc::now().naive_utc();
        let user =
            users::create_personal_user(&mut db.conn().unwrap(), "keys@example.com", now).unwrap();
        let context =
            credentials_context(user.id, tributary_providers::simplefin::PROVIDER.as_str());
        let secret = b"https://user:password@bridge.example/simplefin";
        let sealed = Keyring::new(&old_key, &[]).unwrap().seal(secret, &context);
        let institution = SnapshotInstitution {
            provider_institution_id: "b".into(),
            name: "Bridge".into(),
            logo_url: None,
        };
        let connection = connections::create_connection(
            &mut db.conn().unwrap(),
            &NewConnection {
                user_id: user.id,
                provider: tributary_providers::simplefin::PROVIDER,
                institution: &institution,
                settings: &serde_json::json!({}),
                sealed_credentials: Some(&sealed),
                consent_expires_at: None,
                now,
            },
        )
        .unwrap();

        let rotate =
            |keys: &[(&str, &str)]| tributary(&database.url(), keys, &["secrets", "rotate"]);
        let first = rotate(&[
            ("TRIBUTARY_SECRET_KEY", &new_key),
            ("TRIBUTARY_SECRET_KEY_PREVIOUS", &old_key),
        ]);
        assert!(
            first.status.success(),
            "{}",
            String::from_utf8_lossy(&first.stderr)
        );
        assert!(String::from_utf8_lossy(&first.stdout).contains("Re-sealed 1 credential(s)"));

        let stored = connections::sealed_credentials(&mut db.conn().unwrap(), connection.id)
            .unwrap()
            .unwrap();
        assert_eq!(
            Keyring::new(&new_key, &[])
                .unwrap()
                .open(&stored, &context)
                .unwrap(),
            secret
        );
        assert!(
            Keyring::new(&old_key, &[])
                .unwrap()
                .open(&stored, &context)
                .is_err(),
            "the old key no longer opens it"
        );

        let again = rotate(&[("TRIBUTARY_SECRET_KEY", &new_key)]);
        assert!(again.status.success());
        assert!(
            String::from_utf8_lossy(&again.stdout)
                .contains("Re-sealed 0 credential(s) with the current key; 1 already used it")
        );

        // Without the old key, a value sealed with it is reported, not lost.
        let stranger = generate_key();
        let failed = rotate(&[
            ("TRIBUTARY_SECRET_KEY", &stranger),
            ("TRIBUTARY_SECRET_KEY_PREVIOUS", &generate_key()),
        ]);
        assert!(!failed.status.success());
        assert!(
            String::from_utf8_lossy(&failed.stderr)
                .contains(&format!("connection {}", connection.id))
        );
        let unchanged = connections::sealed_credentials(&mut db.conn().unwrap(), connection.id)
            .unwrap()
            .unwrap();
        assert_eq!(unchanged, stored);
    }
}

#[test]
fn postgres_requires_a_secret_key() {
    let Some(database) = TestDatabase::postgres() else {
        return;
    };
    assert_eq!(database.backend(), Backend::Postgres);
    let output = tributary(&database.url(), &[], &["sync", "--all"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("TRIBUTARY_SECRET_KEY is required with PostgreSQL"),
        "{stderr}"
    );
}
