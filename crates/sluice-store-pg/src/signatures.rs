//! The chunks' signatures ([`sluice_store::signature`]) as PostgreSQL keeps them: a chunk's in
//! `log_chunk_signatures`, written with the chunk, until the workspace has
//! [`crate::PgOptions::index_block_chunks`] of them; then they are gathered into a block
//! (`log_blocks`) whose slices are stored a band a row (`log_block_bands`), off the insert's
//! path ([`seal`]). A search reads them through [`crate::allowed`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use diesel::result::Error as DieselError;
use diesel::sql_types::{Array, BigInt, Binary, Integer, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use sluice_store::StoreError;
use sluice_store::signature::{Block, SignatureCache};
use uuid::Uuid;

use crate::connection::Deadline;
use crate::rows::Total;

/// A signature as kept in memory: `(digest, signature)`, the digest of the signature as stored
/// (for one this process wrote, folded once more than the one it keeps: [`insert`]).
type Kept = Arc<(i64, Vec<u8>)>;

/// A chunk's id, with its signature as kept.
pub(crate) type Signed = (i64, Kept);

/// The signatures of chunks outside a block that this process keeps in memory
/// ([`SignatureCache`]: those its inserts wrote and its searches read back), and how many
/// blocks it has sealed.
///
/// A search reads the chunks outside a block in a snapshot. When this process seals a block
/// after that snapshot was taken, the search still sees the block's chunks as unsealed, and
/// may read their signatures back after the seal dropped them from the cache: kept then, they
/// would stay for good, since no search asks for a sealed chunk's signature again. Measured in
/// `cargo xtask bench soak` on PostgreSQL: a block's worth (about 8 MB) each time, the
/// server's live heap 32 → 52 MB in six minutes under heaptrack (docs/PERFORMANCE.md,
/// issue 25). So a seal counts itself before it drops its chunks' signatures, and a search
/// keeps what it read only when no seal was counted since before its snapshot
/// ([`KeptSignatures::keep_read`]).
#[derive(Clone)]
pub(crate) struct KeptSignatures {
    pub(crate) cache: SignatureCache,
    seals: Arc<AtomicU64>,
    /// How many signatures the blocks this process sealed took from the database, not from
    /// `cache` ([`seal`]).
    read_to_seal: Arc<AtomicU64>,
}

impl KeptSignatures {
    pub(crate) fn new() -> Self {
        Self {
            cache: sluice_store::signature::signature_cache(),
            seals: Arc::new(AtomicU64::new(0)),
            read_to_seal: Arc::new(AtomicU64::new(0)),
        }
    }

    /// How many signatures the blocks this process sealed read from the database.
    pub(crate) fn read_to_seal(&self) -> u64 {
        AtomicU64::load(&self.read_to_seal, Ordering::SeqCst)
    }

    /// The signature kept for `chunk`, if its digest is `digest`, the one stored: one kept
    /// under the same id for another signature (after retention emptied the store) is not it.
    pub(crate) fn kept(&self, chunk: i64, digest: i64) -> Option<Kept> {
        self.cache.get(&chunk).filter(|signature| signature.0 == digest)
    }

    /// How many blocks this process has sealed: read before a search's snapshot.
    pub(crate) fn seals(&self) -> u64 {
        AtomicU64::load(&self.seals, Ordering::SeqCst)
    }

    /// After a block of `chunks` was sealed: counted first, then their signatures dropped, so
    /// a search that kept one of them after the drop sees the count changed.
    fn sealed(&self, chunks: &[i64]) {
        self.seals.fetch_add(1, Ordering::SeqCst);
        for chunk in chunks {
            self.cache.invalidate(chunk);
        }
    }

    /// Keeps signatures a search read back in a snapshot taken after [`KeptSignatures::seals`]
    /// said `before`; forgets them again at once when a block was sealed since (they may be
    /// its chunks'; the next search reads again those that are not).
    pub(crate) fn keep_read(&self, read: &[Signed], before: u64) {
        for (chunk, signature) in read {
            self.cache.insert(*chunk, Arc::clone(signature));
        }
        if self.seals() != before {
            for (chunk, _) in read {
                self.cache.invalidate(chunk);
            }
        }
    }
}

/// Writes chunks' signatures (given in their stored form, [`Signature::folded`]), in the
/// transaction that writes the chunks. When `kept` (this process keeps them in memory, for
/// the seal and its searches: [`KeptSignatures`]), they are written folded once more
/// ([`sluice_store::signature::folded_once_more`]): a signature waits here only until its
/// block is sealed, so what is written is read only by another process or after a restart,
/// which then sees about 1.5 % of false positives a key where the signature itself has
/// 0.06 %. Writing, deleting and vacuuming every signature whole was about 7 % of ingest
/// (docs/PERFORMANCE.md, issue 24). Returns the digests of what was written, in order: a
/// signature kept in memory is taken for the stored one by them.
///
/// [`Signature::folded`]: sluice_store::signature::Signature::folded
pub(crate) async fn insert(
    connection: &mut AsyncPgConnection,
    ids: &[i64],
    workspaces: &[Uuid],
    signatures: &[Vec<u8>],
    kept: bool,
) -> Result<Vec<i64>, DieselError> {
    let folded: Vec<Vec<u8>>;
    let signatures = if kept {
        folded = signatures.iter().map(|signature| sluice_store::signature::folded_once_more(signature)).collect();
        &folded
    } else {
        signatures
    };
    let digests: Vec<i64> = signatures.iter().map(|signature| sluice_store::signature::digest(signature)).collect();
    diesel::sql_query(
        "INSERT INTO log_chunk_signatures (chunk_id, workspace_id, digest, signature) \
         SELECT * FROM unnest($1::int8[], $2::uuid[], $3::int8[], $4::bytea[])",
    )
    .bind::<Array<BigInt>, _>(ids)
    .bind::<Array<SqlUuid>, _>(workspaces)
    .bind::<Array<BigInt>, _>(&digests)
    .bind::<Array<Binary>, _>(signatures.iter().map(Vec::as_slice).collect::<Vec<_>>())
    .execute(connection)
    .await?;
    Ok(digests)
}

/// The oldest chunks of a workspace outside a block, as [`seal`] reads them first: in one row.
#[derive(diesel::QueryableByName)]
struct Oldest {
    /// Their chunks, in order.
    #[diesel(sql_type = Array<BigInt>)]
    ids: Vec<i64>,
    /// Each one's signature's digest.
    #[diesel(sql_type = Array<BigInt>)]
    digests: Vec<i64>,
}

/// Signatures of a workspace outside a block, as [`seal`] reads those it does not keep: in one
/// row.
#[derive(diesel::QueryableByName)]
struct Unsealed {
    /// Their chunks, in order.
    #[diesel(sql_type = Array<BigInt>)]
    ids: Vec<i64>,
    /// The length of each one's signature.
    #[diesel(sql_type = Array<Integer>)]
    lengths: Vec<i32>,
    /// The signatures, one after the other.
    #[diesel(sql_type = Binary)]
    signatures: Vec<u8>,
}

/// Gathers the oldest `block_chunks` signatures of `workspace` outside a block into one, if it
/// has that many. The block is built off the async runtime, then written with the
/// signatures' removal in one transaction, unless another process sealed or retention dropped
/// one of them meanwhile.
///
/// The signatures this process keeps in memory ([`KeptSignatures`]: those its inserts wrote
/// and its searches read back) are taken from there when their digests are the stored ones;
/// only the others are read, as one row, into one buffer, not a buffer of up to 32 KiB for
/// each of a block's thousand chunks (see [`Block`]'s slices for the same with bands). Reading a block's 32 MiB of
/// signatures back, which PostgreSQL gathered from their TOAST and the connection's read buffer
/// grew by doubling to hold, was most of the page faults left in the server's profile under
/// PostgreSQL ingest.
pub(crate) async fn seal(
    connection: &mut AsyncPgConnection,
    workspace: Uuid,
    block_chunks: usize,
    kept: &KeptSignatures,
) -> Result<Sealing, DieselError> {
    let block_chunks = block_chunks.clamp(1, sluice_store::signature::BLOCK_CHUNKS);
    let Oldest { ids, digests } = diesel::sql_query(
        "SELECT coalesce(array_agg(chunk_id ORDER BY chunk_id), '{}') AS ids, \
                coalesce(array_agg(digest ORDER BY chunk_id), '{}') AS digests \
         FROM (SELECT chunk_id, digest FROM log_chunk_signatures WHERE workspace_id = $1 \
               ORDER BY chunk_id LIMIT $2) AS oldest",
    )
    .bind::<SqlUuid, _>(workspace)
    .bind::<BigInt, _>(block_chunks as i64)
    .get_result(connection)
    .await?;
    if ids.len() < block_chunks || digests.len() != ids.len() {
        return Ok(Sealing::NotDue);
    }
    let in_memory: Vec<Option<Kept>> =
        ids.iter().zip(&digests).map(|(chunk, digest)| kept.kept(*chunk, *digest)).collect();
    let missing: Vec<i64> =
        ids.iter().zip(&in_memory).filter(|(_, signature)| signature.is_none()).map(|(chunk, _)| *chunk).collect();
    let read = if missing.is_empty() {
        Unsealed { ids: Vec::new(), lengths: Vec::new(), signatures: Vec::new() }
    } else {
        diesel::sql_query(
            "SELECT coalesce(array_agg(chunk_id ORDER BY chunk_id), '{}') AS ids, \
                    coalesce(array_agg(length(signature) ORDER BY chunk_id), '{}') AS lengths, \
                    coalesce(string_agg(signature, ''::bytea ORDER BY chunk_id), ''::bytea) AS signatures \
             FROM log_chunk_signatures WHERE workspace_id = $1 AND chunk_id = ANY($2)",
        )
        .bind::<SqlUuid, _>(workspace)
        .bind::<Array<BigInt>, _>(&missing)
        .get_result(connection)
        .await?
    };
    if read.ids != missing {
        // Sealed by another process, or dropped by retention, since the first read.
        return Ok(Sealing::Raced);
    }
    let started = std::time::Instant::now();
    let from_database = missing.len();
    let block = tokio::task::spawn_blocking(move || {
        let Unsealed { lengths, signatures, .. } = read;
        let mut lengths = lengths.into_iter();
        let mut views: Vec<&[u8]> = Vec::with_capacity(in_memory.len());
        let mut rest = signatures.as_slice();
        for signature in &in_memory {
            match signature {
                Some(signature) => views.push(&signature.1),
                None => {
                    let (signature, after) = rest.split_at_checked(usize::try_from(lengths.next()?).ok()?)?;
                    views.push(signature);
                    rest = after;
                }
            }
        }
        Some(Block::build(&views))
    })
    .await
    .map_err(|error| DieselError::QueryBuilderError(format!("building a block: {error}").into()))?
    .ok_or_else(|| DieselError::QueryBuilderError("the signatures read do not add up to their lengths".into()))?;
    let built = started.elapsed();
    let (bands, slices): (Vec<i32>, Vec<&[u8]>) =
        block.stored_bands().filter_map(|(band, slices)| Some((i32::try_from(band).ok()?, slices))).unzip();
    let first = <[i64]>::first(&ids).copied().unwrap_or_default();
    let bits = i32::try_from(block.bits).unwrap_or(i32::MAX);
    let sealed = connection
        .transaction::<_, DieselError, _>(async |connection: &mut AsyncPgConnection| {
            let removed =
                diesel::sql_query("DELETE FROM log_chunk_signatures WHERE workspace_id = $1 AND chunk_id = ANY($2)")
                    .bind::<SqlUuid, _>(workspace)
                    .bind::<Array<BigInt>, _>(&ids)
                    .execute(connection)
                    .await?;
            if removed != ids.len() {
                return Err(DieselError::RollbackTransaction);
            }
            // With its chunks' newest log time ([`crate::allowed`] narrows blocks newest first).
            diesel::sql_query(
                "INSERT INTO log_blocks (id, workspace_id, bits, chunks, max_ts) VALUES ($1, $2, $3, $4, \
                 (SELECT max(max_ts) FROM log_chunks WHERE workspace_id = $2 AND id = ANY($4)))",
            )
            .bind::<BigInt, _>(first)
            .bind::<SqlUuid, _>(workspace)
            .bind::<Integer, _>(bits)
            .bind::<Array<BigInt>, _>(&ids)
            .execute(connection)
            .await?;
            for (bands, slices) in bands.chunks(SEAL_BANDS).zip(slices.chunks(SEAL_BANDS)) {
                diesel::sql_query(
                    "INSERT INTO log_block_bands (workspace_id, band, block_id, slices) \
                     SELECT $1, band, $2, slices FROM unnest($3::int4[], $4::bytea[]) AS u(band, slices)",
                )
                .bind::<SqlUuid, _>(workspace)
                .bind::<BigInt, _>(first)
                .bind::<Array<Integer>, _>(bands)
                .bind::<Array<Binary>, _>(slices)
                .execute(connection)
                .await?;
            }
            Ok(())
        })
        .await;
    drop(slices);
    drop(block);
    match sealed {
        Ok(()) => {
            // A search reads a sealed chunk's bands, never its signature again: kept, it would
            // only crowd the cache until evicted (256 MiB of dead signatures under steady ingest).
            kept.sealed(&ids);
            kept.read_to_seal.fetch_add(from_database as u64, Ordering::SeqCst);
            tracing::debug!(
                from_database,
                build_ms = built.as_secs_f64() * 1e3,
                write_ms = (started.elapsed() - built).as_secs_f64() * 1e3,
                "sealed a block"
            );
            Ok(Sealing::Sealed)
        }
        Err(DieselError::RollbackTransaction) => Ok(Sealing::Raced),
        Err(error) => Err(error),
    }
}

/// The most bands one statement of [`seal`] writes: 1 MiB of slices. A connection keeps its
/// send buffer at the size of the largest statement it has sent, so a block's 32 MiB of bands
/// in one statement grew each pooled connection that sealed one by as much, for good: the
/// server's RSS crept up by about 170 MB over ten minutes of `cargo xtask bench soak` on
/// PostgreSQL (599 → 772 MB) while nothing else grew.
const SEAL_BANDS: usize = 2_048;

/// What one [`seal`] did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Sealing {
    /// Wrote a block.
    Sealed,
    /// Fewer than a block's signatures wait.
    NotDue,
    /// Another sealer (or retention) took some of the signatures first: look again.
    Raced,
}

