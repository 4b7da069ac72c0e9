//! E-mail addresses as user identities: one spelling per address, so that
//! two spellings of it are one user (docs/platform.md, "E-mail
//! addresses"). Trimmed; the domain in its ASCII form (IDNA: `exämple.com`
//! is `xn--exmple-cua.com`, as DNS and SMTP see it); the part before @ in
//! Unicode's composed form (NFC: `é` typed as one character or as `e` and
//! a combining accent is one `é`); all lower-cased. Then checked for the
//! shape `local@domain.tld` (deliverability is the sign-in flow's job).

use crate::text::{code_point, is_bidi_control};
use icu_normalizer::ComposingNormalizerBorrowed;
use idna::AsciiDenyList;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{}` is not an e-mail address: {reason}", address.escape_debug())]
pub struct EmailError {
    /// As given (shown escaped: it may hold control characters).
    pub address: String,
    pub reason: String,
}

pub fn normalize_email(raw: &str) -> Result<String, EmailError> {
    let fail = |reason: &str| {
        Err(EmailError {
            address: raw.to_owned(),
            reason: reason.to_owned(),
        })
    };
    let trimmed = raw.trim();
    if let Some(c) = trimmed.chars().find(|&c| is_bidi_control(c)) {
        return fail(&format!(
            "contains a bidirectional formatting character ({})",
            code_point(c)
        ));
    }
    if trimmed.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return fail("contains spaces or control characters");
    }
    let Some((local, domain)) = trimmed.rsplit_once('@') else {
        return fail("has no @");
    };
    let local = ComposingNormalizerBorrowed::new_nfc()
        .normalize(local)
        .to_lowercase();
    if local.is_empty() || local.len() > 64 || local.contains('@') {
        return fail("the part before @ must be 1 to 64 characters without @");
    }
    // UTS 46 with the STD3 rules: letters, digits and hyphens once mapped
    // (lower-cased, NFC) and Punycode-encoded.
    let Ok(domain) = idna::domain_to_ascii_cow(domain.as_bytes(), AsciiDenyList::STD3) else {
        return fail("the domain must look like example.com");
    };
    let labels: Vec<&str> = domain.split('.').collect();
    if labels.len() < 2
        || labels.iter().any(|l| {
            l.is_empty()
                || l.starts_with('-')
                || l.ends_with('-')
                || !l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
    {
        return fail("the domain must look like example.com");
    }
    let address = format!("{local}@{domain}");
    if address.len() > 254 {
        return fail("longer than 254 characters");
    }
    Ok(address)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_and_normalizes_ordinary_addresses() {
        assert_eq!(
            normalize_email("  Ada.Lovelace+bank@Example.COM ").unwrap(),
            "ada.lovelace+bank@example.com"
        );
        assert!(normalize_email("demo@tributary.local").is_ok());
    }

    #[test]
    fn rejects_what_is_not_an_address() {
        for bad in [
            "",
            "plain",
            "@example.com",
            "a@",
            "a@b",
            "a@@b.com",
            "a b@c.com",
            "a@-x.com",
            "a@x..com",
            "a@under_score.com",
        ] {
            assert!(normalize_email(bad).is_err(), "{bad}");
        }
    }

    /// Look-alike spellings of one address are one address: the domain in
    /// Unicode or Punycode, upper or lower case, the local part composed
    /// or decomposed.
    #[test]
    fn spellings_of_one_address_are_one_address() {
        let one = normalize_email("ana@xn--exmple-cua.com").unwrap();
        assert_eq!(one, "ana@xn--exmple-cua.com");
        for spelling in [
            "ana@exämple.com",
            "ANA@EXÄMPLE.COM",
            "ana@exa\u{308}mple.com",
            "ana@XN--EXMPLE-CUA.com",
        ] {
            assert_eq!(normalize_email(spelling).unwrap(), one, "{spelling}");
        }
        assert_eq!(
            normalize_email("jose\u{301}@example.com").unwrap(),
            normalize_email("jos\u{e9}@example.com").unwrap()
        );
        assert_eq!(
            normalize_email("JOS\u{c9}@example.com").unwrap(),
            "jos\u{e9}@example.com"
        );
    }

    #[test]
    fn refuses_bidirectional_formatting_and_control_characters() {
        for bad in [
            "ana\u{202e}moc.elpmaxe@example.com",
            "ana@exa\u{2066}mple.com",
            "ana\u{0}@example.com",
            "ana\u{1b}[31m@example.com",
        ] {
            let err = normalize_email(bad).unwrap_err();
            // The message shows the address escaped, never the raw character.
            assert!(
                !err.to_string()
                    .chars()
                    .any(|c| c.is_control() || is_bidi_control(c)),
                "{err}"
            );
        }
        assert!(
            normalize_email("ana\u{202e}@example.com")
                .unwrap_err()
                .to_string()
                .contains("U+202E")
        );
    }
}
