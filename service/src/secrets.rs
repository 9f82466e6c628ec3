//! Secrets kept in files beside the database, never in it (the token secret, the checkpoint
//! signing key): read as hexadecimal, generated once by whichever instance gets there first.

use std::path::Path;

use uuid::Uuid;

/// The bytes kept in `file` in hexadecimal (`what` names the secret in errors), if the file
/// exists; refused unless it holds at least `min` bytes.
pub fn read_hex(file: &Path, what: &str, min: usize) -> anyhow::Result<Option<Vec<u8>>> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => anyhow::bail!("cannot read the {what} {}: {e}", file.display()),
    };
    match from_hex(text.trim()) {
        Some(b) if b.len() >= min => Ok(Some(b)),
        _ => anyhow::bail!(
            "the {what} {} is not at least {min} bytes in hexadecimal",
            file.display()
        ),
    }
}

/// Bytes written in hexadecimal (either case); `None` for anything else.
pub fn from_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect()
}

/// Fresh random bytes.
pub fn random<const N: usize>() -> anyhow::Result<[u8; N]> {
    let mut fresh = [0u8; N];
    getrandom::fill(&mut fresh).map_err(|e| anyhow::anyhow!("no randomness: {e}"))?;
    Ok(fresh)
}

/// Writes `secret` in hexadecimal to a new `file` (mode 0600, its folder made 0700 if missing),
/// whole or not at all (written aside, then linked in place); when another instance linked it
/// first, returns that one's.
pub fn write_new(file: &Path, what: &str, secret: &[u8]) -> anyhow::Result<Vec<u8>> {
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
    let hex = eventlog::merkle::to_hex(secret);
    let aside = dir.join(format!(".secret.{}", Uuid::new_v4()));
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
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            read_hex(file, what, secret.len())?
                .ok_or_else(|| anyhow::anyhow!("the {what} {} vanished", file.display()))
        }
        Err(e) => anyhow::bail!("cannot write the {what} {}: {e}", file.display()),
    }
}

/// The token secret an earlier version kept in the table `server_secrets`, if it is still there
/// (to be moved to its file once, so that its tokens stay valid).
pub async fn legacy_token_secret(
    pool: &deadpool_postgres::Pool,
) -> anyhow::Result<Option<Vec<u8>>> {
    let client = pool.get().await?;
    Ok(client
        .query_opt(
            "SELECT secret FROM server_secrets WHERE name = 'jwt_hs256'",
            &[],
        )
        .await?
        .map(|row| row.get(0)))
}

/// Deletes that secret from the database, once it is in its file.
pub async fn forget_legacy_token_secret(pool: &deadpool_postgres::Pool) -> anyhow::Result<()> {
    let client = pool.get().await?;
    client
        .execute("DELETE FROM server_secrets WHERE name = 'jwt_hs256'", &[])
        .await?;
    Ok(())
}
