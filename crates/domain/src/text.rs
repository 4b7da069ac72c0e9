//! Which characters text from outside may hold (docs/errors.md,
//! `CONTROL_CHARACTER`; docs/operations.md, "Names and terminals").
//!
//! Two rules, both pure:
//!
//! - **Any text a request carries** (a parameter, a form or JSON field,
//!   credentials) holds no C0 control character: PostgreSQL cannot store
//!   NUL in text at all, and the others (ESC above all) only ever serve to
//!   confuse whoever reads the text later. Tab, line feed and carriage
//!   return are text where a person types several lines (a body's field);
//!   everywhere else they are refused too.
//! - **A name** (of an API key, a SimpleFIN destination, an app) is shown
//!   on one line: in lists on pages and in the operator's terminal. It holds
//!   no control character at all (C0, DEL, C1) and no bidirectional
//!   embedding, override or isolate, which would make a name read as
//!   something else than what it is.

use std::fmt;

/// The longest name (of a key, a destination, an app) any surface takes.
pub const MAX_NAME_CHARS: usize = 100;

/// Whether line breaks and tabs are text where a character is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineBreaks {
    /// A field of a request body: tab, LF and CR are accepted.
    Allowed,
    /// A path, a query parameter, a credential: one line, no tab.
    Refused,
}

/// The first C0 control character of `text` that `breaks` does not allow.
pub fn refused_control(text: &str, breaks: LineBreaks) -> Option<char> {
    text.chars().find(|&c| {
        c.is_ascii_control()
            && c != '\u{7f}'
            && !(breaks == LineBreaks::Allowed && matches!(c, '\t' | '\n' | '\r'))
    })
}

/// Unicode's explicit bidirectional formatting characters that reorder the
/// text after them: embeddings and overrides (U+202A–U+202E) and isolates
/// (U+2066–U+2069). `"abc\u{202e}gpj.exe"` shows as `abcexe.jpg`.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A character no name may hold: a control character (C0, DEL, C1) or a
/// bidirectional formatting one.
pub fn is_refused_in_name(c: char) -> bool {
    c.is_control() || is_bidi_control(c)
}

/// Why a name was refused; `Display` completes "Name: …".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameError {
    /// Empty (after trimming) or longer than the surface takes.
    Length { max_chars: usize },
    /// Holds a character a name may not hold.
    Character(char),
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::Length { max_chars } => {
                write!(f, "give a name of 1 to {max_chars} characters")
            }
            NameError::Character(c) => write!(
                f,
                "a name may not hold control or bidirectional formatting characters (it holds {})",
                code_point(*c)
            ),
        }
    }
}

impl std::error::Error for NameError {}

/// `raw` trimmed, when it is a name of 1 to `max_chars` characters
/// without a character [`is_refused_in_name`].
pub fn check_name(raw: &str, max_chars: usize) -> Result<&str, NameError> {
    let name = raw.trim();
    if let Some(c) = name.chars().find(|&c| is_refused_in_name(c)) {
        return Err(NameError::Character(c));
    }
    if name.is_empty() || name.chars().count() > max_chars {
        return Err(NameError::Length { max_chars });
    }
    Ok(name)
}

/// `U+001B`: how messages name a character they refuse (the character
/// itself would do what it was refused for).
pub fn code_point(c: char) -> String {
    format!("U+{:04X}", u32::from(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_text_refuses_c0_controls_and_line_breaks_only_outside_bodies() {
        assert_eq!(refused_control("plain", LineBreaks::Refused), None);
        assert_eq!(refused_control("a\0b", LineBreaks::Allowed), Some('\0'));
        assert_eq!(
            refused_control("\u{1b}[31m", LineBreaks::Allowed),
            Some('\u{1b}')
        );
        assert_eq!(
            refused_control("one\r\ntwo\tthree", LineBreaks::Allowed),
            None
        );
        assert_eq!(refused_control("one\ntwo", LineBreaks::Refused), Some('\n'));
        assert_eq!(
            refused_control("tab\there", LineBreaks::Refused),
            Some('\t')
        );
        // Not C0: DEL, C1 and bidi characters are the name rule's business.
        assert_eq!(
            refused_control("\u{7f}\u{9b}\u{202e}é", LineBreaks::Refused),
            None
        );
    }

    #[test]
    fn names_refuse_every_control_and_bidi_formatting_character() {
        assert_eq!(check_name("  Budget app ", 100), Ok("Budget app"));
        assert_eq!(
            check_name("Ünïcödé 名前 שלום", 100),
            Ok("Ünïcödé 名前 שלום")
        );
        for (raw, refused) in [
            ("red\u{1b}[31m", '\u{1b}'),
            ("two\nlines", '\n'),
            ("carriage\rreturn", '\r'),
            ("tab\tbed", '\t'),
            ("nul\0", '\0'),
            ("del\u{7f}", '\u{7f}'),
            ("csi\u{9b}2J", '\u{9b}'),
            ("abc\u{202e}gpj.exe", '\u{202e}'),
            ("embed\u{202a}", '\u{202a}'),
            ("isolate\u{2066}x\u{2069}", '\u{2066}'),
            ("pop\u{2069}", '\u{2069}'),
        ] {
            assert_eq!(
                check_name(raw, 100),
                Err(NameError::Character(refused)),
                "{raw:?}"
            );
        }
        assert_eq!(
            check_name("   ", 100),
            Err(NameError::Length { max_chars: 100 })
        );
        assert_eq!(
            check_name(&"x".repeat(101), 100),
            Err(NameError::Length { max_chars: 100 })
        );
        assert_eq!(
            NameError::Character('\u{202e}').to_string(),
            "a name may not hold control or bidirectional formatting characters (it holds U+202E)"
        );
    }
}
