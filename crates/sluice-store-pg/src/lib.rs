//! The PostgreSQL store of sluice: diesel-async over tokio-postgres (no libpq), pooled by
//! deadpool, migrations from `migrations/postgres` embedded and applied on connect.
//!
//! The schema is laid out for a database that will outgrow one machine: every key of a
//! workspace's rows leads with `workspace_id`, and `logs` is range-partitioned by timestamp
//! ([`partitions`]), so retention drops whole days. Search finds candidate chunks of logs by
//! the trigrams of their folded text ([`chunks`]) and checks their logs exactly, like the
//! SQLite store; filters by level, environment, source, dataset and user walk the chunks too,
//! by a second filter of theirs, instead of an index per field. Stats read counters kept in
//! the insert and delete transactions, a row per writer's slot so writers never wait for
//! each other's.
//!
//! Invariant: it passes the conformance suite of `sluice_store` on a real PostgreSQL; a
//! returned `Ok` is committed; every index of a workspace's rows leads with `workspace_id`
//! (`tests/migrations.rs` checks, but for the listed point lookups); what does not depend on
//! PostgreSQL lives in `sluice_store`, and this crate holds its SQL and connection handling.
//!
//! The store's concerns have a module each: `connection` (options, pool, migrations, the call
//! time limit), `insert` (group transactions, quota), `list` and `search` (reads), `rollups`
//! (the counters stats read), `retention`, `tenancy` (workspaces and keys), `partitions`,
//! `chunks` (the search index), `flows` (the flow counters, list and timeline), `feed` (live
//! tail across servers: `LISTEN`/`NOTIFY`), `slots`
//! (counter slots), `rows` and `text` (rows as stored), `prepared` (fixed SQL prepared once per
//! connection).
//! Each implements the `sluice_store` trait of its concern (`insert`: `LogWrites`, `list`:
//! `LogReads`, `search`: `LogSearch`, `rollups`: `LogCounts`, `retention`: `LogRetention`,
//! `flows`: `LogFlows`, `tenancy`: `TenantStore`, `connection`: `Store`).

mod accounts;
mod allowed;
mod chunk_slots;
mod chunks;
mod connection;
mod consolidate;
mod error;
// Its `now_ms!` (the database's clock in SQL) serves `testing` too.
#[macro_use]
mod feed;
mod flows;
mod insert;
mod list;
mod lost;
/// The ingest benchmark's naive baseline (feature `bench`, which no production build enables).
#[cfg(feature = "bench")]
pub mod naive;
mod partitions;
mod prepared;
mod retention;
mod rollups;
mod rows;
mod schema;
mod search;
mod signatures;
mod slots;
mod tenancy;
mod text;

#[cfg(feature = "testing")]
pub mod testing;

pub use crate::connection::{MIGRATIONS, PgOptions, migrate};
pub use crate::connection::{PgStore, WalkReads};
pub use crate::partitions::{COARSE_DAYS, DAILY_AHEAD, DAILY_BEHIND, MAX_PARTITIONS, OLD_AFTER_DAYS, OLD_DAYS};