/// How many times [`crate::PgStore::seal_due`] looks again after a race before leaving the
/// rest to the next round (each race is another process's progress, so this is never reached
/// in practice).
const SEAL_RACES: u32 = 8;

#[derive(diesel::QueryableByName)]
struct Workspace {
    #[diesel(sql_type = SqlUuid)]
    workspace_id: Uuid,
}

impl crate::PgStore {
    /// Seals every block due: of every workspace with a block's worth of signatures outside
    /// one (or of `only`, when given). Returns how many. Each block is sealed within the call
    /// timeout of its own ([`Deadline`]): a backlog of blocks (a store that was down, a
    /// sealing task that failed) is worked through however long it is, and a block sealed
    /// stays sealed when a later one fails.
    pub(crate) async fn seal_due(
        &self,
        connection: &mut AsyncPgConnection,
        only: Option<Uuid>,
    ) -> Result<u64, StoreError> {
        let (deadline, block_chunks) = (self.deadline(), self.block_chunks);
        let workspaces: Vec<Uuid> = match only {
            Some(workspace) => vec![workspace],
            None => deadline
                .step(
                    diesel::sql_query(
                        "SELECT workspace_id FROM log_chunk_signatures GROUP BY workspace_id HAVING count(*) >= $1",
                    )
                    .bind::<BigInt, _>(block_chunks.max(1) as i64)
                    .load::<Workspace>(connection),
                )
                .await?
                .into_iter()
                .map(|row| row.workspace_id)
                .collect(),
        };
        // Until none is due: a race with another sealer is not the end, so that once this
        // returns every block due when it was called is sealed, by this call or another.
        let mut sealed = 0;
        for workspace in workspaces {
            let mut races = 0;
            loop {
                match deadline.step(seal(connection, workspace, block_chunks, &self.signatures)).await? {
                    Sealing::Sealed => sealed += 1,
                    Sealing::Raced if races < SEAL_RACES => races += 1,
                    Sealing::Raced | Sealing::NotDue => break,
                }
            }
        }
        Ok(sealed)
    }
}

