//! `GET /spending` (docs/enrichment.md, "Spending"): what went out, per
//! category, merchant or month and per currency, refunds netted, income and
//! transfers between one's own accounts left out. Mounted for both
//! interfaces, behind their credentials; it reads only the accounts the
//! credentials see.

use crate::auth::{self, Credential};
use crate::data::{date_range, parse_account_id, query_parameters, visible_accounts};
use crate::error::{ApiError, Envelope};
use crate::openapi::responses;
use crate::routes::Operation;
use crate::state::AppState;
use crate::wire::decimal_schema;
use actix_web::{HttpRequest, HttpResponse, web};
use chrono::NaiveDate;
use serde::Serialize;
use tributary_domain::access::Viewer;
use tributary_domain::enrich::spending::{GroupBy, Total, Totals};
use tributary_domain::ids::AccountId;
use tributary_domain::money::{Decimal, json as decimal_json};
use tributary_storage::AnyConnection;
use utoipa::ToSchema;

/// The spending endpoint, for credentials `A`.
pub fn operations<A: Credential>() -> Vec<Operation> {
    vec![Operation::new::<__path_spending, _, _>(spending::<A>).data()]
}

/// The query, validated.
#[derive(Debug, Clone, PartialEq)]
struct SpendingQuery {
    from: Option<NaiveDate>,
    to: Option<NaiveDate>,
    group_by: GroupBy,
    account: Option<AccountId>,
}

impl SpendingQuery {
    fn parse(query_string: &str) -> Result<Self, ApiError> {
        let params = query_parameters(query_string)?;
        let (from, to) = date_range(&params)?;
        let group_by = match params.get("group_by") {
            None => GroupBy::Category,
            Some(raw) => GroupBy::parse(raw).ok_or_else(|| {
                ApiError::bad_request(
                    "INVALID_PARAMETER",
                    format!(
                        "`group_by` must be one of {}, got `{raw}`.",
                        GroupBy::NAMES.join(", ")
                    ),
                )
            })?,
        };
        let account = params
            .get("account_id")
            .map(|raw| parse_account_id(raw))
            .transpose()?;
        Ok(SpendingQuery {
            from,
            to,
            group_by,
            account,
        })
    }
}

/// What `GET /spending` groups by, for the OpenAPI document (the query is
/// read by `GroupBy::parse`; `group_by_names_match_the_schema` keeps the
/// two together).
#[derive(Debug, ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)] // read only by the schema derive
pub enum SpendingGroupBy {
    Category,
    Merchant,
    Month,
}

/// The totals of one group in one currency.
#[derive(Debug, Serialize, ToSchema)]
pub struct SpendingGroup {
    /// The category's name (`group_by=category`), the clean merchant
    /// (`merchant`) or the month, `YYYY-MM` (`month`); null for
    /// transactions without one (not yet enriched, or without a merchant).
    #[schema(required = true, examples("Groceries"))]
    pub key: Option<String>,
    /// ISO 4217.
    #[schema(examples("EUR"))]
    pub currency: String,
    /// Money out less money back (refunds): positive when more went out.
    #[serde(serialize_with = "decimal_json::serialize")]
    #[schema(schema_with = decimal_schema)]
    pub spent: Decimal,
    /// How many transactions it sums.
    pub transactions: u64,
}

impl From<Total> for SpendingGroup {
    fn from(total: Total) -> Self {
        SpendingGroup {
            key: total.key,
            currency: total.currency,
            spent: total.spent,
            transactions: total.transactions,
        }
    }
}

/// The answer of `GET /spending`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Spending {
    /// The groups, by currency, the most spent first (months in order).
    pub groups: Vec<SpendingGroup>,
}

#[utoipa::path(
    get,
    path = "/spending",
    tag = "Insights",
    summary = "Spending totals",
    description = "What went out of the accounts the credentials see (or of `account_id`), per category, merchant or month and per currency: posted transactions, refunds netted against what they refund, income and transfers between one's own accounts or to one's credit card left out (docs/enrichment.md).",
    params(
        ("from" = Option<String>, Query, description = "Only transactions on or after this date (`YYYY-MM-DD`).", format = Date),
        ("to" = Option<String>, Query, description = "Only transactions on or before this date (`YYYY-MM-DD`).", format = Date),
        ("group_by" = inline(Option<SpendingGroupBy>), Query, description = "`category` (the default), `merchant` or `month`."),
        ("account_id" = Option<i64>, Query, description = "Only this account.", minimum = 1),
    ),
    responses(
        (status = 200, description = "The totals.", body = Spending),
        (status = 400, description = "`INVALID_DATE`, `INVALID_DATE_RANGE`, `INVALID_PARAMETER` (`group_by`), `INVALID_ACCOUNT_ID`, `INVALID_QUERY`.", body = Envelope),
        (status = 401, response = responses::Unauthorized),
        (status = 404, description = "`ACCOUNT_NOT_FOUND`: `account_id` is missing, another user's, or outside the key's scope.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn spending<C: Credential>(
    credential: C,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let query = auth::checked(
        &state,
        &credential,
        SpendingQuery::parse(req.query_string()),
    )
    .await?;
    let groups = auth::as_viewer(&state, credential, move |conn, viewer| {
        totals(
            conn,
            &viewer,
            query.account,
            (query.from, query.to),
            query.group_by,
        )
    })
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "private, no-store"))
        .json(Spending {
            groups: groups.into_iter().map(Into::into).collect(),
        }))
}

/// What went out of the accounts `viewer` sees (or of `account` alone)
/// between the dates, grouped: the answer of `GET /spending`, also the MCP
/// tool's.
pub(crate) fn totals(
    conn: &mut AnyConnection,
    viewer: &Viewer,
    account: Option<AccountId>,
    dates: (Option<NaiveDate>, Option<NaiveDate>),
    group_by: GroupBy,
) -> Result<Vec<Total>, ApiError> {
    let accounts = visible_accounts(conn, viewer, account)?;
    let mut totals = Totals::new(group_by);
    tributary_storage::posted::each_posted(conn, &accounts, dates, |row| totals.add(&row))?;
    Ok(totals.groups())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_by_names_match_the_schema() {
        use utoipa::PartialSchema as _;
        let schema = serde_json::to_value(SpendingGroupBy::schema()).unwrap();
        let names: Vec<&str> = schema["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        assert_eq!(names, GroupBy::NAMES);
    }

    #[test]
    fn the_query_names_what_is_wrong() {
        let err = |q: &str| SpendingQuery::parse(q).unwrap_err().to_string();
        assert!(err("group_by=week").contains("group_by"));
        assert!(err("from=2026-02-01&to=2026-01-01").contains("after"));
        assert!(err("from=yesterday").contains("from"));
        assert!(err("account_id=0").contains("accountId"));
        let q = SpendingQuery::parse("group_by=month&from=2026-01-01").unwrap();
        assert_eq!(q.group_by, GroupBy::Month);
        assert_eq!(q.from, NaiveDate::from_ymd_opt(2026, 1, 1));
    }
}
