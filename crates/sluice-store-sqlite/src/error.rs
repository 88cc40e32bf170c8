//! The store's failures in `sluice_store`'s terms: diesel's errors mapped to "unavailable"
//! (busy or locked: a retry may work), "timeout" (a statement its call's deadline stopped),
//! "storage full" (SQLite's `SQLITE_FULL`), a backend error otherwise.

use diesel::SqliteConnection;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use sluice_store::StoreError;

pub(crate) fn backend(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(error.to_string())
}

/// Diesel's error in our terms: a busy or locked database is "unavailable", a retry may work;
/// a statement its call's deadline stopped is a timeout ([`crate::deadline`]).
pub(crate) fn from_diesel(error: DieselError) -> StoreError {
    match &error {
        DieselError::DatabaseError(_, info) if info.message().contains(crate::deadline::DEADLINE_PASSED) => {
            StoreError::Timeout(error.to_string())
        }
        DieselError::DatabaseError(DatabaseErrorKind::Unknown, info)
            if info.message().contains("locked") || info.message().contains("busy") =>
        {
            StoreError::Unavailable(error.to_string())
        }
        // SQLITE_FULL: the disk, or the file's `max_page_count`, has no room for the write.
        DieselError::DatabaseError(_, info) if info.message().contains("database or disk is full") => {
            StoreError::StorageFull(error.to_string())
        }
        _ => backend(error),
    }
}

/// Why a write transaction's work failed: diesel's error or the store's own, in the store's
/// terms (`?` takes either inside [`write_transaction`]).
#[derive(Debug)]
pub(crate) struct Failed(pub(crate) StoreError);

impl From<DieselError> for Failed {
    fn from(error: DieselError) -> Self {
        Failed(from_diesel(error))
    }
}

impl From<StoreError> for Failed {
    fn from(error: StoreError) -> Self {
        Failed(error)
    }
}

/// `work` in an immediate transaction, answering the error that ended it: on a full disk
/// SQLite rolls the transaction back itself, and diesel's own rollback then fails with an
/// error that would hide the cause (a 500 where ingest owes a 503 `Storage is full`).
pub(crate) fn write_transaction<T>(
    connection: &mut SqliteConnection,
    work: impl FnOnce(&mut SqliteConnection) -> Result<T, Failed>,
) -> Result<T, StoreError> {
    let mut cause: Option<StoreError> = None;
    connection
        .immediate_transaction(|connection| {
            work(connection).map_err(|Failed(error)| {
                cause = Some(error.clone());
                Failed(error)
            })
        })
        .map_err(|Failed(error)| cause.take().unwrap_or(error))
}
