//! This process's turn at SQLite's write lock ([`WriteLock`]).

/// Held by whoever takes SQLite's write lock in this process: taken with `blocking_lock` on
/// the blocking and background threads that write, and awaited by the calls that write
/// through diesel-async (`crate::shared`), so writers hand the lock to each other at once
/// instead of through SQLite's busy handler.
pub(crate) type WriteLock = tokio::sync::Mutex<()>;
