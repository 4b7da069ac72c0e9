//! How amounts read on the pages: the currency's symbol and minor units
//! (ISO 4217, from `rusty-money`'s table), digits grouped and the decimal
//! mark placed as the reader's language writes them (from the browser's
//! `Accept-Language`), and a negative amount with a real minus sign and a
//! class the stylesheet colours. The exact stored digits stay on the
//! element (`data-amount`, and the tooltip) for anyone who needs them.
//!
//! Only the display changes: the API and the SimpleFIN and MCP servers
//! answer exact decimal strings as before (docs/wire-format.md).

use actix_web::HttpRequest;
use actix_web::http::header::{AcceptLanguage, Header as _, Preference};
use rusty_money::{Formatter, Money, Params, Position, iso};
use std::collections::BTreeSet;
use tributary_domain::money::Decimal;

/// How a language writes numbers: the digit group separator, the decimal
/// mark, whether the currency symbol comes first, and the grouping (three
/// digits, or India's 3-2-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumberStyle {
    group: char,
    decimal: char,
    symbol_first: bool,
    grouping: &'static [usize],
}

const THOUSANDS: &[usize] = &[3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3];
const LAKHS: &[usize] = &[3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2];
/// The narrow no-break space French and the Nordic languages group with.
const NARROW_SPACE: char = '\u{202F}';

impl NumberStyle {
    /// English as written in the US and the UK: `$1,234.56`.
    pub const ENGLISH: NumberStyle = NumberStyle {
        group: ',',
        decimal: '.',
        symbol_first: true,
        grouping: THOUSANDS,
    };

    /// The style of a language tag's language (and, for India, region).
    /// Languages not listed read as English: the digits stay unambiguous
    /// because every amount carries its symbol or code.
    pub fn of_language(language: &str, region: Option<&str>) -> NumberStyle {
        let comma_decimal = |group| NumberStyle {
            group,
            decimal: ',',
            symbol_first: false,
            grouping: THOUSANDS,
        };
        match language.to_ascii_lowercase().as_str() {
            "en" | "hi" if region == Some("IN") || language == "hi" => NumberStyle {
                grouping: LAKHS,
                ..NumberStyle::ENGLISH
            },
            "de" if region == Some("CH") => NumberStyle {
                group: '\u{2019}',
                ..NumberStyle::ENGLISH
            },
            "de" | "es" | "it" | "pt" | "nl" | "da" | "id" | "tr" | "el" | "ro" | "hr" | "sl"
            | "sr" | "is" => comma_decimal('.'),
            "fr" | "sv" | "nb" | "nn" | "no" | "fi" | "pl" | "cs" | "sk" | "ru" | "uk" | "hu"
            | "bg" | "lt" | "lv" | "et" => comma_decimal(NARROW_SPACE),
            _ => NumberStyle::ENGLISH,
        }
    }

    /// The style of the reader's most preferred language.
    pub fn of_request(req: &HttpRequest) -> NumberStyle {
        match AcceptLanguage::parse(req).map(|header| header.preference()) {
            Ok(Preference::Specific(tag)) => {
                NumberStyle::of_language(tag.primary_language(), tag.region())
            }
            _ => NumberStyle::ENGLISH,
        }
    }
}

/// An amount as a page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// `−$1,234.56`, `1.234,56 €`, `12.50 XYZ` (a code no table knows).
    pub text: String,
    pub negative: bool,
    /// The stored digits, for tooltips and tests.
    pub exact: String,
    pub currency: String,
}

/// The amount as an HTML element: the text a person reads, the exact
/// digits and code in the tooltip and in data attributes. Templates write
/// it with `|safe`; everything inside is escaped here.
impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let escape = super::page::escape_html;
        write!(
            f,
            r#"<span class="money{negative}" data-amount="{exact}" data-currency="{currency}" title="{exact} {currency}">{text}</span>"#,
            negative = if self.negative { " negative" } else { "" },
            exact = escape(&self.exact),
            currency = escape(&self.currency),
            text = escape(&self.text),
        )
    }
}

/// Formats the amounts of one page. A symbol several currencies on the
/// page share (`$` for USD and CAD, `kr` for SEK and NOK) gives way to the
/// ISO code for all of them, so that no two currencies read alike.
#[derive(Debug, Clone)]
pub struct MoneyFormat {
    style: NumberStyle,
    coded: BTreeSet<String>,
}

