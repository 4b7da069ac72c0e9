//! `tributary developers`: who may sign in to the developer dashboard.

use crate::cli::DevelopersCommand;
use crate::terminal::shown;
use tributary_domain::clock::Clock;
use tributary_domain::email::normalize_email;
use tributary_storage::Database;
use tributary_storage::developers;

pub fn run(db: &Database, clock: &dyn Clock, command: DevelopersCommand) -> anyhow::Result<()> {
    let conn = &mut *db.conn()?;
    match command {
        DevelopersCommand::Add { email } => {
            let email = normalize_email(&email)?;
            let (developer, made) = developers::add(conn, &email, clock.now().naive_utc())?;
            if made {
                println!(
                    "Added developer {}: they sign in at /developers on platform-api with a code mailed to that address.",
                    shown(&developer.email)
                );
            } else {
                println!("{} is already a developer.", shown(&developer.email));
            }
        }
        DevelopersCommand::Remove { email } => {
            let email = normalize_email(&email)?;
            let Some(developer) = developers::find_by_email(conn, &email)? else {
                anyhow::bail!("{} is not a developer", shown(&email));
            };
            let apps = developers::apps_of(conn, developer.id)?;
            if !apps.is_empty() {
                let names: Vec<String> = apps.iter().map(|a| shown(&a.name).to_string()).collect();
                anyhow::bail!(
                    "{} owns {} app(s) ({}): they delete them in the developer dashboard first, so no app is left without an owner",
                    shown(&developer.email),
                    apps.len(),
                    names.join(", ")
                );
            }
            developers::remove(conn, developer.id)?;
            println!(
                "Removed developer {}: they can no longer sign in, and their sessions have ended.",
                shown(&developer.email)
            );
        }
        DevelopersCommand::List => {
            println!(
                "{:<40}  {:>4}  {:<16}  LAST SIGN-IN (UTC)",
                "EMAIL", "APPS", "ADDED (UTC)"
            );
            for developer in developers::list(conn)? {
                let apps = developers::apps_of(conn, developer.id)?.len();
                println!(
                    "{:<40}  {:>4}  {:<16}  {}",
                    shown(&developer.email),
                    apps,
                    developer.created_at.format("%Y-%m-%d %H:%M"),
                    developer.last_signed_in_at.map_or_else(
                        || "never".to_owned(),
                        |t| t.format("%Y-%m-%d %H:%M").to_string()
                    )
                );
            }
        }
    }
    Ok(())
}