/// After retention deleted chunks: drops the signatures of chunks that are gone, and the
/// blocks none of whose chunks is left, with their bands.
pub(crate) async fn drop_orphans(
    connection: &mut AsyncPgConnection,
    workspace: Option<Uuid>,
) -> Result<(), DieselError> {
    diesel::sql_query(
        "DELETE FROM log_chunk_signatures s WHERE ($1::uuid IS NULL OR s.workspace_id = $1) \
         AND NOT EXISTS (SELECT 1 FROM log_chunks c WHERE c.id = s.chunk_id)",
    )
    .bind::<diesel::sql_types::Nullable<SqlUuid>, _>(workspace)
    .execute(connection)
    .await?;
    diesel::sql_query(
        "WITH gone AS (DELETE FROM log_blocks k WHERE ($1::uuid IS NULL OR k.workspace_id = $1) \
           AND NOT EXISTS (SELECT 1 FROM log_chunks c WHERE c.id = ANY(k.chunks)) \
           RETURNING k.id, k.workspace_id) \
         DELETE FROM log_block_bands b USING gone \
         WHERE b.workspace_id = gone.workspace_id AND b.block_id = gone.id",
    )
    .bind::<diesel::sql_types::Nullable<SqlUuid>, _>(workspace)
    .execute(connection)
    .await?;
    Ok(())
}

