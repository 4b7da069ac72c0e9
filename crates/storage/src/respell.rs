//! E-mail addresses stored before their spelling became one per address
//! (IDNA for the domain, NFC for the local part: docs/platform.md, "E-mail
//! addresses") are respelled once, when the migration that marks the change
//! is applied, so that a person whose address has a non-ASCII domain still
//! finds their account under the new spelling. An address whose new
//! spelling another account already has is left as it was (two accounts
//! are never merged) and counted.

use crate::StorageResult;
use crate::connection::AnyConnection;
use crate::schema::{developers, users};
use diesel::prelude::*;
use tributary_domain::email::normalize_email;

/// The migration whose application runs [`respell_emails`].
pub const MIGRATION: &str = "20261206000019";

/// What a respelling did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Respelled {
    pub changed: usize,
    /// Left as they were: the new spelling was taken, or is no address.
    pub left: usize,
}

/// Respells every user's and developer's address with the domain's
/// normaliser.
pub fn respell_emails(conn: &mut AnyConnection) -> StorageResult<Respelled> {
    let mut done = Respelled::default();
    let stored: Vec<(i64, String)> = users::table.select((users::id, users::email)).load(conn)?;
    respell_rows(stored, &mut done, |id, new| {
        diesel::update(users::table.filter(users::id.eq(id)))
            .set(users::email.eq(new))
            .execute(conn)
    })?;
    let stored: Vec<(i64, String)> = developers::table
        .select((developers::id, developers::email))
        .load(conn)?;
    respell_rows(stored, &mut done, |id, new| {
        diesel::update(developers::table.filter(developers::id.eq(id)))
            .set(developers::email.eq(new))
            .execute(conn)
    })?;
    Ok(done)
}

/// Stores each row's new spelling where it differs, through `store`.
fn respell_rows(
    rows: Vec<(i64, String)>,
    done: &mut Respelled,
    mut store: impl FnMut(i64, &str) -> QueryResult<usize>,
) -> StorageResult<()> {
    for (id, email) in rows {
        let Ok(new) = normalize_email(&email) else {
            done.left += 1;
            continue;
        };
        if new == email {
            continue;
        }
        // A unique index refuses a spelling another account of the same
        // app (or another Personal user, or developer) has.
        match store(id, &new) {
            Ok(_) => done.changed += 1,
            Err(diesel::result::Error::DatabaseError(
                diesel::result::DatabaseErrorKind::UniqueViolation,
                _,
            )) => done.left += 1,
            Err(err) => return Err(err.into()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::on_every_backend;
    use crate::{developers as developer_rows, users as user_rows};

    fn now() -> chrono::NaiveDateTime {
        chrono::DateTime::from_timestamp(1_790_000_000, 0)
            .expect("a time")
            .naive_utc()
    }

    fn email_of(conn: &mut AnyConnection, id: tributary_domain::ids::UserId) -> String {
        users::table
            .filter(users::id.eq(id.get()))
            .select(users::email)
            .first(conn)
            .expect("the user")
    }

    #[test]
    fn addresses_stored_before_take_their_one_spelling_and_no_accounts_merge() {
        on_every_backend(|db| {
            let conn = &mut *db.conn().expect("a connection");
            // As earlier versions stored them: lower-cased, nothing more.
            let ana = user_rows::create_personal_user(conn, "ana@exämple.com", now())
                .expect("ana")
                .id;
            let bo = user_rows::create_personal_user(conn, "bo@example.com", now())
                .expect("bo")
                .id;
            let cy = user_rows::create_personal_user(conn, "cy@xn--exmple-cua.com", now())
                .expect("cy")
                .id;
            let cy_again = user_rows::create_personal_user(conn, "cy@exämple.com", now())
                .expect("cy's other spelling")
                .id;
            // `é` as `e` and a combining accent.
            let zoe = user_rows::create_personal_user(conn, "zoe\u{301}@example.com", now())
                .expect("zoé")
                .id;
            developer_rows::add(conn, "dev@exämple.com", now()).expect("a developer");

            let done = respell_emails(conn).expect("respelled");
            assert_eq!(
                done,
                Respelled {
                    changed: 3,
                    left: 1
                }
            );
            assert_eq!(email_of(conn, ana), "ana@xn--exmple-cua.com");
            assert_eq!(email_of(conn, bo), "bo@example.com");
            assert_eq!(email_of(conn, cy), "cy@xn--exmple-cua.com");
            assert_eq!(email_of(conn, cy_again), "cy@exämple.com", "never merged");
            assert_eq!(email_of(conn, zoe), "zo\u{e9}@example.com");
            assert!(
                developer_rows::find_by_email(conn, "dev@xn--exmple-cua.com")
                    .expect("a lookup")
                    .is_some()
            );
            assert_eq!(
                respell_emails(conn).expect("again"),
                Respelled {
                    changed: 0,
                    left: 1
                }
            );
        });
    }
}
