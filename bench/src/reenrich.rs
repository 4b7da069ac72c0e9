//! Enriching a long history again after a rule changes
//! (docs/enrichment.md, "Enriching again"): one account of N generated
//! transactions, a rule that matches one merchant of the generated ones,
//! and the workers' batches run to the end on this thread while another
//! thread keeps reading the account's newest 100 rows, as a client would.
//! Prints rows/s, the batches and the longest (how long a sync of the same
//! person could wait behind one), and the reads' latency meanwhile beside
//! the same reads with nothing running.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tributary_domain::enrich::rules::{Actions, Conditions, Rule};
use tributary_domain::ids::AccountId;
use tributary_domain::taxonomy::Subcategory;
use tributary_storage::read::{self, TransactionFilter};
use tributary_storage::testing::empty_account;
use tributary_storage::testing::{
    GENERATED_MERCHANTS, TestDatabase, insert_generated_transactions,
};
use tributary_storage::{Database, reenrich, rules};

/// One backend's figures for one history.
pub struct Measured {
    pub rows: usize,
    pub changed: i64,
    pub whole: Duration,
    pub batches: usize,
    pub longest_batch: Duration,
    /// Reads of the newest 100 rows: (p50, max) with nothing running, and
    /// while the batches ran.
    pub reads_alone: (Duration, Duration),
    pub reads_meanwhile: (Duration, Duration),
}

/// Reads of the account's newest 100 rows until `stop`, each timed.
fn keep_reading(
    db: &Database,
    account: AccountId,
    stop: &AtomicBool,
) -> anyhow::Result<Vec<Duration>> {
    let mut conn = db.conn()?;
    let filter = TransactionFilter::default();
    let mut took = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        let rows = read::list_transactions(&mut conn, account, &filter, Some(100), None)?;
        took.push(started.elapsed());
        anyhow::ensure!(rows.len() == 100, "a read saw {} rows", rows.len());
    }
    Ok(took)
}

fn p50_and_max(mut took: Vec<Duration>) -> (Duration, Duration) {
    took.sort();
    (
        took.get(took.len() / 2).copied().unwrap_or_default(),
        took.last().copied().unwrap_or_default(),
    )
}

pub fn measure(database: &TestDatabase, rows: usize) -> anyhow::Result<Measured> {
    let db = database.db();
    let now = chrono::Utc::now().naive_utc();
    let (user, account) = empty_account(db, "reenrich@bench.example", now)?;
    let newest = chrono::NaiveDate::from_ymd_opt(2026, 11, 24).unwrap_or_default();
    insert_generated_transactions(db, account, rows, newest)?;
    let stop = AtomicBool::new(false);

    // The reads alone, for as long as a tenth of a second.
    let reads_alone = std::thread::scope(|scope| {
        let reader = scope.spawn(|| keep_reading(db, account, &stop));
        std::thread::sleep(Duration::from_millis(100));
        stop.store(true, Ordering::Relaxed);
        reader
            .join()
            .map_err(|_| anyhow::anyhow!("the reader panicked"))?
    })?;

    let rule = Rule {
        when: Conditions {
            merchant: Some(GENERATED_MERCHANTS[0].to_owned()),
            ..Conditions::default()
        },
        then: Actions {
            merchant: None,
            subcategory: Subcategory::from_id("education.books"),
        },
    };
    let mut conn = db.conn()?;
    rules::create(&mut conn, user, &rule, now)?;
    stop.store(false, Ordering::Relaxed);
    let (whole, batches, longest, reads_meanwhile) = std::thread::scope(|scope| {
        let reader = scope.spawn(|| keep_reading(db, account, &stop));
        let started = Instant::now();
        let (mut batches, mut longest) = (0, Duration::ZERO);
        loop {
            let batch = Instant::now();
            match reenrich::advance(&mut conn, now)? {
                Some(_) => {
                    batches += 1;
                    longest = longest.max(batch.elapsed());
                }
                None => break,
            }
        }
        let whole = started.elapsed();
        stop.store(true, Ordering::Relaxed);
        let reads = reader
            .join()
            .map_err(|_| anyhow::anyhow!("the reader panicked"))??;
        anyhow::Ok((whole, batches, longest, reads))
    })?;
    let progress = reenrich::progress(&mut conn, user)?
        .ok_or_else(|| anyhow::anyhow!("no run was recorded"))?;
    anyhow::ensure!(
        progress.finished_at.is_some() && progress.checked == rows as i64,
        "the run read {} of {rows} rows",
        progress.checked
    );
    Ok(Measured {
        rows,
        changed: progress.changed,
        whole,
        batches,
        longest_batch: longest,
        reads_alone: p50_and_max(reads_alone),
        reads_meanwhile: p50_and_max(reads_meanwhile),
    })
}
