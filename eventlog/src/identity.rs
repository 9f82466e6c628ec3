//! The log's identity: a UUID made the first time it is asked for and kept in `log_identity`
//! (migration V23), so that two databases are two logs and a restored database is the same log.
//! The signer writes it in every checkpoint and names its default folder after it
//! (`service::history`).

use uuid::Uuid;

use crate::EventLog;
use crate::error::Error;

impl EventLog {
    /// The log's identity, made (a random UUID) when the database has none yet; every later call,
    /// from any instance, reads the same one. Only the first call writes (`discs migrate` makes
    /// it, so that instances whose role may not write it only read it).
    pub async fn identity(&self) -> Result<Uuid, Error> {
        const READ: &str = "SELECT log_id FROM log_identity";
        let client = self.pool.get().await?;
        if let Some(row) = client.query_opt(READ, &[]).await? {
            return Ok(row.try_get(0)?);
        }
        // Two first starts at once: one insert wins, and the next statement, a snapshot of its
        // own, reads the winner's.
        client
            .execute(
                "INSERT INTO log_identity (log_id) VALUES (gen_random_uuid()) ON CONFLICT DO NOTHING",
                &[],
            )
            .await?;
        Ok(client.query_one(READ, &[]).await?.try_get(0)?)
    }
}
