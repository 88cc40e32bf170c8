//! The embedded SQLite store: sluice's default, one file, no server to run.
//!
//! Diesel over a bundled SQLite in WAL mode, so readers never wait for the writer and several
//! processes (a server and the admin CLI) can share the file. Connections live in diesel-async's
//! deadpool pool behind its `SyncConnectionWrapper`, as PostgreSQL's do behind their async
//! driver; each call runs on a blocking thread so the async runtime never stalls on disk.
//! Writes take `BEGIN IMMEDIATE` and `synchronous = FULL`, so a returned `Ok` is on disk.
//!
//! Invariant: it passes the conformance suite of `sluice_store` on a real SQLite file; a
//! returned `Ok` is on disk; every index of a workspace's rows leads with `workspace_id`
//! (`tests/migrations.rs` checks); what does not depend on SQLite lives in `sluice_store`, and
//! this crate holds its SQL and connection handling.
//!
//! Logs are kept as blocks (`sluice_store::blockstore`, `blocks`): each committed group writes
//! one small block a workspace, and a thread of the store's own merges small blocks into large
//! ones. One module per concern, each implementing the store trait of its concern (`insert`:
//! `LogWrites`, `read`: `LogReads` (`LogSearch` through it), `rollups`: `LogCounts`, `retention`:
//! `LogRetention`, `flows`: `LogFlows`, `tenancy`: `TenantStore`, `connection`: `Store`);
//! `upgrade` converts a database that kept logs as rows.

mod background;
mod blocks;
mod config;
mod connection;
mod deadline;
mod error;
mod flows;
mod insert;
mod lock;
/// The ingest benchmark's naive baseline (feature `bench`, which no production build enables).
#[cfg(feature = "bench")]
pub mod naive;
mod quota;
mod read;
mod retention;
mod rollups;
mod schema;
mod shared;
/// Test support: a database as the build before blocks left it (feature `testing`).
#[cfg(feature = "testing")]
pub mod testing;
mod upgrade;

pub use config::{SqliteOptions, path_from_url};
pub use connection::SqliteStore;
/// The quota statement, measured alone by this crate's `quota` bench (feature `bench`).
#[cfg(feature = "bench")]
pub use quota::COUNT_USAGE;
