//! A local fake of Interactive Brokers' Flex Web Service (version 3, as
//! IBKR's Flex Web Service guide and the `ibflex` package describe it), for
//! tests only. `SendRequest` takes a token and a query id and answers a
//! reference code, or an error code (1015 for a token it does not know,
//! 1014 for a query it does not know, 1012 once the token has expired);
//! `GetStatement` answers 1019 (still being made) on the first ask for a
//! reference, then the Activity statement: one account with two open
//! positions (and a lot that repeats one), executions beside an order
//! summary, and cash transactions beside a summary copy; a second account
//! with a deposit. Both calls must carry `v=3` and a User-Agent.

use crate::fakes::{Route, mount_gets};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tributary_providers::Connector;
use tributary_providers::ibkr::{IbkrConfig, IbkrConnector};
use wiremock::{MockServer, Request, ResponseTemplate};

pub const TOKEN: &str = "285716543219876543210987";
/// The token made after the first expired.
pub const NEW_TOKEN: &str = "385716543219876543210988";
pub const QUERY_ID: &str = "987654";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Slow,
    /// HTTP 500.
    ServerError,
    /// 1018: too many requests from this token.
    Throttled,
    /// 1019 on every ask: the statement is never ready.
    NeverReady,
    /// A statement that breaks off.
    Malformed,
    /// A trade dated `MM/dd/yyyy`, which is March or April.
    SlashDate,
}

#[derive(Debug)]
struct State {
    tokens: Vec<String>,
    fault: Option<Fault>,
    /// Reference codes handed out, and how often each was asked for.
    asked: HashMap<String, u32>,
    /// The dividend IBKR books later, once the test says.
    later_dividend: bool,
}

#[derive(Debug, Clone)]
pub struct IbkrFake {
    pub server: Arc<MockServer>,
    state: Arc<Mutex<State>>,
}

const ROOT: &str = "/AccountManagement/FlexWebService";

fn response(inner: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<FlexStatementResponse timestamp=\"29 November, 2026 10:37 AM EST\">\n{inner}\n</FlexStatementResponse>\n"
        ),
        "text/xml",
    )
}

fn error(code: u32, message: &str) -> ResponseTemplate {
    let status = if code == 1019 { "Warn" } else { "Fail" };
    response(&format!(
        "<Status>{status}</Status>\n<ErrorCode>{code}</ErrorCode>\n<ErrorMessage>{message}</ErrorMessage>"
    ))
}

impl IbkrFake {
    pub async fn start() -> Self {
        let fake = Self {
            server: Arc::new(MockServer::start().await),
            state: Arc::new(Mutex::new(State {
                tokens: vec![TOKEN.to_owned()],
                fault: None,
                asked: HashMap::new(),
                later_dividend: false,
            })),
        };
        let routes: Vec<(&str, Box<Route<Self>>)> = vec![
            (
                "^/AccountManagement/FlexWebService/SendRequest$",
                Box::new(|f, r| f.checked(r, Self::send_request)),
            ),
            // Where SendRequest's `Url` says, as IBKR's own answers do.
            (
                "^/Universal/servlet/FlexStatementService.GetStatement$",
                Box::new(|f, r| f.checked(r, Self::get_statement)),
            ),
        ];
        mount_gets(&fake.server, &fake, routes).await;
        fake
    }

    /// The real connector pointed at the fake, asking again at once.
    pub fn connector(&self, timeout: Duration) -> Arc<dyn Connector> {
        let config = IbkrConfig {
            base_url: format!("{}{ROOT}", self.server.uri()),
            timeout,
            statement_wait: Duration::ZERO,
        };
        std::thread::spawn(move || {
            Arc::new(IbkrConnector::new(config).unwrap()) as Arc<dyn Connector>
        })
        .join()
        .unwrap()
    }

    pub fn set_fault(&self, fault: Option<Fault>) {
        self.state.lock().unwrap().fault = fault;
    }

    /// The token expires (IBKR's tokens last at most a year).
    pub fn expire_token(&self) {
        self.state.lock().unwrap().tokens.clear();
    }

    pub fn issue_new_token(&self) {
        self.state.lock().unwrap().tokens.push(NEW_TOKEN.to_owned());
    }

    /// A dividend booked after the first statements.
    pub fn book_a_later_dividend(&self) {
        self.state.lock().unwrap().later_dividend = true;
    }

    /// The Activity statement as the fake serves it now.
    pub fn statement(&self) -> String {
        statement(self.state.lock().unwrap().later_dividend, false)
    }

