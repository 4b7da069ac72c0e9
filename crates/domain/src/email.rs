//! E-mail addresses as user identities: trimmed, lower-cased, and checked
//! for the shape `local@domain.tld` (deliverability is the sign-in flow's job).

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{address}` is not an e-mail address: {reason}")]
pub struct EmailError {
    pub address: String,
    pub reason: &'static str,
}

pub fn normalize_email(raw: &str) -> Result<String, EmailError> {
    let address = raw.trim().to_lowercase();
    let fail = |reason| {
        Err(EmailError {
            address: raw.to_owned(),
            reason,
        })
    };
    if address.len() > 254 {
        return fail("longer than 254 characters");
    }
    if address.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return fail("contains spaces or control characters");
    }
    let Some((local, domain)) = address.rsplit_once('@') else {
        return fail("has no @");
    };
    if local.is_empty() || local.len() > 64 || local.contains('@') {
        return fail("the part before @ must be 1 to 64 characters without @");
    }
    let labels: Vec<&str> = domain.split('.').collect();
    if labels.len() < 2
        || labels.iter().any(|l| {
            l.is_empty()
                || l.starts_with('-')
                || l.ends_with('-')
                || !l.chars().all(|c| c.is_alphanumeric() || c == '-')
        })
    {
        return fail("the domain must look like example.com");
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
        ] {
            assert!(normalize_email(bad).is_err(), "{bad}");
        }
    }
}
