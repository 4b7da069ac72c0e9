//! Import throughput: a generated OFX statement of N transactions written to
//! a file and imported the way `tributary import` imports it (two passes
//! over the file, the reconciler, one database transaction), beside a raw
//! bulk insert of the very same rows into a fresh account of the same
//! schema, each on a fresh database, with this process's peak RSS during
//! the import.

use anyhow::Context as _;
use std::time::{Duration, Instant};
use tributary_domain::enrich;
use tributary_providers::import::{self, Format, ofx};
use tributary_storage::testing::{GENERATED_MERCHANTS, TestDatabase, insert_transactions};
use tributary_storage::users;

/// Writes an OFX 2 bank statement with `rows` distinct transactions, seven
/// a day back from 2026-11-24, a line at a time.
pub fn write_ofx_statement(rows: usize, out: &mut impl std::io::Write) -> std::io::Result<()> {
    let newest = chrono::NaiveDate::from_ymd_opt(2026, 11, 24).unwrap_or_default();
    let day = |n: usize| {
        let back = chrono::Days::new(u64::try_from(n / 7).unwrap_or(0));
        (newest - back).format("%Y%m%d").to_string()
    };
    out.write_all(
        b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <?OFX OFXHEADER=\"200\" VERSION=\"220\" SECURITY=\"NONE\" OLDFILEUID=\"NONE\" NEWFILEUID=\"NONE\"?>\n\
         <OFX><SIGNONMSGSRSV1><SONRS><STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY></STATUS>\
         <DTSERVER>20261124</DTSERVER><LANGUAGE>ENG</LANGUAGE></SONRS></SIGNONMSGSRSV1>\n\
         <BANKMSGSRSV1><STMTTRNRS><TRNUID>1</TRNUID><STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY></STATUS>\
         <STMTRS><CURDEF>EUR</CURDEF><BANKACCTFROM><BANKID>10020030</BANKID><ACCTID>9876543210</ACCTID>\
         <ACCTTYPE>CHECKING</ACCTTYPE></BANKACCTFROM><BANKTRANLIST>\n",
    )?;
    writeln!(
        out,
        "<DTSTART>{}</DTSTART><DTEND>20261124</DTEND>",
        day(rows.saturating_sub(1))
    )?;
    for n in 0..rows {
        let merchant = GENERATED_MERCHANTS[n % GENERATED_MERCHANTS.len()];
        let cents = n % 9_973 + 101;
        writeln!(
            out,
            "<STMTTRN><TRNTYPE>DEBIT</TRNTYPE><DTPOSTED>{}</DTPOSTED><TRNAMT>-{}.{:02}</TRNAMT>\
             <FITID>B{n:08}</FITID><NAME>{merchant}</NAME><MEMO>card payment {n}</MEMO></STMTTRN>",
            day(n),
            cents / 100,
            cents % 100,
        )?;
    }
    out.write_all(
        b"</BANKTRANLIST><LEDGERBAL><BALAMT>1000.00</BALAMT><DTASOF>20261124</DTASOF></LEDGERBAL>\
         </STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n",
    )
}

/// One backend's figures for one file size.
pub struct Measured {
    /// The reader's first pass alone (statements, no transactions).
    pub first_pass: Duration,
    /// The whole import: both passes, reconciling and storing.
    pub import: Duration,
    pub raw: Duration,
    /// Enrichment alone (`domain::enrich`) over the same rows: the part of
    /// the import (and of the raw insert, which writes the same values) it
    /// costs.
    pub enrichment: Duration,
    /// This process's peak RSS from just before the import to its end.
    pub peak_rss_mib: u64,
}

/// Imports the file on a fresh database, then bulk-inserts the same rows on
/// another.
pub fn measure(backend: &str, rows: usize) -> anyhow::Result<Measured> {
    let fresh = || match backend {
        "sqlite" => Ok(TestDatabase::sqlite()),
        _ => TestDatabase::postgres().context("no PostgreSQL server answers"),
    };
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("statement.ofx");
    {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
        write_ofx_statement(rows, &mut out)?;
        std::io::Write::flush(&mut out)?;
    }
    let now = chrono::Utc::now().naive_utc();
    let imported = fresh()?;
    let mut conn = imported.db().conn()?;
    let user = users::create_personal_user(&mut conn, "import@example.com", now)?;

    let started = Instant::now();
    let surveyed = ofx::survey(ofx::Source::Path(&path))?;
    let first_pass = started.elapsed();
    anyhow::ensure!(
        surveyed.statements.len() == 1,
        "the reader found {} statements",
        surveyed.statements.len()
    );
    drop(surveyed);

    crate::memory::reset_peak("self")?;
    let started = Instant::now();
    let summary = import::store_ofx_file(
        &mut conn,
        user.id,
        &path,
        &import::ImportTarget::Automatic,
        now,
    )?;
    let import = started.elapsed();
    let peak_rss_mib = crate::memory::memory_mib("self", "VmHWM:")?;
    anyhow::ensure!(summary.added == rows, "stored {} of {rows}", summary.added);
    drop(conn);

    // The same rows, read whole for the raw insert once the peak is taken.
    let same_rows: Vec<_> = import::parse(&std::fs::read(&path)?, Some(Format::Ofx))?
        .into_iter()
        .flat_map(|s| s.transactions)
        .collect();
    anyhow::ensure!(
        same_rows.len() == rows,
        "read {} of {rows}",
        same_rows.len()
    );
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
        first_pass,
        import,
        raw,
        enrichment,
        peak_rss_mib,
    })
}