    /// Both calls carry `v=3`, a User-Agent and a known token.
    fn checked(
        &self,
        request: &Request,
        answer: fn(&Self, &HashMap<String, String>) -> ResponseTemplate,
    ) -> ResponseTemplate {
        let query: HashMap<String, String> = request.url.query_pairs().into_owned().collect();
        if query.get("v").map(String::as_str) != Some("3")
            || !request.headers.contains_key("user-agent")
        {
            return error(1020, "Invalid request or unable to validate request.");
        }
        let fault = {
            let state = self.state.lock().unwrap();
            let known = query.get("t").is_some_and(|t| state.tokens.contains(t));
            if !known {
                return if query.get("t").is_some_and(|t| t == TOKEN) {
                    error(1012, "Token has expired.")
                } else {
                    error(1015, "Token is invalid.")
                };
            }
            state.fault
        };
        match fault {
            Some(Fault::Slow) => answer(self, &query).set_delay(Duration::from_secs(5)),
            Some(Fault::ServerError) => ResponseTemplate::new(500),
            Some(Fault::Throttled) => error(
                1018,
                "Too many requests have been made from this token. Please try again shortly.",
            ),
            _ => answer(self, &query),
        }
    }

    fn send_request(&self, query: &HashMap<String, String>) -> ResponseTemplate {
        if query.get("q").map(String::as_str) != Some(QUERY_ID) {
            return error(1014, "Query is invalid.");
        }
        let mut state = self.state.lock().unwrap();
        let reference = format!("{}", 4_000_000_000u64 + state.asked.len() as u64);
        state.asked.insert(reference.clone(), 0);
        response(&format!(
            "<Status>Success</Status>\n<ReferenceCode>{reference}</ReferenceCode>\n<Url>{}/Universal/servlet/FlexStatementService.GetStatement</Url>",
            self.server.uri()
        ))
    }

    fn get_statement(&self, query: &HashMap<String, String>) -> ResponseTemplate {
        let mut state = self.state.lock().unwrap();
        let Some(asked) = query.get("q").and_then(|q| state.asked.get_mut(q)) else {
            return error(1017, "Reference code is invalid.");
        };
        *asked += 1;
        if *asked == 1 || state.fault == Some(Fault::NeverReady) {
            return error(
                1019,
                "Statement generation in progress. Please try again shortly.",
            );
        }
        let body = match state.fault {
            Some(Fault::Malformed) => "<FlexQueryResponse queryName=\"Tributary\" type=\"AF\"><FlexStatements count=\"1\"><FlexStatement".to_owned(),
            _ => statement(state.later_dividend, state.fault == Some(Fault::SlashDate)),
        };
        ResponseTemplate::new(200).set_body_raw(body, "text/xml")
    }
}

