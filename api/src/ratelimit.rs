//! A token bucket per bearer token for state-changing calls (generous: honest clients never
//! meet it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::error::ApiError;

pub struct RateLimiter {
    per_second: f64,
    burst: f64,
    buckets: Mutex<HashMap<Arc<str>, Bucket>>,
}

struct Bucket {
    tokens: f64,
    at: Instant,
}

impl RateLimiter {
    pub fn new(per_second: f64, burst: f64) -> RateLimiter {
        RateLimiter {
            per_second: per_second.max(0.001),
            burst: burst.max(1.0),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one token for `key`, or says how many seconds to wait.
    pub fn check(&self, key: &Arc<str>) -> Result<(), ApiError> {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() > 100_000 {
            // Forget idle buckets (full ones) so the map stays small.
            let (rate, burst) = (self.per_second, self.burst);
            buckets.retain(|_, b| b.tokens + now.duration_since(b.at).as_secs_f64() * rate < burst);
        }
        let bucket = buckets.entry(key.clone()).or_insert(Bucket {
            tokens: self.burst,
            at: now,
        });
        bucket.tokens = (bucket.tokens
            + now.duration_since(bucket.at).as_secs_f64() * self.per_second)
            .min(self.burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            let wait = ((1.0 - bucket.tokens) / self.per_second).ceil().max(1.0);
            Err(ApiError::RateLimited(wait as u64))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_passes_then_the_bucket_refuses_with_a_wait() {
        let limiter = RateLimiter::new(1.0, 3.0);
        let key: Arc<str> = Arc::from("token");
        for _ in 0..3 {
            assert!(limiter.check(&key).is_ok());
        }
        assert!(matches!(limiter.check(&key), Err(ApiError::RateLimited(1))));
        let other: Arc<str> = Arc::from("other");
        assert!(limiter.check(&other).is_ok(), "buckets are per token");
    }
}
