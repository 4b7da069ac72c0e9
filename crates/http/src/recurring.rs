//! `GET /recurring` (docs/enrichment.md, "Recurring"): the streams of
//! money that come in and go out on a schedule, found in the last
//! [`HISTORY_MONTHS`] of posted transactions of the accounts the credentials
//! see. Mounted for both interfaces, behind their credentials.

use crate::auth::{self, Credential};
use crate::data::{parse_account_id, query_parameters, visible_accounts};
use crate::error::{ApiError, Envelope};
use crate::openapi::responses;
use crate::routes::Operation;
use crate::state::AppState;
use crate::wire::decimal_schema;
use actix_web::{HttpRequest, HttpResponse, web};
use chrono::{Months, NaiveDate};
use serde::Serialize;
use tributary_domain::access::Viewer;
use tributary_domain::enrich::recurring;
use tributary_domain::ids::AccountId;
use tributary_domain::money::{Decimal, json as decimal_json};
use tributary_storage::AnyConnection;
use utoipa::ToSchema;

/// How far back streams are looked for: two years and a month, so that a
/// yearly payment has been seen twice.
pub const HISTORY_MONTHS: u32 = 25;

/// The recurring endpoint, for credentials `A`.
pub fn operations<A: Credential>() -> Vec<Operation> {
    vec![Operation::new::<__path_recurring, _, _>(recurring::<A>).data()]
}

/// A recurring stream.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Stream {
    /// Stable while the stream's account, direction, currency and merchant
    /// stay the same.
    #[schema(examples("rs_3f9a0c1d2e4b5a69"))]
    pub id: String,
    #[schema(minimum = 1, examples(7))]
    pub account_id: i64,
    #[schema(examples("Netflix"))]
    pub merchant: String,
    /// The top-level category most of its transactions show.
    #[schema(required = true, examples("Subscriptions"))]
    pub category: Option<&'static str>,
    /// ISO 4217.
    pub currency: String,
    /// `WEEKLY`, `BIWEEKLY`, `SEMI_MONTHLY`, `MONTHLY`, `QUARTERLY` or
    /// `ANNUALLY`.
    #[schema(examples("MONTHLY"))]
    pub frequency: &'static str,
    /// The mean of its amounts (negative for money out).
    #[serde(serialize_with = "decimal_json::serialize")]
    #[schema(schema_with = decimal_schema)]
    pub average_amount: Decimal,
    #[serde(serialize_with = "decimal_json::serialize")]
    #[schema(schema_with = decimal_schema)]
    pub last_amount: Decimal,
    #[schema(format = Date, examples("2025-11-07"))]
    pub first_date: String,
    #[schema(format = Date, examples("2026-11-07"))]
    pub last_date: String,
    /// When the next one is expected.
    #[schema(format = Date, examples("2026-12-07"))]
    pub next_date: String,
    /// `ACTIVE`, `LATE` (the next is overdue by less than a period) or
    /// `ENDED`.
    #[schema(examples("ACTIVE"))]
    pub status: &'static str,
    /// Its transactions' ids, oldest first.
    pub transaction_ids: Vec<String>,
}

impl From<recurring::Stream> for Stream {
    fn from(s: recurring::Stream) -> Self {
        Stream {
            id: s.id,
            account_id: s.account_id,
            merchant: s.merchant,
            category: s.category,
            currency: s.currency,
            frequency: s.frequency.as_str(),
            average_amount: s.average_amount,
            last_amount: s.last_amount,
            first_date: s.first_date.to_string(),
            last_date: s.last_date.to_string(),
            next_date: s.next_date.to_string(),
            status: s.status.as_str(),
            transaction_ids: s.transaction_ids.iter().map(i64::to_string).collect(),
        }
    }
}

/// The answer of `GET /recurring`.
#[derive(Debug, Serialize, ToSchema)]
pub struct RecurringStreams {
    /// Money coming in (a salary).
    pub inflow: Vec<Stream>,
    /// Money going out (rent, subscriptions).
    pub outflow: Vec<Stream>,
}

fn parse(query_string: &str) -> Result<Option<AccountId>, ApiError> {
    query_parameters(query_string)?
        .get("account_id")
        .map(|raw| parse_account_id(raw))
        .transpose()
}

#[utoipa::path(
    get,
    path = "/recurring",
    tag = "Insights",
    summary = "Recurring streams",
    description = "The streams of money that come in or go out on a schedule (weekly to yearly), found in the last 25 months of posted transactions of the accounts the credentials see (or of `account_id`): per account, direction, currency and merchant, tolerant of weekend shifts, drifting amounts and a missed period (docs/enrichment.md).",
    params(
        ("account_id" = Option<i64>, Query, description = "Only this account.", minimum = 1),
    ),
    responses(
        (status = 200, description = "The streams.", body = RecurringStreams),
        (status = 400, description = "`INVALID_ACCOUNT_ID`, `INVALID_QUERY`.", body = Envelope),
        (status = 401, response = responses::Unauthorized),
        (status = 404, description = "`ACCOUNT_NOT_FOUND`: `account_id` is missing, another user's, or outside the key's scope.", body = Envelope),
        (status = 503, response = responses::Unavailable),
    )
)]
async fn recurring<C: Credential>(
    credential: C,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let account = auth::checked(&state, &credential, parse(req.query_string())).await?;
    let today = state.clock.now().date_naive();
    let streams = auth::as_viewer(&state, credential, move |conn, viewer| {
        streams(conn, &viewer, account, today)
    })
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "private, no-store"))
        .json(streams))
}

/// The recurring streams of the accounts `viewer` sees (or of `account`
/// alone) as of `today`: the answer of `GET /recurring`, also the MCP
/// tool's.
pub(crate) fn streams(
    conn: &mut AnyConnection,
    viewer: &Viewer,
    account: Option<AccountId>,
    today: NaiveDate,
) -> Result<RecurringStreams, ApiError> {
    let accounts = visible_accounts(conn, viewer, account)?;
    let since = today.checked_sub_months(Months::new(HISTORY_MONTHS));
    let mut history = Vec::new();
    tributary_storage::posted::each_posted(conn, &accounts, (since, None), |row| {
        history.push(row)
    })?;
    let (inflow, outflow): (Vec<_>, Vec<_>) = recurring::detect(&history, today)
        .into_iter()
        .partition(|s| s.inflow);
    Ok(RecurringStreams {
        inflow: inflow.into_iter().map(Into::into).collect(),
        outflow: outflow.into_iter().map(Into::into).collect(),
    })
}
