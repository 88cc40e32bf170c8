//! The store's failures in `sluice_store`'s terms: diesel's errors mapped to "unavailable"
//! (busy or locked: a retry may work), "timeout" (a statement its call's deadline stopped),
//! "storage full" (SQLite's `SQLITE_FULL`), a backend error otherwise.

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
