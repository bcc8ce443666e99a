//! This process's memory as the kernel counts it, for tests that assert a hostile input is read
//! in bounded memory: the peak resident set (`VmHWM`) before and after the call.

// A test helper: a missing measurement fails the test that asked for it.
#![allow(clippy::expect_used)]

/// The peak resident memory of this process so far (`VmHWM` of `/proc/self/status`), in KiB.
///
/// # Panics
/// When `/proc/self/status` has no readable `VmHWM` line (not Linux): the test cannot measure
/// what it asserts, and says so.
pub fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmHWM line in /proc/self/status")
}
