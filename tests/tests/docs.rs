//! The documents keep their promises: every error code docs/errors.md and
//! docs/platform.md list is asserted by some test, so a code no test reaches
//! (or one that was renamed) fails here until the test or the list is fixed.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the repository")
        .to_path_buf()
}

/// The codes in the first two columns of the documents' tables: `UPPER_CASE`
/// API codes and RFC 6749's `lower_case` ones.
fn documented_codes() -> Vec<String> {
    let mut codes = Vec::new();
    for doc in ["docs/errors.md", "docs/platform.md"] {
        let text = std::fs::read_to_string(root().join(doc)).expect("the document");
        for line in text.lines().filter(|l| l.starts_with('|')) {
            for cell in line.split('|').skip(1).take(2) {
                for (n, part) in cell.split('`').enumerate() {
                    let is_code = n % 2 == 1
                        && part.len() > 4
                        && part.contains('_')
                        && !part.ends_with('_')
                        && part.chars().all(|c| c.is_ascii_alphabetic() || c == '_')
                        && (part == part.to_uppercase() || part == part.to_lowercase());
                    if is_code && !codes.iter().any(|c| c == part) {
                        codes.push(part.to_owned());
                    }
                }
            }
        }
    }
    codes
}

/// The text of every test: test files, and the test modules of sources.
fn test_sources() -> String {
    let mut text = String::new();
    let mut pending = vec![
        root().join("crates"),
        root().join("bins"),
        root().join("tests"),
    ];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("a folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                if !path.ends_with("target") {
                    pending.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let source = std::fs::read_to_string(&path).expect("a source file");
            let in_tests_folder = path.components().any(|c| c.as_os_str() == "tests");
            if in_tests_folder {
                text.push_str(&source);
            } else if let Some(start) = source.find("#[cfg(test)]") {
                text.push_str(&source[start..]);
            }
        }
    }
    text
}

#[test]
fn every_documented_error_code_is_asserted_by_a_test() {
    let codes = documented_codes();
    assert!(codes.len() >= 40, "the tables were read: {codes:?}");
    let tests = test_sources();
    // This file names no code, so it cannot count as the asserting test.
    let untested: Vec<&String> = codes
        .iter()
        .filter(|code| !tests.contains(&format!("\"{code}\"")))
        .collect();
    assert!(
        untested.is_empty(),
        "documented codes no test asserts: {untested:?} (test them, or remove them from the docs)"
    );
}
