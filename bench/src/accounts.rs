//! Accounts the benchmarks fill.

use anyhow::Context as _;
use tributary_domain::access::Viewer;
use tributary_domain::ids::{AccountId, UserId};
use tributary_domain::model::{AccountKind, Provider};
use tributary_domain::snapshot::{ProviderSnapshot, SnapshotAccount, SnapshotInstitution};
use tributary_storage::connections::{self, NewConnection};
use tributary_storage::{Database, read, sync_apply, users};

/// A new user with one empty checking account (a statement connection of
/// its own): the user and the account.
pub(crate) fn empty_account(
    db: &Database,
    email: &str,
    now: chrono::NaiveDateTime,
) -> anyhow::Result<(UserId, AccountId)> {
    let mut conn = db.conn()?;
    let user = users::create_personal_user(&mut conn, email, now)?;
    let institution = SnapshotInstitution {
        provider_institution_id: "bench".into(),
        name: "Bench Bank".into(),
        logo_url: None,
    };
    let connection = connections::unscheduled_connection(
        &mut conn,
        &NewConnection {
            user_id: user.id,
            provider: Provider::CSV,
            institution: &institution,
            settings: &serde_json::json!({}),
            sealed_credentials: None,
            consent_expires_at: None,
            now,
        },
    )?;
    let snapshot = ProviderSnapshot {
        institution,
        accounts: vec![SnapshotAccount {
            balance_history: Vec::new(),
            institution: None,
            provider_account_id: "bench-checking".into(),
            name: "Checking".into(),
            kind: AccountKind::Checking,
            currency: "EUR".into(),
            mask: Some("0042".into()),
            balance: None,
            transactions: Vec::new(),
            holdings: None,
        }],
        notices: Vec::new(),
        pending_match: None,
        complete: false,
    };
    sync_apply::apply_snapshot(&mut conn, connection.id, &snapshot, now)?;
    Ok((user.id, only_account(&mut conn, user.id)?))
}

/// The user's one account.
fn only_account(
    conn: &mut tributary_storage::AnyConnection,
    user: UserId,
) -> anyhow::Result<AccountId> {
    read::list_accounts(conn, &Viewer::whole_user(user))?
        .first()
        .map(|account| account.id)
        .context("the seeded account is missing")
}
