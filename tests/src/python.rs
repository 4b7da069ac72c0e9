//! Third-party Python tools the tests drive (SimpleFIN clients, an OpenAPI
//! validator, schemathesis), installed from PyPI into virtualenvs under
//! the target directory on first use. A test that needs them fails, never
//! skips, when they cannot be installed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The Python of the virtualenv at `venv` (a test's
/// `CARGO_TARGET_TMPDIR/name`) in which `imports` (a Python statement)
/// succeeds; made on first use by running pip once per entry of
/// `installs` (the arguments after `pip install --quiet`).
pub fn venv(venv: &Path, imports: &str, installs: &[&[&str]]) -> PathBuf {
    // Tests of one binary run in parallel threads, and tests run as
    // processes of their own (cargo-nextest), and may ask for the same
    // virtualenv at once: one makes it while the others wait (a lock file
    // beside it, for processes; a mutex, for the threads of one), then find
    // it.
    static MAKING: Mutex<()> = Mutex::new(());
    let _making = MAKING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let name = venv.display();
    if let Some(parent) = venv.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let lock_file = std::fs::File::create(venv.with_extension("lock"))
        .unwrap_or_else(|e| panic!("{name}: its lock file cannot be made: {e}"));
    lock_file
        .lock()
        .unwrap_or_else(|e| panic!("{name}: its lock file cannot be locked: {e}"));
    let python = venv.join("bin/python");
    let importable = |python: &Path| {
        Command::new(python)
            .args(["-c", imports])
            .status()
            .is_ok_and(|s| s.success())
    };
    if importable(&python) {
        return python;
    }
    // A half-made virtualenv (an interrupted run) is made again.
    let _ = std::fs::remove_dir_all(venv);
    let run = |command: &mut Command| {
        let output = command
            .output()
            .unwrap_or_else(|e| panic!("{name} needs python3 with venv: {e}"));
        assert!(
            output.status.success(),
            "installing {name} from PyPI failed ({command:?}):\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    run(Command::new("python3").arg("-m").arg("venv").arg(venv));
    let pip = venv.join("bin/pip");
    for install in installs {
        run(Command::new(&pip)
            .args(["install", "--quiet"])
            .args(*install));
    }
    assert!(
        importable(&python),
        "{name}: `{imports}` fails after installing"
    );
    python
}