/// An Activity Flex statement in the shapes of IBKR's (and `ibflex`'s
/// test) samples: amounts signed as IBKR signs them (a buy's proceeds and
/// commission negative, a sale's quantity negative, a withholding tax
/// negative), dates `yyyyMMdd`, times after `;`.
fn statement(later_dividend: bool, slash_date: bool) -> String {
    let buy_date = if slash_date { "11/03/2026" } else { "20261103" };
    let later = if later_dividend {
        r#"<CashTransaction accountId="U1234567" acctAlias="Main" currency="USD" fxRateToBase="1" assetCategory="STK" symbol="MSFT" description="MSFT(US5949181045) CASH DIVIDEND USD 0.83 PER SHARE (Ordinary Dividend)" conid="272093" securityID="US5949181045" securityIDType="ISIN" cusip="594918104" isin="US5949181045" figi="BBG000BPH459" listingExchange="NASDAQ" dateTime="20261127;202000" settleDate="20261127" amount="4.15" type="Dividends" transactionID="31000000006" reportDate="20261127" actionID="150000002" levelOfDetail="DETAIL" />"#
    } else {
        ""
    };
    format!(
        r#"<FlexQueryResponse queryName="Tributary" type="AF">
<FlexStatements count="2">
<FlexStatement accountId="U1234567" fromDate="20251128" toDate="20261127" period="Last365CalendarDays" whenGenerated="20261128;021512">
<AccountInformation accountId="U1234567" acctAlias="Main" currency="USD" name="Ada Lovelace" accountType="Individual" customerType="Individual" dateOpened="20200115" />
<EquitySummaryInBase>
<EquitySummaryByReportDateInBase accountId="U1234567" acctAlias="Main" currency="USD" reportDate="20261126" cash="3100.00" stock="2400.00" total="5500.00" />
<EquitySummaryByReportDateInBase accountId="U1234567" acctAlias="Main" currency="USD" reportDate="20261127" cash="3194.63" stock="2465.00" total="5659.63" />
</EquitySummaryInBase>
<CashReport>
<CashReportCurrency accountId="U1234567" acctAlias="Main" currency="BASE_SUMMARY" startingCash="0" endingCash="3194.63" endingSettledCash="3194.63" />
<CashReportCurrency accountId="U1234567" acctAlias="Main" currency="USD" startingCash="0" endingCash="3194.63" endingSettledCash="3194.63" />
</CashReport>
<OpenPositions>
<OpenPosition accountId="U1234567" acctAlias="Main" currency="USD" fxRateToBase="1" assetCategory="STK" symbol="AAPL" description="APPLE INC" conid="265598" securityID="US0378331005" securityIDType="ISIN" cusip="037833100" isin="US0378331005" figi="BBG000B9XRY4" listingExchange="NASDAQ" reportDate="20261127" position="8" markPrice="190.5" positionValue="1524" openPrice="180.25" costBasisPrice="180.35" costBasisMoney="1442.8" fifoPnlUnrealized="81.2" side="Long" levelOfDetail="SUMMARY" />
<OpenPosition accountId="U1234567" acctAlias="Main" currency="USD" fxRateToBase="1" assetCategory="STK" symbol="AAPL" description="APPLE INC" conid="265598" securityID="US0378331005" securityIDType="ISIN" cusip="037833100" isin="US0378331005" figi="BBG000B9XRY4" listingExchange="NASDAQ" reportDate="20261127" position="8" markPrice="190.5" positionValue="1524" openPrice="180.25" costBasisPrice="180.35" costBasisMoney="1442.8" fifoPnlUnrealized="81.2" side="Long" levelOfDetail="LOT" openDateTime="20261103;143012" />
<OpenPosition accountId="U1234567" acctAlias="Main" currency="CHF" fxRateToBase="1.13" assetCategory="STK" symbol="NESN" description="NESTLE SA-REG" conid="38709539" securityID="CH0038863350" securityIDType="ISIN" isin="CH0038863350" listingExchange="EBS" reportDate="20261127" position="10" markPrice="83.2" positionValue="832" openPrice="80" costBasisPrice="80" costBasisMoney="800" fifoPnlUnrealized="32" side="Long" levelOfDetail="SUMMARY" />
</OpenPositions>
<Trades>
<Order accountId="U1234567" currency="USD" assetCategory="STK" symbol="AAPL" tradeID="" transactionID="" tradeDate="{buy_date}" quantity="10" tradePrice="180.25" proceeds="-1802.5" ibCommission="-1" netCash="-1803.5" buySell="BUY" levelOfDetail="ORDER" />
<Trade accountId="U1234567" acctAlias="Main" currency="USD" fxRateToBase="1" assetCategory="STK" symbol="AAPL" description="APPLE INC" conid="265598" tradeID="" reportDate="{buy_date}" tradeDate="{buy_date}" quantity="10" tradePrice="180.25" tradeMoney="1802.5" proceeds="-1802.5" taxes="0" ibCommission="-1" ibCommissionCurrency="USD" netCash="-1803.5" buySell="BUY" transactionID="" levelOfDetail="ORDER" />
<Trade accountId="U1234567" acctAlias="Main" currency="USD" fxRateToBase="1" assetCategory="CASH" symbol="EUR.USD" description="EUR.USD" conid="12087792" tradeID="700000003" reportDate="20261105" tradeDate="20261105" tradeTime="091500" settleDateTarget="20261107" transactionType="ExchTrade" exchange="IDEALFX" quantity="100" tradePrice="1.08" tradeMoney="108" proceeds="-108" taxes="0" ibCommission="-2" ibCommissionCurrency="USD" netCash="-110" buySell="BUY" transactionID="31000000008" ibOrderID="900000003" dateTime="20261105;091500" levelOfDetail="EXECUTION" />
<Trade accountId="U1234567" acctAlias="Main" currency="USD" fxRateToBase="1" assetCategory="STK" symbol="AAPL" description="APPLE INC" conid="265598" securityID="US0378331005" securityIDType="ISIN" cusip="037833100" isin="US0378331005" figi="BBG000B9XRY4" listingExchange="NASDAQ" tradeID="700000001" reportDate="{buy_date}" tradeDate="{buy_date}" tradeTime="143012" settleDateTarget="20261105" transactionType="ExchTrade" exchange="NASDAQ" quantity="10" tradePrice="180.25" tradeMoney="1802.5" proceeds="-1802.5" taxes="0" ibCommission="-1" ibCommissionCurrency="USD" netCash="-1803.5" closePrice="181" openCloseIndicator="O" cost="1803.5" fifoPnlRealized="0" buySell="BUY" transactionID="31000000001" ibOrderID="900000001" ibExecID="0000e0d5.6542a1b2.01.01" dateTime="{buy_date};143012" levelOfDetail="EXECUTION" />
<Trade accountId="U1234567" acctAlias="Main" currency="USD" fxRateToBase="1" assetCategory="STK" symbol="AAPL" description="APPLE INC" conid="265598" securityID="US0378331005" securityIDType="ISIN" cusip="037833100" isin="US0378331005" figi="BBG000B9XRY4" listingExchange="NASDAQ" tradeID="700000002" reportDate="20261120" tradeDate="20261120" tradeTime="100501" settleDateTarget="20261124" transactionType="ExchTrade" exchange="NASDAQ" quantity="-2" tradePrice="195" tradeMoney="-390" proceeds="390" taxes="0" ibCommission="-1.02" ibCommissionCurrency="USD" netCash="388.98" closePrice="195.5" openCloseIndicator="C" cost="-360.7" fifoPnlRealized="28.28" buySell="SELL" transactionID="31000000002" ibOrderID="900000002" ibExecID="0000e0d5.6542a1b3.01.01" dateTime="20261120;100501" levelOfDetail="EXECUTION" />
</Trades>
<CashTransactions>
<CashTransaction accountId="U1234567" acctAlias="Main" currency="USD" fxRateToBase="1" assetCategory="" symbol="" description="CASH RECEIPTS / ELECTRONIC FUND TRANSFERS" conid="" dateTime="20261102" settleDate="20261102" amount="5000" type="Deposits &amp; Withdrawals" transactionID="31000000000" reportDate="20261102" actionID="" levelOfDetail="DETAIL" />
<CashTransaction accountId="U1234567" acctAlias="Main" currency="USD" fxRateToBase="1" assetCategory="STK" symbol="AAPL" description="AAPL(US0378331005) CASH DIVIDEND USD 0.26 PER SHARE (Ordinary Dividend)" conid="265598" securityID="US0378331005" securityIDType="ISIN" cusip="037833100" isin="US0378331005" figi="BBG000B9XRY4" listingExchange="NASDAQ" dateTime="20261113;202000" settleDate="20261113" amount="2.6" type="Dividends" transactionID="31000000003" reportDate="20261113" actionID="150000001" levelOfDetail="DETAIL" />
<CashTransaction accountId="U1234567" acctAlias="Main" currency="USD" fxRateToBase="1" assetCategory="STK" symbol="AAPL" description="AAPL(US0378331005) CASH DIVIDEND USD 0.26 PER SHARE - US TAX" conid="265598" securityID="US0378331005" securityIDType="ISIN" cusip="037833100" isin="US0378331005" figi="BBG000B9XRY4" listingExchange="NASDAQ" dateTime="20261113;202000" settleDate="20261113" amount="-0.39" type="Withholding Tax" transactionID="31000000004" reportDate="20261113" actionID="150000001" levelOfDetail="DETAIL" />
<CashTransaction accountId="-" acctAlias="" currency="USD" fxRateToBase="1" assetCategory="STK" symbol="AAPL" description="AAPL(US0378331005) CASH DIVIDEND USD 0.26 PER SHARE (Ordinary Dividend)" conid="265598" dateTime="20261113" settleDate="20261113" amount="2.6" type="Dividends" transactionID="" reportDate="20261113" actionID="" levelOfDetail="SUMMARY" />
<CashTransaction accountId="U1234567" acctAlias="Main" currency="USD" fxRateToBase="1" assetCategory="" symbol="" description="USD CREDIT INT FOR OCT-2026" conid="" dateTime="20261104" settleDate="20261104" amount="1.45" type="Broker Interest Received" transactionID="31000000005" reportDate="20261104" actionID="" levelOfDetail="DETAIL" />
<CashTransaction accountId="U1234567" acctAlias="Main" currency="USD" fxRateToBase="1" assetCategory="" symbol="" description="OCT 2026 MARKET DATA SUBSCRIPTION" conid="" dateTime="20261103" settleDate="20261103" amount="-10" type="Other Fees" transactionID="31000000007" reportDate="20261103" actionID="" levelOfDetail="DETAIL" />
{later}
</CashTransactions>
</FlexStatement>
<FlexStatement accountId="U7654321" fromDate="20251128" toDate="20261127" period="Last365CalendarDays" whenGenerated="20261128;021512">
<AccountInformation accountId="U7654321" acctAlias="" currency="EUR" name="Ada Lovelace" accountType="Individual" customerType="Individual" dateOpened="20230301" />
<CashTransactions>
<CashTransaction accountId="U7654321" acctAlias="" currency="EUR" fxRateToBase="1" assetCategory="" symbol="" description="CASH RECEIPTS / ELECTRONIC FUND TRANSFERS" conid="" dateTime="20261110" settleDate="20261110" amount="250" type="Deposits &amp; Withdrawals" transactionID="32000000001" reportDate="20261110" actionID="" levelOfDetail="DETAIL" />
</CashTransactions>
</FlexStatement>
</FlexStatements>
</FlexQueryResponse>
"#
    )
}
