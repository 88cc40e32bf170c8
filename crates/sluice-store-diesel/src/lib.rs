//! What the two SQL stores share: diesel's view of the tables they hold alike (workspaces,
//! API keys, users, memberships, sessions, device codes), their rows and conversions to the
//! model, the id column type ([`Id`]: a `uuid` on PostgreSQL, a 16-byte blob on SQLite), and
//! the queries of tenancy and accounts ([`tenancy!`], [`accounts!`]), which each store expands
//! with its own connection and its own way of running a call ([`Calls`]).
//!
//! Invariant: one definition of each shared table, row and query. A store crate declares only
//! the tables it alone has; each store's schema test checks these definitions against its
//! migrated database, and the conformance suite runs the queries on both.

mod accounts;
mod calls;
pub mod columns;
mod id;
/// The ingest benchmark's naive baseline (feature `bench`, which no production build enables).
#[cfg(feature = "bench")]
pub mod naive;
pub mod raw;
pub mod rows;
#[expect(missing_docs, reason = "diesel's column types: each column is named as in the migrations")]
pub mod schema;
mod tenancy;

pub use calls::{CallFuture, Calls, TransactionError, TransactionFuture, TransactionWork, Work, pool_status};
pub use id::{DbId, Id};

/// What the macros' expansions name, so a store needs no dependency of its own for them.
#[doc(hidden)]
pub mod __private {
    pub use {async_trait, diesel, diesel_async, sluice_model, sluice_store};
}