#[derive(diesel::QueryableByName)]
struct Partition {
    #[diesel(sql_type = diesel::sql_types::Text)]
    name: String,
}

/// Analyzes the partitions of `logs` written to most since their statistics were taken (more
/// than 10,000 rows, and more than they held then): without statistics, PostgreSQL reads the
/// time span of a walk's chunks as selective and scans the primary key over it, every log of
/// the span (measured at 1M logs: 400 ms a search instead of 20, until autovacuum's first
/// analyze a minute later). A store must not depend on autovacuum being on or on time. The
/// chunk index too, from 1,000 changed rows and a tenth of what it holds (a 4-minute soak at
/// 22k logs/s left its 36k chunks with no statistics, and a search's plan took the workspace
/// for 9 chunks).
///
/// A partition is analyzed again once it has doubled, not at every tenth more as autovacuum
/// does where it runs: `ANALYZE` samples 30,000 rows of the partition's pages and sorts each
/// column's values, and at a tenth it ran after nearly every seal under sustained ingest, 4 %
/// of the machine (`perf record -a` on PostgreSQL ingest, docs/PERFORMANCE.md, issue 24).
/// What the statistics must get right is that a walk's time span, whole days
/// ([`crate::list`]), is not selective; statistics taken when the partition held half its
/// logs say so, as a tenth's did.
///
/// Each statement runs within `deadline` of its own ([`Deadline`]).
pub(crate) async fn analyze_stale_partitions(
    connection: &mut AsyncPgConnection,
    deadline: Deadline,
) -> Result<(), StoreError> {
    let stale: Vec<Partition> = deadline
        .step(
            diesel::sql_query(
                "SELECT c.relname::text AS name FROM pg_stat_user_tables s \
         JOIN pg_class c ON c.oid = s.relid LEFT JOIN pg_inherits i ON i.inhrelid = c.oid \
         WHERE ((i.inhparent = 'logs'::regclass AND s.n_mod_since_analyze > 10000 \
                 AND s.n_mod_since_analyze > greatest(c.reltuples, 0)) \
                OR (c.oid = 'log_chunks'::regclass AND s.n_mod_since_analyze > 1000 \
                    AND s.n_mod_since_analyze > 0.1 * greatest(c.reltuples, 0))) \
         AND NOT EXISTS (SELECT 1 FROM pg_locks l WHERE l.relation = c.oid AND l.granted \
                         AND l.mode = 'ShareUpdateExclusiveLock')",
            )
            .load(connection),
        )
        .await?;
    for partition in stale {
        // The name comes from the catalogue, quoted as an identifier. A partition autovacuum
        // holds is left to it (its run analyzes it too, or the next seal does): not asked for
        // above (each `SKIP_LOCKED` skip is a warning in the server's log, every few seconds
        // while autovacuum runs), and skipped if it took the table since. Waiting for it
        // instead made PostgreSQL cancel that autovacuum after `deadlock_timeout` (1 s): under
        // sustained ingest the day's partition is analyzed here about once a minute, so
        // autovacuum never finished it and began again every minute (`log_lock_waits` in the
        // cluster of `cargo xtask bench soak`).
        deadline
            .step(
                diesel::sql_query(format!("ANALYZE (SKIP_LOCKED) \"{}\"", partition.name.replace('"', "\"\"")))
                    .execute(connection),
            )
            .await?;
    }
    // Every seal deletes a block's worth of waiting signatures, which every search then reads
    // past (their digests) until a vacuum: autovacuum, busy with the logs' partitions under
    // sustained ingest, left 49k dead rows to 736 live in a 4-minute soak (3 ms a search).
    let dead: Vec<Total> = deadline
        .step(
            diesel::sql_query(
                "SELECT sum(n_dead_tup)::int8 AS total FROM pg_stat_user_tables \
                 WHERE relid = 'log_chunk_signatures'::regclass",
            )
            .load(connection),
        )
        .await?;
    if <[Total]>::first(&dead).and_then(|dead| dead.total).is_some_and(|dead| dead > DEAD_SIGNATURES) {
        deadline.step(diesel::sql_query("VACUUM (SKIP_LOCKED) log_chunk_signatures").execute(connection)).await?;
    }
    Ok(())
}

