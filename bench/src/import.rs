//! Import throughput: a generated OFX statement of N transactions read and
//! stored the way `POST /imports` stores it (the reader, the reconciler,
//! one transaction), beside a raw bulk insert of the very same rows into a
//! fresh account of the same schema, each on a fresh database, with this
//! process's peak RSS meanwhile.

use anyhow::Context as _;
use std::fmt::Write as _;
use std::time::{Duration, Instant};
use tributary_domain::enrich;
use tributary_providers::import::{self, Format};
use tributary_storage::testing::{GENERATED_MERCHANTS, TestDatabase, insert_transactions};
use tributary_storage::users;

/// An OFX 2 bank statement with `rows` distinct transactions, seven a day
/// back from 2026-11-24.
pub fn ofx_statement(rows: usize) -> Vec<u8> {
    let newest = chrono::NaiveDate::from_ymd_opt(2026, 11, 24).unwrap_or_default();
    let day = |n: usize| {
        let back = chrono::Days::new(u64::try_from(n / 7).unwrap_or(0));
        (newest - back).format("%Y%m%d").to_string()
    };
    let mut out = String::with_capacity(rows * 220 + 1024);
    out.push_str(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <?OFX OFXHEADER=\"200\" VERSION=\"220\" SECURITY=\"NONE\" OLDFILEUID=\"NONE\" NEWFILEUID=\"NONE\"?>\n\
         <OFX><SIGNONMSGSRSV1><SONRS><STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY></STATUS>\
         <DTSERVER>20261124</DTSERVER><LANGUAGE>ENG</LANGUAGE></SONRS></SIGNONMSGSRSV1>\n\
         <BANKMSGSRSV1><STMTTRNRS><TRNUID>1</TRNUID><STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY></STATUS>\
         <STMTRS><CURDEF>EUR</CURDEF><BANKACCTFROM><BANKID>10020030</BANKID><ACCTID>9876543210</ACCTID>\
         <ACCTTYPE>CHECKING</ACCTTYPE></BANKACCTFROM><BANKTRANLIST>\n",
    );
    let _ = writeln!(
        out,
        "<DTSTART>{}</DTSTART><DTEND>20261124</DTEND>",
        day(rows.saturating_sub(1))
    );
    for n in 0..rows {
        let merchant = GENERATED_MERCHANTS[n % GENERATED_MERCHANTS.len()];
        let cents = n % 9_973 + 101;
        let _ = writeln!(
            out,
            "<STMTTRN><TRNTYPE>DEBIT</TRNTYPE><DTPOSTED>{}</DTPOSTED><TRNAMT>-{}.{:02}</TRNAMT>\
             <FITID>B{n:08}</FITID><NAME>{merchant}</NAME><MEMO>card payment {n}</MEMO></STMTTRN>",
            day(n),
            cents / 100,
            cents % 100,
        );
    }
    out.push_str(
        "</BANKTRANLIST><LEDGERBAL><BALAMT>1000.00</BALAMT><DTASOF>20261124</DTASOF></LEDGERBAL>\
         </STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n",
    );
    out.into_bytes()
}

/// One backend's figures for one file size.
pub struct Measured {
    pub parse: Duration,
    pub store: Duration,
    pub raw: Duration,
    /// Enrichment alone (`domain::enrich`) over the same rows: the part of
    /// the store (and of the raw insert, which writes the same values) it
    /// costs.
    pub enrichment: Duration,
    pub peak_rss_mib: u64,
}

/// Reads and stores the file on a fresh database, then bulk-inserts the
/// same rows on another.
pub fn measure(backend: &str, rows: usize) -> anyhow::Result<Measured> {
    let fresh = || match backend {
        "sqlite" => Ok(TestDatabase::sqlite()),
        _ => TestDatabase::postgres().context("no PostgreSQL server answers"),
    };
    let file = ofx_statement(rows);
    let now = chrono::Utc::now().naive_utc();
    crate::memory::reset_peak("self")?;

    let started = Instant::now();
    let statements = import::parse(&file, Some(Format::Ofx))?;
    let parse = started.elapsed();
    drop(file);
    let read: usize = statements.iter().map(|s| s.transactions.len()).sum();
    anyhow::ensure!(
        read == rows,
        "the reader found {read} of {rows} transactions"
    );
    let imported = fresh()?;
    let mut conn = imported.db().conn()?;
    let user = users::create_personal_user(&mut conn, "import@example.com", now)?;
    let started = Instant::now();
    let summary = import::store(&mut conn, user.id, statements, now)?;
    let store = started.elapsed();
    anyhow::ensure!(summary.added == rows, "stored {} of {rows}", summary.added);
    drop(conn);
    let peak_rss_mib = crate::memory::memory_mib("self", "VmHWM:")?;

    // The same rows, read again for the raw insert once the peak is taken.
    let same_rows: Vec<_> = import::parse(&ofx_statement(rows), Some(Format::Ofx))?
        .into_iter()
        .flat_map(|s| s.transactions)
        .collect();
    let started = Instant::now();
    for t in &same_rows {
        std::hint::black_box(enrich::enrich(&enrich::Raw {
            merchant: t.merchant.as_deref(),
            description: t.description.as_deref(),
            amount: t.amount,
            hints: &t.hints,
        }));
    }
    let enrichment = started.elapsed();
    let raw_db = fresh()?;
    let (_, account) =
        tributary_storage::testing::empty_account(raw_db.db(), "raw@example.com", now)?;
    let started = Instant::now();
    insert_transactions(raw_db.db(), account, &same_rows)?;
    let raw = started.elapsed();
    Ok(Measured {
        parse,
        store,
        raw,
        enrichment,
        peak_rss_mib,
    })
}
