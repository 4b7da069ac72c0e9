//! A person's own rules (docs/enrichment.md, "Rules"): "a transaction
//! whose text says X (and whose amount, account or merchant is …) has
//! merchant M and/or category C". They outrank everything the tables and
//! the provider say, and a transfer's pairing.
//!
//! Rules are tried oldest first; for each of the merchant and the
//! category, the first matching rule that sets it decides. Matching is
//! as the tables match ([`super::fold`]): any case, accents ignored, whole
//! words.

use super::{Anywhere, Enrichment, Raw, Source, fold, known_merchant};
use crate::money::Decimal;
use crate::taxonomy::Subcategory;
use std::fmt;

/// Rules one person may keep: each is tried on every transaction stored
/// and enriched again, so their number bounds that work.
pub const MAX_RULES: usize = 200;
/// The longest text a rule matches or sets, in characters.
pub const MAX_TEXT: usize = 200;

/// One rule, as written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rule {
    pub when: Conditions,
    pub then: Actions,
}

/// What a transaction must have for a rule to apply: every condition
/// given (at least one).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Conditions {
    /// Words of the bank's text (the provider's merchant or the
    /// description), whole, in order.
    pub text: Option<String>,
    /// The clean merchant the tables found, the whole name.
    pub merchant: Option<String>,
    /// The signed amount (negative: money out) is at least this.
    pub amount_min: Option<Decimal>,
    /// The signed amount is at most this.
    pub amount_max: Option<Decimal>,
    /// Only transactions of this account.
    pub account_id: Option<i64>,
}

/// What a rule sets (at least one).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Actions {
    pub merchant: Option<String>,
    pub subcategory: Option<&'static Subcategory>,
}

/// Why a rule cannot be kept, naming the field (the wire's spelling).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleError {
    /// No condition: the rule would apply to everything.
    NoCondition,
    /// Nothing to set.
    NoAction,
    /// A text with no letter or digit in it.
    Blank(&'static str),
    /// A text longer than [`MAX_TEXT`].
    TooLong(&'static str),
    /// `amountMin` above `amountMax`.
    EmptyRange,
}

impl RuleError {
    /// The field the error is about.
    pub fn field(&self) -> &'static str {
        match self {
            RuleError::NoCondition => "match",
            RuleError::NoAction => "set",
            RuleError::Blank(field) | RuleError::TooLong(field) => field,
            RuleError::EmptyRange => "match.amountMin",
        }
    }
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleError::NoCondition => write!(
                f,
                "`match` needs at least one of text, merchant, amountMin, amountMax, accountId"
            ),
            RuleError::NoAction => write!(f, "`set` needs merchant or subcategory"),
            RuleError::Blank(field) => write!(f, "`{field}` has no letter or digit"),
            RuleError::TooLong(field) => {
                write!(f, "`{field}` is longer than {MAX_TEXT} characters")
            }
            RuleError::EmptyRange => write!(f, "`match.amountMin` is above `match.amountMax`"),
        }
    }
}

impl std::error::Error for RuleError {}

impl Rule {
    /// Whether the rule can be kept: something to match, something to
    /// set, texts that can match, a range that is not empty.
    pub fn check(&self) -> Result<(), RuleError> {
        let when = &self.when;
        if when.text.is_none()
            && when.merchant.is_none()
            && when.amount_min.is_none()
            && when.amount_max.is_none()
            && when.account_id.is_none()
        {
            return Err(RuleError::NoCondition);
        }
        if self.then.merchant.is_none() && self.then.subcategory.is_none() {
            return Err(RuleError::NoAction);
        }
        for (field, text) in [
            ("match.text", &when.text),
            ("match.merchant", &when.merchant),
            ("set.merchant", &self.then.merchant),
        ] {
            let Some(text) = text else { continue };
            if text.chars().count() > MAX_TEXT {
                return Err(RuleError::TooLong(field));
            }
            // Blank as matching reads it: a text that folds to nothing
            // (`*`, or an MT940 field mark such as `?20`) would match
            // every transaction.
            if fold(&[Some(text)]).trim().is_empty() {
                return Err(RuleError::Blank(field));
            }
        }
        if let (Some(min), Some(max)) = (when.amount_min, when.amount_max)
            && min > max
        {
            return Err(RuleError::EmptyRange);
        }
        Ok(())
    }
}

impl Rule {
    /// Its conditions in words, one each (`merchant is "Costco"`).
    pub fn conditions_in_words(&self) -> Vec<String> {
        let when = &self.when;
        let mut words = Vec::new();
        if let Some(merchant) = &when.merchant {
            words.push(format!("merchant is \"{merchant}\""));
        }
        if let Some(text) = &when.text {
            words.push(format!("text has \"{text}\""));
        }
        if let Some(min) = when.amount_min {
            words.push(format!("amount >= {min}"));
        }
        if let Some(max) = when.amount_max {
            words.push(format!("amount <= {max}"));
        }
        if let Some(account) = when.account_id {
            words.push(format!("account {account}"));
        }
        words
    }

