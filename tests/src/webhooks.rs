//! A webhook receiver for the end-to-end tests: `tests/webhook_receiver/
//! receive.py`, which verifies every delivery with the Standard Webhooks
//! reference library (`standardwebhooks` from PyPI, installed into a
//! virtualenv under the target directory on first use) and answers as the
//! test configures it.

use serde_json::Value;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The reference library's version the receiver verifies with.
const STANDARDWEBHOOKS: &str = "standardwebhooks==1.1.0";

/// A running receiver; killed on drop.
#[derive(Debug)]
pub struct Receiver {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
    /// Where it listens: `http://127.0.0.1:PORT/hook`.
    pub url: String,
}

impl Receiver {
    /// A receiver whose Python environment lives under `tmp` (the test's
    /// `CARGO_TARGET_TMPDIR`).
    pub fn start(tmp: &Path) -> Self {
        let python = crate::python::venv(
            &tmp.join("standardwebhooks-venv"),
            "import standardwebhooks",
            &[&[STANDARDWEBHOOKS]],
        );
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("webhook_receiver/receive.py");
        let mut child = Command::new(python)
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the webhook receiver starts");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut port = String::new();
        stdout.read_line(&mut port).unwrap();
        let port: u16 = port.trim().parse().expect("the receiver prints its port");
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { return };
                if let Ok(value) = serde_json::from_str(&line)
                    && send.send(value).is_err()
                {
                    return;
                }
            }
        });
        Receiver {
            child,
            stdin,
            lines,
            url: format!("http://127.0.0.1:{port}/hook"),
        }
    }

    /// Replaces the receiver's configuration (`secrets`, `fail_first`,
    /// `status`, `hold_first`) and waits until it took it.
    pub fn configure(&mut self, config: Value) {
        writeln!(self.stdin, "{config}").unwrap();
        self.stdin.flush().unwrap();
        let answer = self.next();
        assert!(answer.get("configured").is_some(), "{answer}");
    }

    /// The next line it printed (a delivery it answered, or one it holds),
    /// waiting up to a minute.
    pub fn next(&self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(60))
            .expect("the receiver heard nothing for a minute")
    }

    /// A line already printed, without waiting.
    pub fn try_next(&self) -> Option<Value> {
        self.lines.try_recv().ok()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
