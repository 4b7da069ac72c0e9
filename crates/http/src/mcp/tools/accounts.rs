//! `list_accounts`: the accounts the credential sees, each with its latest
//! balance and, for a card or loan, its terms (what `GET /accounts` and
//! `GET /accounts/{id}/balance` answer).

use super::shared::{Answer, Asker, Failure, Spec, exact, listed, output_schema, schema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tributary_storage::read;

pub(super) const NAME: &str = "list_accounts";

pub(super) const SPEC: Spec = Spec {
    name: NAME,
    title: "List accounts",
    description: "Every bank, card, loan and brokerage account this connection may read, with its institution, type, currency and latest balance. Start here: the other tools take these ids as `account_id`. Amounts are exact decimal strings in the account's currency; a credit card or loan balance is what the provider reports (usually the amount owed).",
    input: schema::<NoArguments>,
    output: output_schema::<AccountsAnswer>,
};

/// `list_accounts` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct NoArguments {}

#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct AccountsAnswer {
    accounts: Vec<AccountAnswer>,
    total: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
struct AccountAnswer {
    id: i64,
    name: String,
    institution: String,
    /// checking, savings, credit_card, brokerage, loan or other.
    #[serde(rename = "type")]
    kind: String,
    /// ISO 4217.
    currency: String,
    /// Last digits of the account number, when known.
    mask: Option<String>,
    /// Where the data comes from (sandbox, simplefin, import, …).
    provider: String,
    /// The connection's state: ACTIVE, REAUTH_REQUIRED, ERROR or DISCONNECTED.
    status: String,
    /// The newest balance the provider reported; null before the first.
    balance: Option<BalanceAnswer>,
    /// A card's or loan's terms, where the provider states any.
    #[serde(skip_serializing_if = "Option::is_none")]
    liability: Option<LiabilityAnswer>,
}

/// Each part where the provider states it; amounts are exact decimals.
#[derive(Debug, Serialize, JsonSchema)]
struct LiabilityAnswer {
    credit_limit: Option<String>,
    minimum_payment: Option<String>,
    /// YYYY-MM-DD.
    next_payment_due: Option<String>,
    last_statement_balance: Option<String>,
}

impl LiabilityAnswer {
    fn of(terms: &read::AccountLiability) -> Option<Self> {
        terms.is_stated().then(|| LiabilityAnswer {
            credit_limit: terms.credit_limit.as_ref().map(exact),
            minimum_payment: terms.minimum_payment.as_ref().map(exact),
            next_payment_due: terms.next_payment_due.map(|d| d.to_string()),
            last_statement_balance: terms.last_statement_balance.as_ref().map(exact),
        })
    }

    /// `; limit 5000.00, minimum 25.00 due 2026-12-05`, as far as stated.
    fn said(&self) -> String {
        let mut parts = Vec::new();
        if let Some(limit) = &self.credit_limit {
            parts.push(format!("limit {limit}"));
        }
        match (&self.minimum_payment, &self.next_payment_due) {
            (Some(minimum), Some(due)) => parts.push(format!("minimum {minimum} due {due}")),
            (Some(minimum), None) => parts.push(format!("minimum {minimum}")),
            (None, Some(due)) => parts.push(format!("payment due {due}")),
            (None, None) => {}
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("; {}", parts.join(", "))
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
struct BalanceAnswer {
    /// Exact decimal.
    current: String,
    /// Exact decimal, when the provider reports one.
    available: Option<String>,
    currency: String,
    /// When the provider reported it (RFC 3339, UTC).
    as_of: String,
}

pub(super) async fn run(asker: &Asker, _: NoArguments) -> Result<Answer, Failure> {
    let accounts = asker
        .read(|conn, viewer| {
            let mut answers = Vec::new();
            for account in read::list_accounts(conn, viewer)? {
                let balance = read::latest_balance(conn, account.id)?;
                let liability = LiabilityAnswer::of(&account.liability);
                answers.push(AccountAnswer {
                    id: account.id.get(),
                    name: account.name,
                    institution: account.institution_name,
                    kind: account.kind.as_str().to_owned(),
                    currency: account.currency,
                    mask: account.mask,
                    provider: account.provider.to_string(),
                    status: account.status.as_str().to_owned(),
                    balance: balance.map(|b| BalanceAnswer {
                        current: exact(&b.amount),
                        available: b.available.as_ref().map(exact),
                        currency: b.currency,
                        as_of: crate::webhooks::time(b.as_of),
                    }),
                    liability,
                });
            }
            Ok(answers)
        })
        .await?;
    let text = if accounts.is_empty() {
        "No accounts are visible to this connection.".to_owned()
    } else {
        format!(
            "{} account(s):\n{}",
            accounts.len(),
            listed(
                accounts.iter().map(|a| {
                    let balance = a.balance.as_ref().map_or_else(
                        || "no balance yet".to_owned(),
                        |b| format!("balance {} {} as of {}", b.current, b.currency, b.as_of),
                    );
                    let terms = a.liability.as_ref().map(LiabilityAnswer::said);
                    format!(
                        "- [{}] {} ({}, {}, {}): {balance}{}",
                        a.id,
                        a.name,
                        a.institution,
                        a.kind,
                        a.currency,
                        terms.unwrap_or_default()
                    )
                }),
                50
            )
        )
    };
    Ok(Answer::new(
        &AccountsAnswer {
            total: accounts.len(),
            accounts,
        },
        text,
    ))
}