    /// What it sets in words, one each (`category Groceries › Supermarkets`).
    pub fn actions_in_words(&self) -> Vec<String> {
        let mut words = Vec::new();
        if let Some(subcategory) = self.then.subcategory {
            words.push(format!(
                "category {} › {}",
                subcategory.category.name(),
                subcategory.name
            ));
        }
        if let Some(merchant) = &self.then.merchant {
            words.push(format!("merchant \"{merchant}\""));
        }
        words
    }
}

/// `when … then …`, as the command line and the dashboard show a rule.
impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "when {} then {}",
            self.conditions_in_words().join(" and "),
            self.actions_in_words().join(", ")
        )
    }
}

/// A person's rules, ready to apply to many transactions.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    prepared: Vec<Prepared>,
}

/// A rule with its texts folded once.
#[derive(Debug, Clone)]
struct Prepared {
    text: Option<String>,
    merchant: Option<String>,
    rule: Rule,
}

impl Rules {
    /// The rules, oldest first.
    pub fn new(rules: impl IntoIterator<Item = Rule>) -> Self {
        let prepared = rules
            .into_iter()
            .map(|rule| Prepared {
                text: rule.when.text.as_deref().map(|t| fold(&[Some(t)])),
                merchant: rule.when.merchant.as_deref().map(|m| fold(&[Some(m)])),
                rule,
            })
            .collect();
        Rules { prepared }
    }

    pub fn is_empty(&self) -> bool {
        self.prepared.is_empty()
    }

    /// `tables`, what the tables made of `raw` (of account `account_id`),
    /// with the person's rules applied over it.
    pub fn apply(&self, account_id: i64, raw: &Raw, tables: Enrichment) -> Enrichment {
        if self.prepared.is_empty() {
            return tables;
        }
        let text = fold(&[raw.merchant, raw.description]);
        let merchant = tables.merchant.as_deref().map(|m| fold(&[Some(m)]));
        let (mut set_merchant, mut set_subcategory) = (None, None);
        for prepared in &self.prepared {
            if set_merchant.is_some() && set_subcategory.is_some() {
                break;
            }
            if !prepared.matches(account_id, raw.amount, &text, merchant.as_deref()) {
                continue;
            }
            let then = &prepared.rule.then;
            set_merchant = set_merchant.or(then.merchant.as_deref());
            set_subcategory = set_subcategory.or(then.subcategory);
        }
        let mut out = tables;
        if let Some(name) = set_merchant {
            out.merchant = Some(name.to_owned());
            // A merchant the table knows brings its category, where the
            // provider's codes did not give a better one.
            if set_subcategory.is_none()
                && matches!(
                    out.source,
                    Source::Merchant | Source::Keyword | Source::Nothing
                )
                && let Some(subcategory) = known_merchant(name, Anywhere::No)
                    .and_then(|m| m.subcategory)
                    .and_then(Subcategory::from_id)
            {
                out.subcategory = subcategory;
                out.source = Source::Merchant;
            }
        }
        if let Some(subcategory) = set_subcategory {
            out.subcategory = subcategory;
            out.source = Source::Rule;
        }
        out
    }
}

