//! Exact money. Amounts, prices, quantities and values are [`Decimal`]s end to
//! end; they are stored as canonical decimal text and rendered in JSON as
//! numbers carrying exactly the digits they were given (`-0.10` stays `-0.10`).

pub use rust_decimal::Decimal;
use std::str::FromStr;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not an exact decimal number: {reason}")]
pub struct DecimalParseError {
    pub text: String,
    pub reason: String,
}

/// Parses decimal text without rounding: a value with more digits than a
/// [`Decimal`] holds (28 significant digits) is an error, never a rounded value.
pub fn parse_decimal(text: &str) -> Result<Decimal, DecimalParseError> {
    let trimmed = text.trim();
    Decimal::from_str_exact(trimmed)
        .or_else(|_| {
            Decimal::from_str(trimmed).and_then(|d| {
                // `from_str_exact` rejects some spellings that `from_str` reads
                // exactly (e.g. a leading `+`); accept those only when nothing was
                // rounded away.
                if d.to_string().trim_start_matches('-') == trimmed.trim_start_matches(['+', '-']) {
                    Ok(d)
                } else {
                    Err(rust_decimal::Error::Underflow)
                }
            })
        })
        .map_err(|err| DecimalParseError {
            text: text.to_owned(),
            reason: err.to_string(),
        })
}

/// Serde helpers that write a [`Decimal`] as a JSON number with its exact
/// digits (requires serde_json's `arbitrary_precision`, enabled workspace-wide).
pub mod json {
    pub use rust_decimal::serde::arbitrary_precision::serialize;
    pub use rust_decimal::serde::arbitrary_precision_option::serialize as serialize_option;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_every_digit_and_the_scale() {
        for text in ["12345678901234.56789", "-0.10", "0.1", "0", "-1650.00"] {
            assert_eq!(parse_decimal(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn rejects_what_it_cannot_hold_exactly() {
        assert!(parse_decimal("1.00000000000000000000000000001").is_err());
        assert!(parse_decimal("abc").is_err());
        assert!(parse_decimal("").is_err());
        assert!(parse_decimal("1e5").is_err());
    }

    #[test]
    fn json_numbers_carry_exact_digits() {
        #[derive(serde::Serialize)]
        struct Amount {
            #[serde(serialize_with = "json::serialize")]
            amount: Decimal,
        }
        let text = serde_json::to_string(&Amount {
            amount: parse_decimal("-0.10").unwrap(),
        })
        .unwrap();
        assert_eq!(text, r#"{"amount":-0.10}"#);
    }
}
