//! `tributary simplefin`: destinations that read a user's data over
//! SimpleFIN (docs/simplefin.md).

use crate::cli::SimplefinCommand;
use crate::support::{find_user, public_base, when};
use crate::terminal::shown;
use anyhow::bail;
use tributary_app::links::SIMPLEFIN_ROOT;
use tributary_auth::simplefin::{self as access, SETUP_TOKEN_LIFETIME};
use tributary_domain::clock::Clock;
use tributary_storage::{Database, StorageError, simplefin as store};

/// Runs `command`; a setup token without `--url` carries `reachable`, where
/// this configuration's personal-api is reached.
pub fn run(
    db: &Database,
    clock: &dyn Clock,
    command: SimplefinCommand,
    reachable: &str,
) -> anyhow::Result<()> {
    match command {
        SimplefinCommand::Create {
            user,
            name,
            accounts,
            url,
        } => {
            let name = crate::terminal::name(&name)?;
            let user = find_user(db, &user)?;
            let url = url.unwrap_or_else(|| reachable.to_owned());
            let base = public_base(&url)?;
            let scope = (!accounts.is_empty()).then_some(accounts.as_slice());
            let claim_root = format!("{base}{SIMPLEFIN_ROOT}/claim");
            let issued = access::create(
                &mut *db.conn()?,
                user.id,
                &name,
                scope,
                &claim_root,
                clock.now(),
            )?;
            println!(
                "Created SimpleFIN destination {} \"{}\" for {}.",
                issued.record.id,
                shown(&issued.record.name),
                shown(&user.email)
            );
            if let Some(scope) = scope {
                println!("It can read only accounts {scope:?}.");
            }
            println!(
                "Setup token (paste it into the app within {} minutes; it works once):",
                SETUP_TOKEN_LIFETIME.num_minutes()
            );
            println!("{}", issued.setup_token);
            Ok(())
        }
        SimplefinCommand::List { user } => {
            let user = find_user(db, &user)?;
            println!(
                "{:>6}  {:<20}  {:<16}  {:<16}  {:<16}  {:<16}  ACCOUNTS",
                "ID", "NAME", "CREATED (UTC)", "CLAIMED", "LAST USED", "REVOKED"
            );
            for (destination, scope) in store::list_for_user(&mut *db.conn()?, user.id)? {
                let accounts = scope.map_or_else(|| "all".to_owned(), |ids| format!("{ids:?}"));
                println!(
                    "{:>6}  {:<20}  {:<16}  {:<16}  {:<16}  {:<16}  {accounts}",
                    destination.id,
                    shown(&destination.name),
                    when(Some(destination.created_at)),
                    when(destination.claimed_at),
                    when(destination.last_used_at),
                    when(destination.revoked_at)
                );
            }
            Ok(())
        }
        SimplefinCommand::Revoke { id } => {
            match store::revoke(&mut *db.conn()?, id, clock.now().naive_utc()) {
                Ok((destination, true)) => println!(
                    "SimpleFIN destination {} \"{}\" is revoked; its app's requests now answer 403.",
                    destination.id,
                    shown(&destination.name)
                ),
                Ok((destination, false)) => println!(
                    "SimpleFIN destination {} \"{}\" was already revoked ({}); nothing changed.",
                    destination.id,
                    shown(&destination.name),
                    when(destination.revoked_at)
                ),
                Err(StorageError::NotFound) => bail!("no SimpleFIN destination with id {id}"),
                Err(err) => return Err(err.into()),
            }
            Ok(())
        }
    }
}