impl Prepared {
    fn matches(
        &self,
        account_id: i64,
        amount: Decimal,
        text: &str,
        merchant: Option<&str>,
    ) -> bool {
        let when = &self.rule.when;
        when.account_id.is_none_or(|a| a == account_id)
            && when.amount_min.is_none_or(|min| amount >= min)
            && when.amount_max.is_none_or(|max| amount <= max)
            && self.text.as_deref().is_none_or(|t| text.contains(t))
            && self
                .merchant
                .as_deref()
                .is_none_or(|m| merchant.is_some_and(|found| found == m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enrich::enrich;
    use crate::enrich::hints::Hints;

    fn raw<'a>(description: &'a str, amount: &str, hints: &'a Hints) -> Raw<'a> {
        Raw {
            merchant: None,
            description: Some(description),
            amount: amount.parse().unwrap(),
            hints,
        }
    }

    fn sub(id: &str) -> Option<&'static Subcategory> {
        Subcategory::from_id(id)
    }

    fn rule(when: Conditions, then: Actions) -> Rule {
        Rule { when, then }
    }

    #[test]
    fn a_rule_outranks_the_tables_and_only_where_it_matches() {
        let hints = Hints::default();
        let rules = Rules::new([rule(
            Conditions {
                text: Some("Bäckerei Müller".into()),
                ..Conditions::default()
            },
            Actions {
                subcategory: sub("food_and_drink.cafes"),
                ..Actions::default()
            },
        )]);
        let transliterated = raw("KARTENZAHLUNG BAECKEREI MUELLER 12.03", "-4.20", &hints);
        let accented = raw("Kartenzahlung Bäckerei Müller GmbH", "-4.20", &hints);
        let miss = raw("KARTENZAHLUNG BAECKEREI MUELLERS 12.03", "-4.20", &hints);
        // Folding writes ä as a, not ae: the accented spelling matches; a
        // bank's own transliteration is another spelling to write a rule for.
        assert_ne!(
            rules
                .apply(1, &transliterated, enrich(&transliterated))
                .source,
            Source::Rule
        );
        let got = rules.apply(1, &accented, enrich(&accented));
        assert_eq!(got.source, Source::Rule);
        assert_eq!(got.subcategory.id, "food_and_drink.cafes");
        // Whole words: MUELLERS is not MUELLER.
        assert_eq!(rules.apply(1, &miss, enrich(&miss)), enrich(&miss));
    }

    #[test]
    fn every_condition_must_hold() {
        let hints = Hints::default();
        let rules = Rules::new([rule(
            Conditions {
                text: Some("transfer".into()),
                amount_min: Some("-100".parse().unwrap()),
                amount_max: Some("-50".parse().unwrap()),
                account_id: Some(7),
                ..Conditions::default()
            },
            Actions {
                merchant: Some("Landlord".into()),
                subcategory: sub("housing.rent"),
            },
        )]);
        let at = |amount: &str, account: i64| {
            let r = raw("Transfer to J. Smith", amount, &hints);
            rules.apply(account, &r, enrich(&r))
        };
        assert_eq!(at("-75", 7).source, Source::Rule);
        assert_eq!(at("-75", 7).merchant.as_deref(), Some("Landlord"));
        assert_eq!(at("-50", 7).source, Source::Rule, "bounds are inclusive");
        assert_ne!(at("-49.99", 7).source, Source::Rule);
        assert_ne!(at("-100.01", 7).source, Source::Rule);
        assert_ne!(at("-75", 8).source, Source::Rule);
    }

    #[test]
    fn the_oldest_rule_that_sets_a_field_decides_it() {
        let hints = Hints::default();
        let rules = Rules::new([
            rule(
                Conditions {
                    text: Some("netflix".into()),
                    ..Conditions::default()
                },
                Actions {
                    merchant: Some("Netflix (family)".into()),
                    ..Actions::default()
                },
            ),
            rule(
                Conditions {
                    text: Some("netflix".into()),
                    ..Conditions::default()
                },
                Actions {
                    merchant: Some("ignored".into()),
                    subcategory: sub("entertainment.other"),
                },
            ),
        ]);
        let r = raw("NETFLIX.COM 866-579-7172", "-15.49", &hints);
        let got = rules.apply(1, &r, enrich(&r));
        assert_eq!(got.merchant.as_deref(), Some("Netflix (family)"));
        assert_eq!(got.subcategory.id, "entertainment.other");
    }

    #[test]
    fn a_merchant_rule_matches_the_clean_name_and_may_bring_its_category() {
        let hints = Hints::default();
        let r = raw("SEPA-Lastschrift ACME HOLDING 4711", "-30.00", &hints);
        let tables = enrich(&r);
        let rules = Rules::new([rule(
            Conditions {
                merchant: tables.merchant.clone(),
                ..Conditions::default()
            },
            Actions {
                merchant: Some("Rewe".into()),
                ..Actions::default()
            },
        )]);
        let got = rules.apply(1, &r, tables);
        assert_eq!(got.merchant.as_deref(), Some("Rewe"));
        assert_eq!(got.subcategory.category.name(), "Groceries");
    }

    #[test]
    fn a_rule_that_cannot_be_kept_names_its_field() {
        let ok = rule(
            Conditions {
                text: Some("x".into()),
                ..Conditions::default()
            },
            Actions {
                subcategory: sub("shopping.general"),
                ..Actions::default()
            },
        );
        assert_eq!(ok.check(), Ok(()));
        let mut none = ok.clone();
        none.when = Conditions::default();
        assert_eq!(none.check().unwrap_err().field(), "match");
        let mut nothing = ok.clone();
        nothing.then = Actions::default();
        assert_eq!(nothing.check().unwrap_err().field(), "set");
        let mut blank = ok.clone();
        blank.when.text = Some(" * ".into());
        assert_eq!(blank.check().unwrap_err().field(), "match.text");
        blank.when.text = Some("?20".into());
        assert_eq!(blank.check().unwrap_err().field(), "match.text");
        let mut long = ok.clone();
        long.then.merchant = Some("a".repeat(MAX_TEXT + 1));
        assert_eq!(long.check().unwrap_err().field(), "set.merchant");
        let mut range = ok;
        range.when.amount_min = Some(Decimal::ONE);
        range.when.amount_max = Some(Decimal::ZERO);
        assert_eq!(range.check(), Err(RuleError::EmptyRange));
    }
}
