//! Token buckets: one per player for state-changing calls, one per client address for
//! sign-ups and one for the other calls without a token ([`ByAddress`]) (generous: honest
//! clients never meet them).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use std::net::{IpAddr, Ipv6Addr};

use crate::config::Cidr;
use actix_web::HttpRequest;
use service::Error;

use crate::error::ApiError;

/// The key of a caller's per-address buckets: the connection's peer or, when the peer is one of
/// the trusted proxies (`DISCS_TRUSTED_PROXIES`), the nearest address in `X-Forwarded-For`
/// that is not (read from the right: the proxies append, a client may forge the left); an IPv6
/// address counts by its /64, the block one subscriber holds.
pub fn client_key(req: &HttpRequest, trusted: &[Cidr]) -> Option<IpAddr> {
    let peer = req.peer_addr()?.ip();
    let trusted_ip = |ip: IpAddr| trusted.iter().any(|c| c.contains(ip));
    let mut client = peer;
    if trusted_ip(peer) {
        let forwarded = req
            .headers()
            .get_all("x-forwarded-for")
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect::<Vec<_>>();
        for hop in forwarded.iter().rev() {
            let Ok(ip) = hop.parse::<IpAddr>() else {
                break;
            };
            client = ip;
            if !trusted_ip(ip) {
                break;
            }
        }
    }
    Some(bucket_of(client))
}

/// An address as a bucket key: IPv4 (also when mapped into IPv6) as it is, IPv6 by its /64.
pub fn bucket_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !u128::from(u64::MAX))),
        },
        v4 => v4,
    }
}

/// A call without a token, counted against its client address's bucket
/// (`DISCS_ANON_PER_SECOND`, `DISCS_ANON_BURST`): an extractor, so a handler that takes it is
/// refused with 429 `rate_limited` before it runs. The health probes do not take it.
pub struct ByAddress;

/// A bucket per key (a player, an address): `burst` calls at once, then `per_second`.
pub struct RateLimiter<K> {
    per_second: f64,
    burst: f64,
    buckets: Mutex<HashMap<K, Bucket>>,
    refused: AtomicU64,
}

struct Bucket {
    tokens: f64,
    at: Instant,
}

impl<K: Hash + Eq + Clone> RateLimiter<K> {
    pub fn new(per_second: f64, burst: f64) -> RateLimiter<K> {
        RateLimiter {
            per_second: per_second.max(0.001),
            burst: burst.max(1.0),
            buckets: Mutex::new(HashMap::new()),
            refused: AtomicU64::new(0),
        }
    }

    /// (calls allowed per second, burst, calls refused so far), for `/metrics`.
    pub fn stats(&self) -> (f64, f64, u64) {
        (
            self.per_second,
            self.burst,
            self.refused.load(Ordering::Relaxed),
        )
    }

    /// Takes one token for `key`, or says how many seconds to wait.
    pub fn check(&self, key: &K) -> Result<(), ApiError> {
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
            self.refused.fetch_add(1, Ordering::Relaxed);
            let wait = ((1.0 - bucket.tokens) / self.per_second).ceil().max(1.0);
            Err(Error::RateLimited(wait as u64).into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ipv6_client_counts_by_its_64_block() {
        let key = |s: &str| bucket_of(s.parse().expect("ip"));
        assert_eq!(key("2001:db8::1"), key("2001:db8::ffff:1"));
        assert_ne!(key("2001:db8::1"), key("2001:db8:0:1::1"));
        assert_eq!(key("::ffff:192.0.2.7"), key("192.0.2.7"));
        assert_ne!(key("192.0.2.7"), key("192.0.2.8"));
    }

    #[test]
    fn a_burst_passes_then_the_bucket_refuses_with_a_wait() {
        let limiter = RateLimiter::new(1.0, 3.0);
        for _ in 0..3 {
            assert!(limiter.check(&"ada").is_ok());
        }
        assert!(matches!(
            limiter.check(&"ada"),
            Err(ApiError::Core(Error::RateLimited(1)))
        ));
        assert!(limiter.check(&"bob").is_ok(), "buckets are per key");
    }
}
