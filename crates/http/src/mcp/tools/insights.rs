//! `spending_summary` and `list_recurring`: the answers of `GET /spending`
//! and `GET /recurring` (docs/enrichment.md), for a model.

use super::shared::{
    Answer, Asker, Failure, Spec, account_argument, date_range, exact, listed, output_schema,
    schema,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tributary_domain::enrich::spending::{GroupBy, Total};

pub(super) const SPENDING_NAME: &str = "spending_summary";
pub(super) const RECURRING_NAME: &str = "list_recurring";

/// The most groups an answer holds (the biggest).
const MAX_GROUPS: usize = 100;
/// The most streams each direction holds.
const MAX_STREAMS: usize = 100;

pub(super) const SPENDING: Spec = Spec {
    name: SPENDING_NAME,
    title: "Spending summary",
    description: "What went out between two dates, per category (default), merchant or month (`group_by`), and per currency: posted transactions, refunds netted against spending, income and transfers between the person's own accounts (or to their credit card) left out. Categories are Tributary's enrichment (rules the person wrote come first). `spent` is positive when more went out. Exact decimal strings; at most 100 groups (the biggest, or the newest months).",
    input: schema::<SpendingQuery>,
    output: output_schema::<SpendingAnswer>,
};

pub(super) const RECURRING: Spec = Spec {
    name: RECURRING_NAME,
    title: "List recurring",
    description: "Recurring money in (pay) and out (rent, bills, subscriptions) found in the last 25 months of posted transactions: merchant, category, frequency (WEEKLY to ANNUALLY), average and last amount, first, last and next expected date, and status (ACTIVE, LATE, ENDED). A subscription that went up shows a last amount beyond its average. Exact decimal strings.",
    input: schema::<RecurringQuery>,
    output: output_schema::<RecurringAnswer>,
};

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Grouping {
    Category,
    Merchant,
    Month,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SpendingQuery {
    /// From this date (YYYY-MM-DD), inclusive.
    from: Option<String>,
    /// To this date (YYYY-MM-DD), inclusive.
    to: Option<String>,
    /// `category` (default), `merchant` or `month`.
    group_by: Option<Grouping>,
    /// Only this account (an id from list_accounts).
    account_id: Option<i64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct SpendingAnswer {
    groups: Vec<SpendingGroup>,
    /// Set when groups were left out.
    note: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct SpendingGroup {
    /// The category, the merchant or the month (YYYY-MM); null for transactions without one.
    key: Option<String>,
    /// ISO 4217.
    currency: String,
    /// Money out less refunds (exact decimal), positive when more went out.
    spent: String,
    /// How many transactions it sums.
    transactions: u64,
}

pub(super) async fn spending(asker: &Asker, query: SpendingQuery) -> Result<Answer, Failure> {
    let account = account_argument(query.account_id)?;
    let dates = date_range(query.from, query.to)?;
    let group_by = match query.group_by.unwrap_or(Grouping::Category) {
        Grouping::Category => GroupBy::Category,
        Grouping::Merchant => GroupBy::Merchant,
        Grouping::Month => GroupBy::Month,
    };
    let totals = asker
        .read(move |conn, viewer| crate::spending::totals(conn, viewer, account, dates, group_by))
        .await?;
    let all = totals.len();
    let groups: Vec<SpendingGroup> = biggest(totals, group_by)
        .into_iter()
        .map(|t| SpendingGroup {
            key: t.key,
            currency: t.currency,
            spent: exact(&t.spent),
            transactions: t.transactions,
        })
        .collect();
    let note = (all > MAX_GROUPS).then(|| {
        let kept = if group_by == GroupBy::Month {
            "the newest months"
        } else {
            "the biggest"
        };
        format!("{all} groups; {kept} ({MAX_GROUPS}) are shown: narrow the dates or the account.")
    });
    let mut text = if groups.is_empty() {
        "Nothing was spent in this range.".to_owned()
    } else {
        listed(
            groups.iter().map(|g| {
                format!(
                    "- {}: {} {} ({} transactions)",
                    g.key.as_deref().unwrap_or("(none)"),
                    g.spent,
                    g.currency,
                    g.transactions
                )
            }),
            40,
        )
    };
    if let Some(note) = &note {
        text.push('\n');
        text.push_str(note);
    }
    Ok(Answer::new(&SpendingAnswer { groups, note }, text))
}

/// At most [`MAX_GROUPS`] of `totals`, in their order: the newest months,
/// or the most spent whatever the currency (the totals come by currency
/// first, so the first N would be one currency's).
fn biggest(totals: Vec<Total>, group_by: GroupBy) -> Vec<Total> {
    if totals.len() <= MAX_GROUPS {
        return totals;
    }
    let mut ranked: Vec<usize> = (0..totals.len()).collect();
    if group_by == GroupBy::Month {
        ranked.sort_by(|a, b| totals[*b].key.cmp(&totals[*a].key));
    } else {
        ranked.sort_by_key(|i| std::cmp::Reverse(totals[*i].spent.abs()));
    }
    let mut kept = vec![false; totals.len()];
    for i in ranked.into_iter().take(MAX_GROUPS) {
        kept[i] = true;
    }
    totals
        .into_iter()
        .zip(kept)
        .filter_map(|(total, kept)| kept.then_some(total))
        .collect()
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RecurringQuery {
    /// Only this account (an id from list_accounts).
    account_id: Option<i64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct RecurringAnswer {
    /// Money coming in (pay).
    inflow: Vec<StreamAnswer>,
    /// Money going out (rent, bills, subscriptions).
    outflow: Vec<StreamAnswer>,
    /// Set when streams were left out.
    note: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct StreamAnswer {
    id: String,
    account_id: i64,
    merchant: String,
    category: Option<String>,
    /// ISO 4217.
    currency: String,
    /// WEEKLY, BIWEEKLY, SEMI_MONTHLY, MONTHLY, QUARTERLY or ANNUALLY.
    frequency: String,
    /// Exact decimal, negative for money out.
    average_amount: String,
    /// Exact decimal, negative for money out.
    last_amount: String,
    first_date: String,
    last_date: String,
    next_date: String,
    /// ACTIVE, LATE or ENDED.
    status: String,
    /// How many transactions it was found in.
    transactions: usize,
}

impl From<crate::recurring::Stream> for StreamAnswer {
    fn from(s: crate::recurring::Stream) -> Self {
        StreamAnswer {
            id: s.id,
            account_id: s.account_id,
            merchant: s.merchant,
            category: s.category.map(str::to_owned),
            currency: s.currency,
            frequency: s.frequency.to_owned(),
            average_amount: exact(&s.average_amount),
            last_amount: exact(&s.last_amount),
            first_date: s.first_date,
            last_date: s.last_date,
            next_date: s.next_date,
            status: s.status.to_owned(),
            transactions: s.transaction_ids.len(),
        }
    }
}

pub(super) async fn recurring(asker: &Asker, query: RecurringQuery) -> Result<Answer, Failure> {
    let account = account_argument(query.account_id)?;
    let today = asker.state.clock.now().date_naive();
    let streams = asker
        .read(move |conn, viewer| crate::recurring::streams(conn, viewer, account, today))
        .await?;
    let cut = streams.inflow.len() > MAX_STREAMS || streams.outflow.len() > MAX_STREAMS;
    let answer = |streams: Vec<crate::recurring::Stream>| -> Vec<StreamAnswer> {
        streams
            .into_iter()
            .take(MAX_STREAMS)
            .map(Into::into)
            .collect()
    };
    let (inflow, outflow) = (answer(streams.inflow), answer(streams.outflow));
    let note =
        cut.then(|| format!("More than {MAX_STREAMS} streams one way; the first are shown."));
    let line = |s: &StreamAnswer| {
        format!(
            "- {} {}: {} {} on average, last {} on {}, next {} ({})",
            s.frequency,
            s.merchant,
            s.average_amount,
            s.currency,
            s.last_amount,
            s.last_date,
            s.next_date,
            s.status
        )
    };
    let mut text = format!(
        "In ({}):\n{}\nOut ({}):\n{}",
        inflow.len(),
        listed(inflow.iter().map(line), 30),
        outflow.len(),
        listed(outflow.iter().map(line), 30)
    );
    if let Some(note) = &note {
        text.push('\n');
        text.push_str(note);
    }
    Ok(Answer::new(
        &RecurringAnswer {
            inflow,
            outflow,
            note,
        },
        text,
    ))
}
