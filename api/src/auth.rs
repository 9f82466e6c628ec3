//! Tokens: issuing HS256 JWTs, checking ours and an external issuer's (RS256/ES256), and
//! `Auth`, the player and role a checked token names (extracted from requests in `extract`).

use std::path::Path;

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use domain::ids::PlayerId;

use crate::error::ApiError;
use crate::reasons::Unauthenticated;
use service::Error;
use service::reasons::Refused;

/// The audience of every token of ours.
pub const AUDIENCE: &str = "discs";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Player,
    Admin,
}

/// The claims of SPEC §6.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Claims {
    pub sub: String,
    pub role: Role,
    pub iat: i64,
    pub exp: i64,
    pub aud: String,
    /// The player's token generation when it was issued (`api::tokens`): the token is refused
    /// once the player's is higher. Absent (0) in tokens issued before revocation existed.
    #[serde(default)]
    pub r#gen: u32,
}

/// An external issuer whose tokens are accepted: its key, the `iss` and `aud` its tokens
/// must carry, and the role they get (their own role claim is not trusted).
#[derive(Clone)]
pub struct External {
    key: DecodingKey,
    algorithm: Algorithm,
    /// Its expiry, configured issuer and audience.
    validation: Validation,
    role: Role,
}

impl External {
    /// The issuer `DISCS_JWT_PUBLIC_KEY_FILE` and its companions name, if any; refuses a key
    /// without an issuer, an unreadable key and an unknown role.
    pub fn from_config(config: &service::config::AuthConfig) -> anyhow::Result<Option<External>> {
        let Some(path) = &config.jwt_public_key_file else {
            return Ok(None);
        };
        let pem = std::fs::read(path)
            .map_err(|e| anyhow::anyhow!("cannot read the public key {}: {e}", path.display()))?;
        let issuer = config.jwt_issuer.clone().ok_or_else(|| {
            anyhow::anyhow!("DISCS_JWT_ISSUER must name the issuer of DISCS_JWT_PUBLIC_KEY_FILE")
        })?;
        let role = match config.jwt_external_role.as_str() {
            "player" => Role::Player,
            "admin" => Role::Admin,
            other => anyhow::bail!("DISCS_JWT_EXTERNAL_ROLE must be player or admin, not {other}"),
        };
        Ok(Some(External::new(
            &pem,
            issuer,
            config.jwt_audience.clone(),
            role,
        )?))
    }

    /// An issuer with its PEM public key (RSA for RS256, EC P-256 for ES256).
    pub fn new(
        pem: &[u8],
        issuer: String,
        audience: String,
        role: Role,
    ) -> anyhow::Result<External> {
        let (key, algorithm) = DecodingKey::from_rsa_pem(pem)
            .map(|k| (k, Algorithm::RS256))
            .or_else(|_| DecodingKey::from_ec_pem(pem).map(|k| (k, Algorithm::ES256)))
            .map_err(|e| anyhow::anyhow!("the external public key is not an RSA or EC PEM: {e}"))?;
        let mut validation = Validation::new(algorithm);
        validation.set_audience(&[&audience]);
        validation.set_issuer(&[&issuer]);
        validation.set_required_spec_claims(&["exp", "sub", "aud", "iss"]);
        validation.leeway = 5;
        Ok(External {
            key,
            algorithm,
            validation,
            role,
        })
    }
}

/// What an external issuer's token must say (its role, if any, is ignored).
#[derive(Deserialize)]
struct ExternalClaims {
    sub: String,
}

/// Signing and checking keys, built once at start-up.
#[derive(Clone)]
pub struct Keys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    /// What our tokens must satisfy (built once: it is checked on every request).
    validation: Validation,
    external: Option<External>,
    lifetime: Duration,
}

