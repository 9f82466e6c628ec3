//! The ledger of closed accounts: one line per closing, synced before it is acknowledged, and
//! read back (with the machine's shared ledger) for a restore to re-apply.

use std::io::Write;

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use super::folder::make_folder;
use super::signing::History;

/// Appends a closed account to the ledger (one line: the player's id and when), synced to disk
/// before the closing is acknowledged.
pub fn record_closing(history: &History, player: Uuid, at: OffsetDateTime) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(dir) = history
        .closings
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
    {
        make_folder(dir)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(&history.closings)?;
    let line = format!("{player} {}\n", at.format(&Rfc3339).unwrap_or_default());
    f.write_all(line.as_bytes())?;
    f.sync_all()
}

/// The players the ledger says are closed, with when (the machine's shared ledger of earlier
/// versions included: its other logs' players are unknown here, and closing them does nothing).
pub fn closings(history: &History) -> std::io::Result<Vec<(Uuid, OffsetDateTime)>> {
    let mut all = Vec::new();
    for file in history.shared_closings.iter().chain([&history.closings]) {
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        all.extend(text.lines().filter_map(|line| {
            let (id, at) = line.split_once(' ')?;
            Some((
                id.parse().ok()?,
                OffsetDateTime::parse(at.trim(), &Rfc3339).ok()?,
            ))
        }));
    }
    Ok(all)
}
