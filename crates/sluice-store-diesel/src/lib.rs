//! What the two SQL stores share: diesel's view of the tables they hold alike (workspaces,
//! API keys, users, memberships, sessions, device codes), their rows and conversions to the
//! model, and the id column type ([`Id`]), a `uuid` on PostgreSQL and a 16-byte blob on SQLite.
//!
//! Invariant: one definition of each shared table and row. A store crate declares only the
//! tables it alone has; the `shared_tables_match_the_migrations` test of each store checks
//! these definitions against that store's migrated database.

pub mod columns;
mod id;
pub mod rows;
#[expect(missing_docs, reason = "diesel's column types: each column is named as in the migrations")]
pub mod schema;

pub use id::{DbId, Id};
