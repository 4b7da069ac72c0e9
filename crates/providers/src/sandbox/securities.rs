//! The sandbox brokerage's securities. Identifiers are the real ones; where a
//! security has none of a kind (European shares have no CUSIP) it is `None`
//! rather than invented.

use tributary_domain::snapshot::Security;

pub(super) struct Listed {
    pub name: &'static str,
    pub currency: &'static str,
    pub ticker: &'static str,
    pub exchange: &'static str,
    pub figi: Option<&'static str>,
    pub cusip: Option<&'static str>,
    pub isin: &'static str,
    /// Price around which the sandbox quotes move, in `currency`, in cents.
    pub base_price_cents: i64,
}

pub(super) const LISTED: &[Listed] = &[
    Listed {
        name: "Apple Inc.",
        currency: "USD",
        ticker: "AAPL",
        exchange: "XNAS",
        figi: Some("BBG000B9XRY4"),
        cusip: Some("037833100"),
        isin: "US0378331005",
        base_price_cents: 22_500,
    },
    Listed {
        name: "Microsoft Corporation",
        currency: "USD",
        ticker: "MSFT",
        exchange: "XNAS",
        figi: Some("BBG000BPH459"),
        cusip: Some("594918104"),
        isin: "US5949181045",
        base_price_cents: 42_000,
    },
    Listed {
        name: "NVIDIA Corporation",
        currency: "USD",
        ticker: "NVDA",
        exchange: "XNAS",
        figi: Some("BBG000BBJQV0"),
        cusip: Some("67066G104"),
        isin: "US67066G1040",
        base_price_cents: 13_500,
    },
    Listed {
        name: "SAP SE",
        currency: "EUR",
        ticker: "SAP",
        exchange: "XETR",
        figi: None,
        cusip: None,
        isin: "DE0007164600",
        base_price_cents: 23_000,
    },
    Listed {
        name: "ASML Holding N.V.",
        currency: "EUR",
        ticker: "ASML",
        exchange: "XAMS",
        figi: None,
        cusip: None,
        isin: "NL0010273215",
        base_price_cents: 68_000,
    },
];

impl Listed {
    pub fn security(&self) -> Security {
        Security {
            name: self.name.to_owned(),
            currency: self.currency.to_owned(),
            ticker: Some(self.ticker.to_owned()),
            figi: self.figi.map(str::to_owned),
            cusip: self.cusip.map(str::to_owned),
            isin: Some(self.isin.to_owned()),
        }
    }
}
