//! The store's options ([`SqliteOptions`]) and the `sqlite://` URLs that name its file.

use std::path::PathBuf;
use std::time::Duration;

/// Tuning of the SQLite store.
#[derive(Debug, Clone)]
pub struct SqliteOptions {
    /// Connections in the pool (readers run in parallel; writers queue on SQLite's lock).
    pub pool_size: usize,
    /// How long a writer waits for another's lock before the call fails as unavailable.
    pub busy_timeout: Duration,
    /// How long a call waits for a free connection.
    pub wait_timeout: Duration,
    /// How long one call of the store may take, waiting for a connection included; a statement
    /// still stepping rows then is stopped and the call fails as
    /// [`StoreError::Timeout`](sluice_store::StoreError::Timeout) ([`deadline`](crate::deadline)).
    pub call_timeout: Duration,
    /// A search whose index lookup finds chunks holding more than this many logs (in the
    /// workspace) walks the workspace's chunks newest first instead of loading every candidate,
    /// asking the index a step of chunks at a time: a common needle's page is decided in the
    /// newest few.
    pub search_dense_hits: u32,
    /// The most logs one document of the search index covers ([`index`](crate::index)): more make ingest
    /// cheaper (fewer distinct trigrams per log) and a rare needle's search read more logs.
    pub index_chunk_rows: usize,
    /// The chunks whose signatures the index gathers into one block, bit-sliced
    /// ([`index`](crate::index), `sluice_store::signature`): at most
    /// `sluice_store::signature::BLOCK_CHUNKS`, the default. A lookup reads a page per
    /// position and block; the chunks not in a block yet are tested from a cache of their
    /// signatures in memory.
    pub index_block_chunks: usize,
    /// How often a thread of the store's own indexes the logs committed since its last round
    /// ([`index`](crate::index)), off the writes' path; searches read those logs whole meanwhile. `None`:
    /// each insert indexes its own logs after its commit, before it returns (tests use it to
    /// reach the chunk paths at once).
    pub index_every: Option<Duration>,
    /// The most bytes the database file may take (SQLite's `max_page_count`); `None` for as
    /// much as the disk holds. Past it, as on a full disk, writes fail with
    /// [`StoreError::StorageFull`](sluice_store::StoreError::StorageFull) until space is freed.
    pub max_bytes: Option<u64>,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            pool_size: 8,
            busy_timeout: Duration::from_secs(5),
            wait_timeout: Duration::from_secs(5),
            call_timeout: Duration::from_secs(10),
            search_dense_hits: 50_000,
            index_chunk_rows: 256,
            index_block_chunks: sluice_store::signature::BLOCK_CHUNKS,
            index_every: Some(Duration::from_millis(200)),
            max_bytes: None,
        }
    }
}

/// The SQLite file a `sqlite://` URL names: `sqlite://rel/path.db` is relative to the working
/// directory, `sqlite:///abs/path.db` absolute. `None` for any other scheme.
pub fn path_from_url(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("sqlite://")?;
    (!rest.is_empty()).then(|| PathBuf::from(rest))
}
