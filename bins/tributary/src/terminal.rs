//! What the CLI prints that came from someone else (a name a user typed,
//! an address, a bank's or a statement file's text) goes through
//! [`shown`]: a control character would drive the operator's terminal
//! (ESC starts colour and cursor sequences, CR rewrites the line) and a
//! bidirectional formatting character would reorder what follows it. New
//! names cannot hold them (`tributary_domain::text::check_name`), but rows
//! stored before that rule, and text from providers and files, still can
//! (docs/operations.md, "Names and terminals").

use std::borrow::Cow;
use tributary_domain::text::{MAX_NAME_CHARS, check_name, is_refused_in_name};

/// `text` with every control and bidirectional formatting character
/// written as its escape (`\u{1b}`), everything else as it is.
pub fn shown(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_refused_in_name) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| {
                if is_refused_in_name(c) {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// `--name`, checked by the rule every surface that sets a name follows.
/// (Not a clap value parser: clap's refusal would print the name raw.)
pub fn name(raw: &str) -> anyhow::Result<String> {
    check_name(raw, MAX_NAME_CHARS)
        .map(str::to_owned)
        .map_err(|why| anyhow::anyhow!("--name: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_and_bidi_characters_are_shown_escaped() {
        assert_eq!(shown("Budget ✓ Ünï"), "Budget ✓ Ünï");
        assert!(matches!(shown("plain"), Cow::Borrowed(_)));
        assert_eq!(shown("red\u{1b}[31m"), "red\\u{1b}[31m");
        assert_eq!(shown("a\r\nb\tc"), "a\\u{d}\\u{a}b\\u{9}c");
        assert_eq!(shown("abc\u{202e}gpj.exe"), "abc\\u{202e}gpj.exe");
        assert_eq!(shown("\u{9b}2J\u{7f}"), "\\u{9b}2J\\u{7f}");
    }

    #[test]
    fn names_follow_the_shared_rule() {
        assert_eq!(name(" laptop ").unwrap(), "laptop");
        let refused = name("evil\u{1b}[2J").unwrap_err().to_string();
        assert!(
            refused.starts_with("--name: ") && refused.contains("U+001B"),
            "{refused}"
        );
        assert!(name("").is_err());
    }
}
