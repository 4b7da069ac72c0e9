//! Reader throughput per file: every MT940 and OFX file of the shared test
//! data in which the Python parser of its format finds transactions (mt-940;
//! ofxtools, parse and convert), read alone and imported by Tributary (read, then stored into a fresh
//! user's accounts on SQLite in one transaction, as `POST /imports` does)
//! beside the Python parser reading it alone. Each side's figure for a file
//! is the median of the same number of rounds.

use anyhow::Context as _;
use std::collections::HashMap;
use std::time::{Duration, Instant};
use tributary_providers::import::{self, Format};
use tributary_storage::testing::{TestDatabase, testdata_files, testdata_root};
use tributary_storage::users;

/// One format's comparison.
pub struct Compared {
    pub format: &'static str,
    /// Files both sides read.
    pub files: usize,
    /// Files the Python parser reads and Tributary refuses (named).
    pub refused: Vec<String>,
    /// Sums of the per-file medians: Tributary's reader alone, Tributary's
    /// import (read and store), the Python parser.
    pub read: Duration,
    pub import: Duration,
    pub python: Duration,
    /// The file where Tributary's lead is smallest, and that lead (Python's
    /// time over Tributary's) in thousandths.
    pub worst: (String, u128),
}

struct Corpus {
    format: &'static str,
    reader: Format,
    dirs: &'static [&'static str],
    extensions: &'static [&'static str],
}

const CORPORA: [Corpus; 2] = [
    Corpus {
        format: "mt940",
        reader: Format::Mt940,
        dirs: &["mt940-wolph", "mt940-rs", "zilverline-mt940"],
        extensions: &["sta", "txt", "940", "mt940"],
    },
    Corpus {
        format: "ofx",
        reader: Format::Ofx,
        dirs: &[
            "ofxparse/fixtures",
            "asgrim-ofxparser/fixtures",
            "actualbudget/ofx",
        ],
        extensions: &["ofx", "qfx"],
    },
];

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

/// The Python parser's median seconds per file it reads.
fn python_times(
    python: &str,
    format: &str,
    rounds: usize,
    files: &[String],
) -> anyhow::Result<HashMap<String, Duration>> {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("parsers.py");
    let output = std::process::Command::new(python)
        .arg(&script)
        .arg(format)
        .arg(rounds.to_string())
        .args(files)
        .output()
        .with_context(|| format!("running {python} {}", script.display()))?;
    anyhow::ensure!(
        output.status.success(),
        "{python} {} failed (are mt-940 and ofxtools installed? `make bench` installs them): {}",
        script.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let seconds: HashMap<String, Option<f64>> =
        serde_json::from_slice(&output.stdout).context("reading the Python parsers' answer")?;
    Ok(seconds
        .into_iter()
        .filter_map(|(file, s)| Some((file, Duration::from_secs_f64(s?))))
        .collect())
}

/// Compares both formats, each file `rounds` times on each side.
pub fn compare(python: &str, rounds: usize) -> anyhow::Result<Vec<Compared>> {
    let root = testdata_root();
    let database = TestDatabase::sqlite();
    let mut conn = database.db().conn()?;
    let now = chrono::Utc::now().naive_utc();
    let mut users_made = 0usize;
    let mut out = Vec::new();
    for corpus in &CORPORA {
        let files: Vec<String> = corpus
            .dirs
            .iter()
            .flat_map(|dir| testdata_files(dir, corpus.extensions))
            .map(|file| root.join(file).to_string_lossy().into_owned())
            .collect();
        let python = python_times(python, corpus.format, rounds, &files)?;
        let mut compared = Compared {
            format: corpus.format,
            files: 0,
            refused: Vec::new(),
            read: Duration::ZERO,
            import: Duration::ZERO,
            python: Duration::ZERO,
            worst: (String::new(), u128::MAX),
        };
        let root_text = root.to_string_lossy().into_owned();
        let relative = |file: &str| {
            let name = file.strip_prefix(root_text.as_str()).unwrap_or(file);
            name.trim_start_matches('/').to_owned()
        };
        for file in &files {
            let Some(&theirs) = python.get(file) else {
                continue;
            };
            let bytes = std::fs::read(file)?;
            if import::parse(&bytes, Some(corpus.reader)).is_err() {
                compared.refused.push(relative(file));
                continue;
            }
            let mut reads = Vec::with_capacity(rounds);
            for _ in 0..rounds {
                let started = Instant::now();
                std::hint::black_box(import::parse(&bytes, Some(corpus.reader))?);
                reads.push(started.elapsed());
            }
            let mut times = Vec::with_capacity(rounds);
            for _ in 0..rounds {
                // A fresh user each round: every import is a first import.
                users_made += 1;
                let email = format!("parsers{users_made}@example.com");
                let user = users::create_personal_user(&mut conn, &email, now)?;
                let started = Instant::now();
                let statements = import::parse(&bytes, Some(corpus.reader))?;
                import::store(&mut conn, user.id, statements, now)?;
                times.push(started.elapsed());
            }
            let ours = median(times);
            compared.files += 1;
            compared.read += median(reads);
            compared.import += ours;
            compared.python += theirs;
            let lead = theirs.as_nanos() * 1000 / ours.as_nanos().max(1);
            if lead < compared.worst.1 {
                compared.worst = (relative(file), lead);
            }
        }
        out.push(compared);
    }
    Ok(out)
}
