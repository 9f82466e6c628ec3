//! The HTTP edge's settings: where it listens, its workers and graceful stop, the per-player
//! and per-address limits, the proxies it trusts, and the tokens (`discs serve` flattens them
//! beside the core's `service::config::CoreConfig`). Each flag also reads a `DISCS_*` variable.

use std::path::PathBuf;

use clap::Args;

use service::config::{between, one_or_more, positive};

/// What the HTTP edge needs.
#[derive(Clone, Debug, Args)]
pub struct EdgeConfig {
    /// Address to listen on.
    #[arg(long, env = "DISCS_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: String,
    #[command(flatten)]
    pub auth: AuthConfig,
    /// State-changing calls allowed per second and player (sustained), whatever token they use.
    #[arg(long, env = "DISCS_RATE_PER_SECOND", default_value_t = 50.0, value_parser = positive)]
    pub rate_per_second: f64,
    /// Burst of state-changing calls allowed per player.
    #[arg(long, env = "DISCS_RATE_BURST", default_value_t = 100.0, value_parser = one_or_more)]
    pub rate_burst: f64,
    /// Calls without a token (the games' catalogue, the API documents, `/metrics`; not the
    /// health probes) allowed per second and client address (sustained).
    #[arg(long, env = "DISCS_ANON_PER_SECOND", default_value_t = 20.0, value_parser = positive)]
    pub anon_per_second: f64,
    /// Burst of calls without a token allowed per client address.
    #[arg(long, env = "DISCS_ANON_BURST", default_value_t = 40.0, value_parser = one_or_more)]
    pub anon_burst: f64,
    /// The reverse proxies in front of this server (addresses or CIDR blocks, comma-separated):
    /// only from them is `X-Forwarded-For` read, for the per-address limits. Empty: the
    /// connection's peer is the client.
    #[arg(long, env = "DISCS_TRUSTED_PROXIES", value_delimiter = ',', value_parser = Cidr::parse)]
    pub trusted_proxies: Vec<Cidr>,
    /// Sign-ups (`POST /v1/players`) allowed per minute and client address (also the burst).
    #[arg(long, env = "DISCS_SIGNUPS_PER_MINUTE", default_value_t = 20.0, value_parser = one_or_more)]
    pub signups_per_minute: f64,
    /// HTTP worker threads (default: one per core).
    #[arg(long, env = "DISCS_HTTP_WORKERS", value_parser = between::<1, 1_024>)]
    pub http_workers: Option<usize>,
    /// On SIGTERM or SIGINT, how long requests in flight (and the background pass under way)
    /// may take to finish, in seconds.
    #[arg(long, env = "DISCS_SHUTDOWN_SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(0..=3_600))]
    pub shutdown_seconds: u64,
}

/// A block of addresses (`10.0.0.0/8`, `::1/128`; an address alone is its own block).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    base: std::net::IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parses `address[/prefix]`.
    pub fn parse(raw: &str) -> Result<Cidr, String> {
        let raw = raw.trim();
        let (addr, prefix) = match raw.split_once('/') {
            Some((addr, prefix)) => (addr, Some(prefix)),
            None => (raw, None),
        };
        let base: std::net::IpAddr = addr
            .parse()
            .map_err(|_| format!("`{raw}` is not an address or a CIDR block"))?;
        let most = if base.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => most,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= most)
                .ok_or_else(|| format!("`{raw}`: the prefix must be 0 to {most}"))?,
        };
        Ok(Cidr { base, prefix })
    }

    /// Whether `ip` is in the block.
    pub fn contains(&self, ip: std::net::IpAddr) -> bool {
        use std::net::IpAddr;
        match (self.base, ip) {
            (IpAddr::V4(b), IpAddr::V4(a)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(b) & mask == u32::from(a) & mask
            }
            (IpAddr::V6(b), IpAddr::V6(a)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(b) & mask == u128::from(a) & mask
            }
            _ => false,
        }
    }
}

/// Token signing and checking.
#[derive(Clone, Debug, Args)]
pub struct AuthConfig {
    /// HS256 secret for our own tokens (at least 32 bytes); when absent, the one kept in
    /// `DISCS_JWT_SECRET_FILE` (generated there at the first start), never in the database.
    #[arg(long, env = "DISCS_JWT_SECRET", hide_env_values = true)]
    pub jwt_secret: Option<String>,
    /// Where the generated HS256 secret is kept (mode 0600, hexadecimal): by default
    /// `jwt-secret` beside the private cluster's data folder (`~/.local/share/discs/jwt-secret`).
    /// Instances on one machine share it; instances on several share this file or
    /// `DISCS_JWT_SECRET`.
    #[arg(long, env = "DISCS_JWT_SECRET_FILE")]
    pub jwt_secret_file: Option<PathBuf>,
    /// PEM public key (RSA or EC P-256) of an external issuer whose RS256/ES256 tokens are
    /// accepted too.
    #[arg(long, env = "DISCS_JWT_PUBLIC_KEY_FILE")]
    pub jwt_public_key_file: Option<PathBuf>,
    /// The `iss` the external issuer's tokens must carry (required with its key).
    #[arg(long, env = "DISCS_JWT_ISSUER")]
    pub jwt_issuer: Option<String>,
    /// The `aud` the external issuer's tokens must carry.
    #[arg(long, env = "DISCS_JWT_AUDIENCE", default_value = "discs")]
    pub jwt_audience: String,
    /// The role of every external issuer's token (`player` or `admin`): a role claim in
    /// those tokens is not trusted.
    #[arg(long, env = "DISCS_JWT_EXTERNAL_ROLE", default_value = "player")]
    pub jwt_external_role: String,
    /// Lifetime of issued tokens, in days.
    #[arg(long, env = "DISCS_TOKEN_DAYS", default_value_t = 365, value_parser = clap::value_parser!(i64).range(1..=3_650))]
    pub token_days: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidr_blocks_hold_their_addresses() {
        let block = Cidr::parse("10.1.0.0/16").expect("a block");
        assert!(block.contains("10.1.200.3".parse().expect("ip")));
        assert!(!block.contains("10.2.0.1".parse().expect("ip")));
        assert!(!block.contains("::ffff:10.1.0.1".parse().expect("ip")));
        let one = Cidr::parse("::1").expect("an address");
        assert!(
            one.contains("::1".parse().expect("ip")) && !one.contains("::2".parse().expect("ip"))
        );
        assert!(
            Cidr::parse("0.0.0.0/0")
                .expect("all")
                .contains("8.8.8.8".parse().expect("ip"))
        );
        for bad in ["10.0.0.0/33", "nonsense", "::1/129", "10.0.0.0/"] {
            assert!(Cidr::parse(bad).is_err(), "{bad}");
        }
    }
}
