//! [`SendLimiter`], the per-user rate of sends across every channel (`[comms] sends_per_minute`),
//! which [`Comms`](crate::comms::Comms) holds and the send path takes from.

use std::num::NonZeroU32;

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// Messages per user per minute, across every channel.
pub(crate) struct SendLimiter {
    pub(crate) per_minute: u32,
    limiter: Option<DefaultKeyedRateLimiter<String>>,
}

impl SendLimiter {
    pub(crate) fn new(per_minute: u32) -> SendLimiter {
        let limiter = NonZeroU32::new(per_minute)
            .map(|n| RateLimiter::keyed(Quota::per_minute(n).allow_burst(n)));
        SendLimiter {
            per_minute,
            limiter,
        }
    }

    /// Takes one send from `user`'s budget; `false` when it is used up (or the limit is 0).
    pub(crate) fn take(&self, user: &str) -> bool {
        self.limiter
            .as_ref()
            .is_some_and(|l| l.check_key(&user.to_owned()).is_ok())
    }
}
