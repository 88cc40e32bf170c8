//! The chunks whose waiting signatures PostgreSQL dropped, signed again.
//!
//! `log_chunk_signatures` is unlogged (migration `signatures_unlogged`), so PostgreSQL empties
//! it when it recovers from a crash, and a promoted standby or a base backup holds it empty;
//! `log_chunk_signatures_intact`, unlogged too, loses its one row with it. [`sign_again`]
//! (connect, housekeeping, and a search that finds the row missing:
//! [`crate::PgStore::sign_again_in_background`]) marks the chunks in neither a block nor the
//! waiting signatures unsigned, has [`chunks::sign_unsigned`] sign them from their logs, and
//! writes the row back.
//!
//! Invariant: while the row is missing, no search lists chunks
//! ([`crate::allowed::Allowed::intact`]), so a chunk without a signature is read, never missed.

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use sluice_store::StoreError;

use crate::chunks;
use crate::connection::Deadline;

/// Whether `log_chunk_signatures_intact` holds its row, as [`unsign_lost`] reads it.
#[derive(QueryableByName)]
struct Intact {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    intact: bool,
}

/// Whether `log_chunk_signatures_intact` holds its row ([`unsign_lost`]).
async fn intact(connection: &mut AsyncPgConnection) -> Result<bool, DieselError> {
    diesel::sql_query("SELECT EXISTS (SELECT 1 FROM log_chunk_signatures_intact) AS intact")
        .get_result::<Intact>(connection)
        .await
        .map(|row| row.intact)
}

/// Marks for [`chunks::sign_unsigned`] the chunks whose waiting signatures PostgreSQL dropped:
/// when `log_chunk_signatures_intact`'s row is missing, every chunk in neither a block nor
/// `log_chunk_signatures`, in one transaction within `deadline` under the advisory lock
/// [`chunks::index_unchunked`] takes. [`mark_intact`] writes the row again once they are all
/// signed. Returns how many chunks were marked, `None` when the row was there.
///
/// A chunk's insert writes its signature in the same transaction, and a seal deletes
/// signatures and writes their block in one, so no statement sees a chunk between the two.
pub(crate) async fn unsign_lost(
    connection: &mut AsyncPgConnection,
    deadline: Deadline,
) -> Result<Option<u64>, StoreError> {
    if deadline.step(intact(connection)).await? {
        return Ok(None);
    }
    deadline
        .step(connection.transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
            chunks::index_lock(connection).await?;
            // Another process may have signed them again while this one waited for the lock.
            if intact(connection).await? {
                return Ok(None);
            }
            let marked = diesel::sql_query(
                "UPDATE log_chunks c SET signed = false WHERE c.signed \
                 AND NOT EXISTS (SELECT 1 FROM log_chunk_signatures s \
                                 WHERE s.workspace_id = c.workspace_id AND s.chunk_id = c.id) \
                 AND NOT EXISTS (SELECT 1 FROM (SELECT b.workspace_id, unnest(b.chunks) AS id FROM log_blocks b) AS sealed \
                                 WHERE sealed.workspace_id = c.workspace_id AND sealed.id = c.id)",
            )
            .execute(connection)
            .await?;
            Ok(Some(marked as u64))
        }))
        .await
}

/// Writes `log_chunk_signatures_intact`'s row again after [`unsign_lost`] found it missing,
/// once no chunk is left unsigned (under the advisory lock [`chunks::sign_unsigned`] signs under).
pub(crate) async fn mark_intact(connection: &mut AsyncPgConnection, deadline: Deadline) -> Result<(), StoreError> {
    deadline
        .step(connection.transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
            chunks::index_lock(connection).await?;
            diesel::sql_query(
                "INSERT INTO log_chunk_signatures_intact (intact) SELECT true \
                 WHERE NOT EXISTS (SELECT 1 FROM log_chunks WHERE NOT signed) ON CONFLICT DO NOTHING",
            )
            .execute(connection)
            .await?;
            Ok(())
        }))
        .await
}

/// [`unsign_lost`], [`chunks::sign_unsigned`], then [`mark_intact`] when the first found the row
/// missing: what connect and housekeeping do, and a search that finds the row missing has
/// done in the background ([`crate::PgStore::sign_again_in_background`]). Returns how many
/// chunks were signed.
pub(crate) async fn sign_again(connection: &mut AsyncPgConnection, deadline: Deadline) -> Result<u64, StoreError> {
    let lost = unsign_lost(connection, deadline).await?;
    if let Some(lost) = lost {
        tracing::warn!(chunks = lost, "signing again the chunks whose waiting signatures PostgreSQL dropped");
    }
    let signed = chunks::sign_unsigned(connection, deadline).await?;
    if lost.is_some() {
        mark_intact(connection, deadline).await?;
    }
    Ok(signed)
}

impl crate::PgStore {
    /// Starts [`sign_again`] in a task of its own, unless one runs: a search found
    /// `log_chunk_signatures_intact` empty, so PostgreSQL recovered from a crash since
    /// housekeeping last looked (every hour), and until the lost chunks are signed again every
    /// search walks all chunks ([`crate::allowed::Allowed::intact`]).
    pub(crate) fn sign_again_in_background(&self) {
        if self.signing_again.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return;
        }
        let store = self.clone();
        tokio::spawn(async move {
            let signed = async {
                let mut connection = store.with_deadline(store.connection()).await?;
                sign_again(&mut connection, store.deadline()).await
            }
            .await;
            store.signing_again.store(false, std::sync::atomic::Ordering::Release);
            if let Err(error) = signed {
                tracing::warn!(%error, "signing again the chunks whose waiting signatures PostgreSQL dropped failed");
            }
        });
    }
}
