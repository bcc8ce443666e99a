//! Request rate limits: per user and per host, as keyed GCRA token buckets (governor).
//!
//! A quota of N a minute allows a burst of N and then one more every 60/N seconds, so an
//! agent loop cannot hammer a site, and the refusal says exactly when the next request may go.

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::error::WebError;

/// The per-user and per-host buckets; a limit of 0 is no limit.
pub(crate) struct Limits {
    clock: DefaultClock,
    per_user: Option<DefaultKeyedRateLimiter<String>>,
    per_host: Option<DefaultKeyedRateLimiter<String>>,
}

impl std::fmt::Debug for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limits")
            .field("per_user", &self.per_user.is_some())
            .field("per_host", &self.per_host.is_some())
            .finish()
    }
}

impl Limits {
    pub(crate) fn new(per_user_per_minute: u32, per_host_per_minute: u32) -> Self {
        let keyed = |n: u32| NonZeroU32::new(n).map(|n| RateLimiter::keyed(Quota::per_minute(n)));
        Self {
            clock: DefaultClock::default(),
            per_user: keyed(per_user_per_minute),
            per_host: keyed(per_host_per_minute),
        }
    }

    pub(crate) fn check_user(&self, user: &str) -> Result<(), WebError> {
        self.check(self.per_user.as_ref(), user, "user")
    }

    pub(crate) fn check_host(&self, host: &str) -> Result<(), WebError> {
        self.check(self.per_host.as_ref(), host, "host")
    }

    fn check(
        &self,
        limiter: Option<&DefaultKeyedRateLimiter<String>>,
        key: &str,
        what: &str,
    ) -> Result<(), WebError> {
        let Some(limiter) = limiter else {
            return Ok(());
        };
        limiter
            .check_key(&key.to_string())
            .map_err(|not_until| WebError::RateLimited {
                scope: format!("{what} {key}"),
                retry_after: not_until
                    .wait_time_from(self.clock.now())
                    .max(Duration::from_millis(1)),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eleventh_request_waits_about_six_seconds() {
        let limits = Limits::new(10, 0);
        for _ in 0..10 {
            assert!(limits.check_user("alice").is_ok());
        }
        match limits.check_user("alice") {
            Err(WebError::RateLimited { retry_after, scope }) => {
                assert_eq!(scope, "user alice");
                assert!(
                    retry_after > Duration::from_secs(5) && retry_after <= Duration::from_secs(6)
                );
            }
            other => panic!("expected RateLimited, got {other:?}"),
        }
        // Another user has their own bucket; no host limit configured.
        assert!(limits.check_user("bob").is_ok());
        assert!(limits.check_host("example.test").is_ok());
    }
}
