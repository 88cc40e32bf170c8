//! The PostgreSQL store of sluice: diesel-async over tokio-postgres (no libpq), pooled by
//! deadpool, migrations from `migrations/postgres` embedded and applied on connect.
//!
//! Logs are kept in blocks (`sluice_blocks`, laid out and read as `sluice_store::blockstore`
//! says): each committed group writes one small block a workspace in its transaction, a task
//! merges a workspace's small blocks into large ones, and every read walks a workspace's
//! blocks newest first in one repeatable-read transaction. Stats read counters kept in the
//! insert and retention transactions, a row per writer's slot so writers never wait for each
//! other's. The schema is laid out for a database that will outgrow one machine: every key of
//! a workspace's rows leads with `workspace_id`.
//!
//! Invariant: it passes the conformance suite of `sluice_store` on a real PostgreSQL; a
//! returned `Ok` is committed; every index of a workspace's rows leads with `workspace_id`
//! (`tests/migrations.rs` checks, but for the listed point lookups); what does not depend on
//! PostgreSQL lives in `sluice_store` and `sluice_blocks`, and this crate holds its SQL and
//! connection handling.
//!
//! The store's concerns have a module each: `connection` (options, pool, migrations, the call
//! time limit), `source` (the blocks' reads), `blocks` (their writes, swaps and
//! merges), `insert` (group transactions,
//! quota), `read` (lists, gets, searches, tail replay), `rollups` (the counters stats read),
//! `retention`, `upgrade` (logs kept as rows moved into blocks), `tenancy` (workspaces and
//! keys), `accounts`, `flows` (the flow counters, list and timeline), `feed` (live tail across
//! servers: `LISTEN`/`NOTIFY`), `slots` (counter slots), `rows` and `text` (rows as stored),
//! `prepared` (fixed SQL prepared once per connection).

mod blocks;
mod connection;
mod error;
// Its `now_ms!` (the database's clock in SQL) serves `testing` too.
#[macro_use]
mod feed;
mod flows;
mod insert;
/// The ingest benchmark's naive baseline (feature `bench`, which no production build enables).
#[cfg(feature = "bench")]
pub mod naive;
mod prepared;
mod read;
mod retention;
mod rollups;
mod schema;
mod shared;
mod slots;
mod source;
mod text;
mod upgrade;

#[cfg(feature = "testing")]
pub mod testing;

pub use crate::connection::{MIGRATIONS, PgOptions, PgStore, migrate};
