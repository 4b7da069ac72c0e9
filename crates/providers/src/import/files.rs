//! The one way statement files become an import, whichever surface they
//! came through (the API's `POST /imports`, the upload page, `tributary
//! import`): every file of the import is read before anything is stored,
//! the first that cannot be read stops the import and is named, and then
//! [`super::store_into`] stores all of their statements in one transaction.
//! A surface that imports file by file (the command line, which reports
//! each file as it goes) makes each file an import of its own.

use super::csv::CsvProfile;
use super::statement::Statement;
use super::{Format, ImportError, parse_with_profile};

/// A statement file as it arrived: its name (for messages) and its bytes.
#[derive(Debug, Clone)]
pub struct StatementFile {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// How the files are read: their format when the person named it, and a
/// CSV layout they described.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    pub format: Option<Format>,
    pub profile: Option<CsvProfile>,
}

/// A file that does not read: its name and why.
#[derive(Debug)]
pub struct UnreadableFile {
    pub name: String,
    pub reason: ImportError,
}

/// Reads every file, first to last, stopping at the first that does not
/// read. CPU work on up to the upload's size: call it off any async
/// runtime's event loop, and without holding a database connection.
pub fn read_files(
    files: Vec<StatementFile>,
    reading: &Reading,
) -> Result<Vec<Statement>, UnreadableFile> {
    let mut statements = Vec::new();
    for StatementFile { name, bytes } in files {
        match parse_with_profile(&bytes, reading.format, reading.profile.as_ref()) {
            Ok(read) => statements.extend(read),
            Err(reason) => return Err(UnreadableFile { name, reason }),
        }
    }
    Ok(statements)
}
