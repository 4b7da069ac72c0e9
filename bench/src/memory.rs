//! A process's memory as Linux reports it, for the import benchmark's
//! peaks.

use anyhow::Context as _;

/// A memory field of `/proc/<pid>/status` (`pid` may be `self`), in MiB.
pub(crate) fn memory_mib(pid: &str, name: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(name))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map(|kib| kib / 1024)
        .with_context(|| format!("{name} in /proc/{pid}/status"))
}

/// Starts a process's VmHWM again from its present RSS (`clear_refs` 5).
pub(crate) fn reset_peak(pid: &str) -> anyhow::Result<()> {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5")?;
    Ok(())
}
