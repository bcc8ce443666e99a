//! Property tests that double as a long-running fuzzer.
//!
//! [`check`] runs a property with proptest: in an ordinary `cargo test` for a fixed number of
//! cases (`PROPTEST_CASES`, default 256), so it is part of every CI run; with
//! `CAIRN_FUZZ_SECONDS=N` set, it keeps generating fresh cases for N seconds and prints how many
//! it ran, so the same test is the long-running mode (`docs/fuzzing.md`). A failure is shrunk
//! by proptest and reported with the minimal input either way.

use std::time::{Duration, Instant};

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

/// How long the long-running mode runs each property, from `CAIRN_FUZZ_SECONDS`.
pub fn fuzz_duration() -> Option<Duration> {
    let secs: u64 = std::env::var("CAIRN_FUZZ_SECONDS")
        .ok()?
        .trim()
        .parse()
        .ok()?;
    (secs > 0).then(|| Duration::from_secs(secs))
}

/// Runs `property` on values of `strategy`; panics (failing the test) with the shrunk input
/// when a case fails. `name` is printed in the long-running mode's report.
#[track_caller]
pub fn check<S, F>(name: &str, strategy: S, property: F)
where
    S: Strategy,
    S::Value: std::fmt::Debug,
    F: Fn(S::Value) -> Result<(), TestCaseError>,
{
    // `Config::default()` reads `PROPTEST_CASES` (256 without it).
    let config = Config {
        // No persistence files in the source tree: a failure is reported by its minimal input.
        failure_persistence: None,
        ..Config::default()
    };
    let cases = config.cases;
    match fuzz_duration() {
        None => {
            let mut runner = TestRunner::new(config);
            if let Err(e) = runner.run(&strategy, &property) {
                panic!("property `{name}` failed: {e}");
            }
        }
        Some(budget) => {
            let started = Instant::now();
            let mut rounds: u64 = 0;
            let mut seed: u64 = std::process::id().into();
            while started.elapsed() < budget {
                // A new seed every round, so a long run explores, not replays.
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let mut bytes = [0u8; 32];
                for (i, chunk) in bytes.chunks_mut(8).enumerate() {
                    chunk.copy_from_slice(
                        &(seed ^ (i as u64).wrapping_mul(0x9e37_79b9)).to_le_bytes(),
                    );
                }
                let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
                let mut runner = TestRunner::new_with_rng(config.clone(), rng);
                if let Err(e) = runner.run(&strategy, &property) {
                    panic!(
                        "property `{name}` failed after {:.0?} ({} cases): {e}",
                        started.elapsed(),
                        rounds * u64::from(cases)
                    );
                }
                rounds += 1;
            }
            eprintln!(
                "fuzz `{name}`: {} cases in {:.0?}, no failure",
                rounds * u64::from(cases),
                started.elapsed()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_false_property_fails_with_its_input() {
        let outcome = std::panic::catch_unwind(|| {
            check("below 1234", 0u32..5000, |n| {
                proptest::prop_assert!(n < 1234);
                Ok(())
            })
        });
        let message = match outcome {
            Ok(()) => String::from("no failure"),
            Err(p) => p
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_else(|| String::from("non-string panic")),
        };
        // Shrunk to the boundary.
        assert!(message.contains("minimal failing input: 1234"), "{message}");
    }
}
