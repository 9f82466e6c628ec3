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
use service::secrets::read_hex;

/// The audience of every token of ours.
pub const AUDIENCE: &str = "discs";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Player,
    Admin,
}

/// The claims of our tokens.
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
    pub fn from_config(config: &crate::config::AuthConfig) -> anyhow::Result<Option<External>> {
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

    /// A confirmation that `player` (at token generation `generation`) means to close their
    /// account, valid for [`CLOSING_MINUTES`] from `now`: a token of another audience, so that it
    /// is never accepted as a bearer token, nor a bearer token as it.
    pub fn closing_confirmation(
        &self,
        player: PlayerId,
        generation: u32,
        now: OffsetDateTime,
    ) -> anyhow::Result<(String, OffsetDateTime)> {
        let expires = now + Duration::minutes(CLOSING_MINUTES);
        let claims = Claims {
            sub: player.to_string(),
            role: Role::Player,
            iat: now.unix_timestamp(),
            exp: expires.unix_timestamp(),
            aud: CLOSING_AUDIENCE.to_owned(),
            r#gen: generation,
        };
        let token = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)?;
        Ok((token, expires))
    }

    /// Whether `confirmation` is `player`'s, at their current `generation`, and unexpired at
    /// `now` (the server's clock).
    pub fn check_closing_confirmation(
        &self,
        confirmation: &str,
        player: PlayerId,
        generation: u32,
        now: OffsetDateTime,
    ) -> Result<(), ApiError> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_audience(&[CLOSING_AUDIENCE]);
        validation.set_required_spec_claims(&["exp", "sub", "aud"]);
        validation.validate_exp = false;
        let refused = || ApiError::Core(Error::Forbidden(Refused::Confirmation));
        let data = jsonwebtoken::decode::<Claims>(confirmation, &self.decoding, &validation)
            .map_err(|_| refused())?;
        if data.claims.sub != player.to_string()
            || data.claims.r#gen != generation
            || data.claims.exp <= now.unix_timestamp()
        {
            return Err(refused());
        }
        Ok(())
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

/// The token secret's name in messages.
const TOKEN_SECRET: &str = "token secret";

/// How long a confirmation to close an account is valid.
pub const CLOSING_MINUTES: i64 = 10;

/// The audience of those confirmations (never `discs`, the bearer tokens').
const CLOSING_AUDIENCE: &str = "discs:close-account";

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
    if let Some(secret) = read_hex(file, TOKEN_SECRET, 32)? {
        return Ok(secret);
    }
    let legacy = service::secrets::legacy_token_secret(pool).await?;
    let secret = match &legacy {
        Some(s) => s.clone(),
        None => service::secrets::random::<32>()?.to_vec(),
    };
    let secret = service::secrets::write_new(file, TOKEN_SECRET, &secret)?;
    if legacy.is_some() {
        service::secrets::forget_legacy_token_secret(pool).await?;
        tracing::info!(file = %file.display(), "the token secret moved out of the database");
    }
    Ok(secret)
}