/// Dead rows of `log_chunk_signatures` past which [`analyze_stale_partitions`] vacuums it.
const DEAD_SIGNATURES: i64 = 4_096;

impl crate::PgStore {
    /// After an insert committed: counts the chunks it wrote for each workspace, and once a
    /// workspace may have a block due, seals it in a task of its own, off the insert's path,
    /// then analyzes the partitions written to most ([`analyze_stale_partitions`]).
    /// The count is this process's guess (other processes write too); [`Self::seal_due`] asks
    /// the database, and housekeeping (`Store::maintain`) seals whatever is left.
    ///
    /// One such task at a time in a process: two racing for the same signatures each build a
    /// block and all but one roll back (measured at 35k logs/s: tasks past their deadline).
    /// While one runs, the counts of workspaces due stay, so the next insert after it starts
    /// the next task.
    pub(crate) fn after_insert(&self, group: &[sluice_store::WriteBatch], refused: &[bool]) {
        let mut due = Vec::new();
        {
            let mut unsealed = self.unsealed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            for (batch, refused) in group.iter().zip(refused) {
                if *refused || batch.logs.is_empty() {
                    continue;
                }
                let workspace = *batch.workspace.as_uuid();
                let count = unsealed.entry(workspace).or_default();
                *count += batch.logs.len().div_ceil(self.chunk_rows.max(1));
            }
            if std::sync::atomic::AtomicBool::load(&self.sealing, Ordering::Acquire) {
                return;
            }
            for (workspace, count) in unsealed.iter_mut() {
                if *count >= self.block_chunks {
                    *count = 0;
                    due.push(*workspace);
                }
            }
            if due.is_empty() || self.sealing.swap(true, Ordering::AcqRel) {
                return;
            }
        }
        let store = self.clone();
        tokio::spawn(async move {
            // Cleared however the task ends.
            let _sealing = Sealer(store.sealing.clone());
            // Housekeeping seals after this task, not against it.
            let _sealer = store.seal_lock.lock().await;
            // Each seal and statement within the call timeout of its own ([`Deadline`]): one
            // deadline for them all ran out mid-ingest with a block due behind another, and
            // the block it cut was tried again only a block's worth of chunks later, twice the
            // work under the same deadline.
            let sealed = async {
                // Taken out of the pool, and closed after: a connection keeps the buffers it
                // grew for the largest statement and answer it carried, and a block's
                // signatures (tens of MB) grew each pooled connection that sealed one for
                // good, a slow climb of the server's RSS as connections took turns (`cargo
                // xtask bench soak`). The pool opens another when it needs one.
                let mut connection = deadpool::managed::Object::take(store.with_deadline(store.connection()).await?);
                for workspace in due {
                    store.seal_due(&mut connection, Some(workspace)).await?;
                }
                analyze_stale_partitions(&mut connection, store.deadline()).await
            }
            .await;
            if let Err(error) = sealed {
                tracing::warn!(%error, "sealing a block of chunk signatures failed; housekeeping retries");
            }
            if tracing::enabled!(tracing::Level::DEBUG) {
                // What the store keeps in memory for searches, to set against the server's RSS.
                store.signatures.cache.run_pending_tasks();
                store.blocks.headers.run_pending_tasks();
                store.blocks.bands.run_pending_tasks();
                let megabytes = |bytes: u64| bytes as f64 / 1e6;
                tracing::debug!(
                    signatures = megabytes(store.signatures.cache.weighted_size()),
                    headers = megabytes(store.blocks.headers.weighted_size()),
                    bands = megabytes(store.blocks.bands.weighted_size()),
                    "searches' caches (MB) after sealing"
                );
            }
        });
    }
}