impl MoneyFormat {
    /// For a page showing amounts in `currencies`.
    pub fn new<'a>(style: NumberStyle, currencies: impl IntoIterator<Item = &'a str>) -> Self {
        let mut by_symbol: std::collections::BTreeMap<&'static str, BTreeSet<&'a str>> =
            Default::default();
        for code in currencies {
            if let Some(currency) = iso::find(code) {
                by_symbol.entry(currency.symbol).or_default().insert(code);
            }
        }
        let coded = by_symbol
            .into_values()
            .filter(|codes| codes.len() > 1)
            .flatten()
            .map(str::to_owned)
            .collect();
        MoneyFormat { style, coded }
    }

    /// `value` at the currency's minor units.
    pub fn amount(&self, value: Decimal, currency: &str) -> Shown {
        self.shown(value, currency, None)
    }

    /// `value` rounded to whole units, for chart axes.
    pub fn whole(&self, value: Decimal, currency: &str) -> Shown {
        self.shown(value, currency, Some(0))
    }

    /// A change: `+$120.00` or `−$75.00`.
    pub fn change(&self, value: Decimal, currency: &str) -> Shown {
        let mut shown = self.amount(value, currency);
        if !shown.negative && !value.is_zero() {
            shown.text.insert(0, '+');
        }
        shown
    }

    fn shown(&self, value: Decimal, currency: &str, places: Option<u32>) -> Shown {
        let exact = value.to_string();
        let negative = value.is_sign_negative() && !value.is_zero();
        let known = iso::find(currency);
        let places = places.unwrap_or_else(|| known.map_or(2, |c| c.exponent));
        let magnitude = value.abs().round_dp(places);
        let symbol = known
            .filter(|_| !self.coded.contains(currency))
            .map(|c| (c.symbol, c.symbol_first));
        let (label, first) = match symbol {
            Some((symbol, currency_first)) => (symbol, self.style.symbol_first && currency_first),
            // No symbol, or one shared on this page: the code, after the
            // digits in every style.
            None => ("", false),
        };
        let positions: &[Position] = match (label.is_empty(), first) {
            (true, _) => &[Position::Amount],
            (false, true) => &[Position::Symbol, Position::Amount],
            (false, false) => &[Position::Amount, Position::Space, Position::Symbol],
        };
        let currency_for_format = known.unwrap_or(iso::USD);
        let digits = Formatter::money(
            &Money::from_decimal(magnitude, currency_for_format),
            Params {
                digit_separator: self.style.group,
                exponent_separator: self.style.decimal,
                separator_pattern: self.style.grouping,
                positions,
                rounding: Some(places),
                symbol: Some(label),
                code: None,
            },
        );
        // The code is the stored text (any three letters a file gave), not
        // the table's: appended here rather than through the formatter.
        let mut text = if label.is_empty() {
            format!("{digits}\u{A0}{currency}")
        } else {
            digits
        };
        if negative {
            text.insert(0, '\u{2212}');
        }
        Shown {
            text,
            negative,
            exact,
            currency: currency.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_domain::money::parse_decimal;

    fn dec(text: &str) -> Decimal {
        parse_decimal(text).unwrap()
    }

    fn english(currencies: &[&str]) -> MoneyFormat {
        MoneyFormat::new(NumberStyle::ENGLISH, currencies.iter().copied())
    }

    #[test]
    fn symbols_minor_units_and_grouping() {
        let money = english(&["USD", "EUR", "JPY"]);
        assert_eq!(money.amount(dec("111684.37"), "USD").text, "$111,684.37");
        assert_eq!(money.amount(dec("8.850"), "EUR").text, "€8.85");
        assert_eq!(money.amount(dec("1234567"), "JPY").text, "¥1,234,567");
        assert_eq!(money.amount(dec("5"), "USD").text, "$5.00");
        let minus = money.amount(dec("-75"), "USD");
        assert_eq!(minus.text, "\u{2212}$75.00");
        assert!(minus.negative);
        assert_eq!(minus.exact, "-75");
        assert_eq!(
            minus.to_string(),
            "<span class=\"money negative\" data-amount=\"-75\" data-currency=\"USD\" title=\"-75 USD\">\u{2212}$75.00</span>"
        );
        assert_eq!(money.change(dec("120"), "USD").text, "+$120.00");
        assert_eq!(money.whole(dec("1999.50"), "USD").text, "$2,000");
    }

    #[test]
    fn the_readers_language_places_marks_and_symbol() {
        let german = MoneyFormat::new(NumberStyle::of_language("de", Some("DE")), ["EUR"]);
        assert_eq!(german.amount(dec("1234.5"), "EUR").text, "1.234,50 €");
        let french = MoneyFormat::new(NumberStyle::of_language("fr", None), ["EUR"]);
        assert_eq!(
            french.amount(dec("-1234.5"), "EUR").text,
            "\u{2212}1\u{202F}234,50 €"
        );
        let indian = MoneyFormat::new(NumberStyle::of_language("en", Some("IN")), ["INR"]);
        assert_eq!(indian.amount(dec("1234567.8"), "INR").text, "₹12,34,567.80");
    }

    #[test]
    fn a_shared_symbol_or_an_unknown_code_reads_as_the_code() {
        let money = english(&["USD", "CAD", "EUR"]);
        assert_eq!(money.amount(dec("10"), "USD").text, "10.00\u{A0}USD");
        assert_eq!(money.amount(dec("10"), "CAD").text, "10.00\u{A0}CAD");
        assert_eq!(money.amount(dec("10"), "EUR").text, "€10.00");
        let alone = english(&["CAD"]);
        assert_eq!(alone.amount(dec("10"), "CAD").text, "$10.00");
        assert_eq!(
            alone.amount(dec("-3.5"), "XYZ").text,
            "\u{2212}3.50\u{A0}XYZ"
        );
    }
}
