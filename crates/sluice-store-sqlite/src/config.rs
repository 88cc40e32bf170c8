//! The store's options ([`SqliteOptions`]) and the `sqlite://` URLs that name its file.

use std::path::PathBuf;
use std::time::Duration;

/// Tuning of the SQLite store.
#[derive(Clone, Debug)]
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
    /// How often a thread of the store's own merges each workspace's small blocks (one a
    /// committed group) into large ones, off the writes' path. `None`: each insert merges what
    /// is due after its commit, before it returns (tests use it to reach merges at once).
    pub merge_every: Option<Duration>,
    /// The most bytes the database file may take (SQLite's `max_page_count`); `None` for as
    /// much as the disk holds. Past it, as on a full disk, writes fail with
    /// [`StoreError::StorageFull`](sluice_store::StoreError::StorageFull) until space is freed.
    pub max_bytes: Option<u64>,
    /// Now, for the blocks' write times (when small ones are due to merge).
    pub clock: sluice_store::Clock,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            pool_size: 8,
            busy_timeout: Duration::from_secs(5),
            wait_timeout: Duration::from_secs(5),
            call_timeout: Duration::from_secs(10),
            merge_every: Some(Duration::from_secs(1)),
            max_bytes: None,
            clock: sluice_store::system_clock(),
        }
    }
}

/// The SQLite file a `sqlite://` URL names: `sqlite://rel/path.db` is relative to the working
/// directory, `sqlite:///abs/path.db` absolute. `None` for any other scheme.
pub fn path_from_url(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("sqlite://")?;
    (!rest.is_empty()).then(|| PathBuf::from(rest))
}