/// Marks this process's sealing task as running while it lives.
struct Sealer(Arc<std::sync::atomic::AtomicBool>);

impl Drop for Sealer {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signature(n: u8) -> Arc<(i64, Vec<u8>)> {
        Arc::new((i64::from(n), vec![n; 64]))
    }

    #[test]
    fn a_search_keeps_what_it_read_only_when_no_block_was_sealed_since_its_snapshot() {
        let kept = KeptSignatures::new();
        let before = kept.seals();
        kept.keep_read(&[(1, signature(1))], before);
        assert!(kept.cache.contains_key(&1), "no seal in between: kept");

        // Chunks 2 and 3 sealed after the search's snapshot and before it keeps what it read.
        let before = kept.seals();
        kept.sealed(&[2, 3]);
        kept.keep_read(&[(2, signature(2)), (3, signature(3))], before);
        assert!(!kept.cache.contains_key(&2) && !kept.cache.contains_key(&3), "a sealed chunk's signature stayed");

        // Sealed after the search kept it: the seal drops it.
        let before = kept.seals();
        kept.keep_read(&[(4, signature(4))], before);
        kept.sealed(&[4]);
        assert!(!kept.cache.contains_key(&4));
        assert!(kept.cache.contains_key(&1), "a chunk still outside a block keeps its signature");
    }
}
