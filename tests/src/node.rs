//! Third-party Node.js tools the tests drive (the MCP Inspector), installed
//! from npm into a directory under the target directory on first use. A
//! test that needs them fails, never skips, when they cannot be installed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// `entry` (a path inside `node_modules`) of the npm packages `packages`
/// (`name@version`) installed into `dir` (a test's
/// `CARGO_TARGET_TMPDIR/name`); installed on first use.
pub fn package(dir: &Path, packages: &[&str], entry: &str) -> PathBuf {
    // Tests of one binary run in parallel threads and may ask at once.
    static INSTALLING: Mutex<()> = Mutex::new(());
    let _installing = INSTALLING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let path = dir.join("node_modules").join(entry);
    let stamp = dir.join("installed.txt");
    let wanted = packages.join(" ");
    if path.exists() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return path;
    }
    // A half-made install (an interrupted run) is made again.
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let output = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(dir)
        .args(packages)
        .output()
        .unwrap_or_else(|e| panic!("installing {wanted} needs npm (Node.js): {e}"));
    assert!(
        output.status.success(),
        "installing {wanted} from npm failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        path.exists(),
        "{} is missing after installing {wanted}",
        path.display()
    );
    std::fs::write(&stamp, &wanted).unwrap_or_else(|e| panic!("{}: {e}", stamp.display()));
    path
}