impl Keys {
    /// Our HS256 secret and, optionally, an external issuer.
    pub fn new(
        secret: &[u8],
        external: Option<External>,
        lifetime_days: i64,
    ) -> anyhow::Result<Keys> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_audience(&[AUDIENCE]);
        validation.set_required_spec_claims(&["exp", "sub", "aud"]);
        validation.leeway = 5;
        Ok(Keys {
            encoding: EncodingKey::from_secret(secret)?,
            decoding: DecodingKey::from_secret(secret)?,
            validation,
            external,
            lifetime: Duration::days(lifetime_days),
        })
    }

    /// A fresh token for a player.
    pub fn issue(
        &self,
        player: PlayerId,
        role: Role,
        generation: u32,
        now: OffsetDateTime,
    ) -> anyhow::Result<String> {
        let claims = Claims {
            sub: player.to_string(),
            role,
            iat: now.unix_timestamp(),
            exp: (now + self.lifetime).unix_timestamp(),
            aud: AUDIENCE.to_owned(),
            r#gen: generation,
        };
        Ok(jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &self.encoding,
        )?)
    }

    /// Checks a token: ours (HS256: signature, expiry, audience), or the external issuer's
    /// (its algorithm and key, expiry, its configured issuer and audience; the configured role).
    pub fn check(&self, token: &str) -> Result<Auth, ApiError> {
        let bad = ApiError::Unauthorized;
        let header =
            jsonwebtoken::decode_header(token).map_err(|_| bad(Unauthenticated::Malformed))?;
        let reason = |e: jsonwebtoken::errors::Error| {
            use jsonwebtoken::errors::ErrorKind;
            bad(match e.kind() {
                ErrorKind::ExpiredSignature => Unauthenticated::Expired,
                ErrorKind::InvalidAudience => Unauthenticated::Audience,
                ErrorKind::InvalidIssuer => Unauthenticated::Issuer,
                ErrorKind::InvalidSignature => Unauthenticated::Signature,
                _ => Unauthenticated::Invalid,
            })
        };
        let (sub, role, external, generation) = match (header.alg, &self.external) {
            (Algorithm::HS256, _) => {
                let data = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
                    .map_err(reason)?;
                (data.claims.sub, data.claims.role, false, data.claims.r#gen)
            }
            (alg, Some(ext)) if alg == ext.algorithm => {
                let data = jsonwebtoken::decode::<ExternalClaims>(token, &ext.key, &ext.validation)
                    .map_err(reason)?;
                (data.claims.sub, ext.role, true, 0)
            }
            _ => {
                return Err(bad(Unauthenticated::Algorithm));
            }
        };
        let player = sub
            .parse::<Uuid>()
            .map(PlayerId::from_uuid)
            .map_err(|_| bad(Unauthenticated::Subject))?;
        Ok(Auth {
            player,
            role,
            external,
            generation,
        })
    }
}

/// The authenticated caller.
#[derive(Clone, Debug)]
pub struct Auth {
    pub player: PlayerId,
    pub role: Role,
    /// The token is an external issuer's (refreshed by that issuer, never into one of ours).
    pub external: bool,
    /// The token generation it was issued at (ours; an external issuer's tokens are its own to
    /// end, and carry none).
    pub generation: u32,
}

impl Auth {
    pub fn require_admin(&self) -> Result<(), ApiError> {
        match self.role {
            Role::Admin => Ok(()),
            Role::Player => Err(Error::Forbidden(Refused::AdminsOnly).into()),
        }
    }
}

/// Our HS256 secret: the configured one, or the one kept in `file` (mode 0600, hexadecimal),
/// generated there at the first start by whichever instance gets there first. The database
/// never holds it: a secret an earlier version kept in `server_secrets` is moved to the file
/// (so its tokens stay valid) and deleted from the table.
pub async fn load_secret(
    pool: &deadpool_postgres::Pool,
    configured: Option<&str>,
    file: &Path,
) -> anyhow::Result<Vec<u8>> {
    if let Some(s) = configured {
        anyhow::ensure!(
            s.len() >= 32,
            "DISCS_JWT_SECRET must have at least 32 bytes"
        );
        return Ok(s.as_bytes().to_vec());
    }
    if let Some(secret) = read_secret(file)? {
        return Ok(secret);
    }
    let client = pool.get().await?;
    let legacy: Option<Vec<u8>> = client
        .query_opt(
            "SELECT secret FROM server_secrets WHERE name = 'jwt_hs256'",
            &[],
        )
        .await?
        .map(|row| row.get(0));
    let secret = match &legacy {
        Some(s) => s.clone(),
        None => {
            let mut fresh = [0u8; 32];
            getrandom::fill(&mut fresh).map_err(|e| anyhow::anyhow!("no randomness: {e}"))?;
            fresh.to_vec()
        }
    };
    let secret = write_secret(file, &secret)?;
    if legacy.is_some() {
        client
            .execute("DELETE FROM server_secrets WHERE name = 'jwt_hs256'", &[])
            .await?;
        tracing::info!(file = %file.display(), "the token secret moved out of the database");
    }
    Ok(secret)
}

/// The secret kept in `file`, if there is one.
fn read_secret(file: &Path) -> anyhow::Result<Option<Vec<u8>>> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => anyhow::bail!("cannot read the token secret {}: {e}", file.display()),
    };
    let text = text.trim();
    let bytes = (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect::<Option<Vec<u8>>>();
    match bytes {
        Some(b) if b.len() >= 32 && text.len() % 2 == 0 => Ok(Some(b)),
        _ => anyhow::bail!(
            "the token secret {} is not at least 32 bytes in hexadecimal",
            file.display()
        ),
    }
}

/// Writes `secret` to a new `file` (mode 0600, its folder made 0700 if missing), whole or not at
/// all (written aside, then linked in place); when another instance linked it first, that one's.
fn write_secret(file: &Path, secret: &[u8]) -> anyhow::Result<Vec<u8>> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    let aside = dir.join(format!(".jwt-secret.{}", Uuid::new_v4()));
    let written = (|| -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&aside)?;
        f.write_all(format!("{hex}\n").as_bytes())?;
        f.sync_all()?;
        std::fs::hard_link(&aside, file)
    })();
    let _ = std::fs::remove_file(&aside);
    match written {
        Ok(()) => Ok(secret.to_vec()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read_secret(file)?
            .ok_or_else(|| anyhow::anyhow!("the token secret {} vanished", file.display())),
        Err(e) => anyhow::bail!("cannot write the token secret {}: {e}", file.display()),
    }
}
