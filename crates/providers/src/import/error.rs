//! Why a reader could not read part of a file, and where: one type for the
//! error that stops a file and for the note that says what was left out,
//! so the sentence a user sees and the one a test asserts come from one
//! place.

use std::fmt;

/// How deep the elements of an XML (camt) or OFX file may nest. Real
/// statements nest about a dozen levels; the limit keeps a crafted file from
/// exhausting a thread's stack (trees are built iteratively, but dropped and
/// searched recursively) while leaving room for any real layout.
pub const MAX_NESTING: usize = 100;

/// Where in a file, in the reader's terms: `byte 120`, `line 14 (:61:)`,
/// `statement 2, entry 5`, `row 7, column 3 (Betrag)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place(String);

impl Place {
    pub fn new(place: impl Into<String>) -> Self {
        Self(place.into())
    }

    /// A part within this place: `statement 2` → `statement 2, entry 5`.
    pub fn then(&self, part: impl fmt::Display) -> Self {
        Self(format!("{}, {part}", self.0))
    }

    pub fn at(&self, reason: Reason) -> ReadError {
        ReadError {
            place: Some(self.clone()),
            reason,
        }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What is wrong at a place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Reason {
    #[error("`{text}` is not a date ({expected})")]
    NotADate { text: String, expected: String },
    #[error("`{text}` is not an amount")]
    NotAnAmount { text: String },
    /// A required element, field or column is absent or empty.
    #[error("no {0}")]
    Missing(&'static str),
    /// A value outside what the standard allows.
    #[error("{element} is `{value}`, not {allowed}")]
    NotAllowed {
        element: &'static str,
        value: String,
        allowed: &'static str,
    },
    /// The file's structure breaks off or does not hold what the format
    /// needs (a tag not closed, no statement element).
    #[error("{0}")]
    Structure(String),
    /// What a CSV profile must say, or says that does not fit the file.
    #[error("{0}")]
    Profile(String),
    #[error(
        "elements nest deeper than {} levels, the most Tributary reads (statements nest about a dozen)",
        MAX_NESTING
    )]
    TooDeep,
    /// The file could not be read from disk, or changed while it was.
    #[error("the file could not be read: {0}")]
    Unavailable(String),
}

/// A reader's error: what is wrong and, where it is known, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    pub place: Option<Place>,
    pub reason: Reason,
}

impl ReadError {
    /// An error of the file as a whole.
    pub fn of_file(reason: Reason) -> Self {
        Self {
            place: None,
            reason,
        }
    }

    /// The note for `what` (a balance, a record) being left out because of
    /// this error while the rest of the file imports.
    pub fn left_out(&self, what: &str) -> String {
        format!("{self}: {what} is left out, the rest is imported")
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.place {
            Some(place) => write!(f, "{place}: {}", self.reason),
            None => write!(f, "{}", self.reason),
        }
    }
}

impl std::error::Error for ReadError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentence_names_the_place_and_the_reason() {
        let statement = Place::new("statement 2");
        let error = statement
            .then("transaction 5")
            .at(Reason::NotAnAmount { text: ".".into() });
        assert_eq!(
            error.to_string(),
            "statement 2, transaction 5: `.` is not an amount"
        );
        assert_eq!(
            error.left_out("the record"),
            "statement 2, transaction 5: `.` is not an amount: the record is left out, the rest is imported"
        );
        assert_eq!(
            ReadError::of_file(Reason::Missing("<OFX> element")).to_string(),
            "no <OFX> element"
        );
    }
}
