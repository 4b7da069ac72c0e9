//! Opening the configured database.

use crate::config::Config;
use anyhow::Context as _;
use tributary_storage::{Backend, Database};

/// Opens the pool. The embedded SQLite database is migrated automatically;
/// a PostgreSQL database with pending migrations is refused, so that several
/// instances never race to migrate a shared database: run `tributary migrate`.
pub fn open_database(config: &Config) -> anyhow::Result<Database> {
    let db = Database::connect(&config.database_url, &config.pool)
        .with_context(|| format!("opening the database {}", config.database_url))?;
    match db.backend() {
        Backend::Sqlite => {
            for name in db.migrate()? {
                log::info!("applied migration {name}");
            }
        }
        Backend::Postgres => {
            if db.has_pending_migrations()? {
                anyhow::bail!(
                    "the PostgreSQL database {} has pending migrations: run `tributary migrate` with the same TRIBUTARY_DATABASE_URL first",
                    config.database_url
                );
            }
        }
    }
    Ok(db)
}
