//! What every reader makes of a file: statements, each of one account,
//! with the notes that say what was left out and why.

use tributary_domain::model::AccountKind;
use tributary_domain::money::Decimal;
use tributary_domain::snapshot::*;

/// One statement of one account, as a file states it.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// IBAN or account number: how the account is found again.
    pub account_id: String,
    pub account_name: Option<String>,
    pub kind: AccountKind,
    pub currency: String,
    pub transactions: Vec<SnapshotTransaction>,
    pub opening_booked: Option<Decimal>,
    /// The date of the opening balance, where the file gives one.
    pub opening_date: Option<chrono::NaiveDate>,
    pub closing_booked: Option<Decimal>,
    /// The balance the statement ends on, as a snapshot at its date.
    pub balance: Option<SnapshotBalance>,
    pub holdings: Option<Vec<SnapshotHolding>>,
    /// Investment activity (OFX `INVTRANLIST` trades, income, transfers).
    pub investment_transactions: Vec<SnapshotInvestmentTransaction>,
    /// The bank that keeps the account (name or BIC), where the file says.
    pub servicer: Option<String>,
    /// What the reader had to decide or found wrong (a date taken from the
    /// statement, a balance that does not add up): said to the user.
    pub notes: Vec<String>,
    /// Positions in `transactions` of the entries whose currency the file
    /// does not state (CSV rows without a currency column, symbol or unit):
    /// they carry `currency` as an assumption, said in a note; imported
    /// into an account the user chose, they take its currency instead.
    pub currency_assumed: Vec<usize>,
    /// The ids its entries had when every CSV row of a file went to one
    /// account (`unidentified-{currency}`), one per transaction, where they
    /// differ from today's (rows an account column now routes); empty
    /// otherwise. A re-import finds rows stored then by them.
    pub legacy_ids: Vec<String>,
}

#[cfg(test)]
impl Statement {
    /// The signed sum of its transactions, as text: the figure tests
    /// compare with what a bank or another parser says.
    pub(crate) fn signed_sum(&self) -> String {
        self.transactions
            .iter()
            .map(|t| t.amount)
            .sum::<Decimal>()
            .to_string()
    }
}

/// How the account id of a statement that names no account begins.
const UNIDENTIFIED: &str = "unidentified-";

/// The account id of a statement naming no account in `currency`, from a
/// file of `source` (a format, a CSV layout): files of different sources
/// or currencies never share an account unless the user says so.
pub(crate) fn unnamed_account_id(currency: &str, source: &str) -> String {
    format!("{UNIDENTIFIED}{currency}-{source}")
}

/// The account id every statement naming no account in `currency` had
/// before files were kept apart by source. Entry ids of such statements
/// are still made with it, so that a file imported then finds its rows
/// again (see [`store_into`]).
pub(crate) fn legacy_account_id(currency: &str) -> String {
    format!("{UNIDENTIFIED}{currency}")
}

/// The note on rows whose currency the file does not state.
pub(crate) fn assumed_currency_note(rows: usize) -> String {
    format!(
        "{rows} row(s) name no currency (no currency column, no symbol on the amount, no unit in the header): taken as {ASSUMED_CURRENCY}; a profile's \"currency\" names another, or import the file into an account of its currency"
    )
}

/// The currency of entries for which neither the file nor a CSV profile
/// names one (most CSV exports without one come from euro banks).
pub(crate) const ASSUMED_CURRENCY: &str = "EUR";

/// ISO 4217's code for "no currency", which a file naming none (an MT940
/// snippet) gets.
pub(super) const NO_CURRENCY: &str = "XXX";

impl Statement {
    /// Whether the file names the account (IBAN, number) this statement is of.
    pub fn names_account(&self) -> bool {
        !self.account_id.starts_with(UNIDENTIFIED)
    }

    /// The currencies the file states for this statement's entries and
    /// balance (not those assumed, nor "no currency").
    pub(super) fn stated_currencies(&self) -> std::collections::BTreeSet<&str> {
        let assumed = self.assumed_positions();
        self.transactions
            .iter()
            .enumerate()
            .filter(|(i, _)| !assumed.contains(i))
            .map(|(_, t)| t.currency.as_str())
            .chain(self.balance.iter().map(|b| b.currency.as_str()))
            .filter(|c| *c != NO_CURRENCY)
            .collect()
    }

    /// [`Statement::currency_assumed`], to look positions up in.
    pub(super) fn assumed_positions(&self) -> std::collections::HashSet<usize> {
        self.currency_assumed.iter().copied().collect()
    }

    /// Whether it states no transaction, balance or holding.
    pub fn is_empty(&self) -> bool {
        self.transactions.is_empty()
            && self.balance.is_none()
            && self.holdings.is_none()
            && self.investment_transactions.is_empty()
    }

    /// The statement as a snapshot of the `file` connection.
    pub fn into_snapshot(self) -> ProviderSnapshot {
        let digits: String = self
            .account_id
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect();
        // An account the file does not name has no number to show, and
        // neither has one known by a word (a CSV's `Account` of `Savings`).
        let mask = (self.names_account()
            && digits.len() >= 4
            && digits.chars().any(|c| c.is_ascii_digit()))
        .then(|| digits[digits.len() - 4..].to_owned());
        ProviderSnapshot {
            institution: file_institution(),
            accounts: vec![SnapshotAccount {
                balance_history: Vec::new(),
                institution: None,
                name: self.account_name.unwrap_or_else(|| {
                    let number = format!("Account …{}", mask.clone().unwrap_or_default());
                    match &self.servicer {
                        Some(bank) => format!("{number} at {bank}"),
                        None => number,
                    }
                }),
                provider_account_id: self.account_id,
                kind: self.kind,
                currency: self.currency,
                mask,
                balance: self.balance,
                transactions: self.transactions,
                holdings: self.holdings,
                investment_transactions: self.investment_transactions,
                liability: None,
            }],
            notices: Vec::new(),
            pending_match: Some(tributary_domain::reconcile::PendingMatchRule::default()),
            complete: false,
        }
    }
}

pub fn file_institution() -> SnapshotInstitution {
    SnapshotInstitution {
        provider_institution_id: "statements".into(),
        name: "Imported statements".into(),
        logo_url: None,
    }
}
