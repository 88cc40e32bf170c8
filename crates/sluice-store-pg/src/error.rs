//! The store's failures in `sluice_store`'s terms: "unavailable" when a retry may work
//! (the server cannot be reached, is going away or starting), "timeout" when a statement ran
//! past the call's deadline, a backend error otherwise.

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::pooled_connection::PoolError as ConnectError;
use diesel_async::pooled_connection::deadpool::PoolError;
use sluice_store::StoreError;

pub(crate) fn unavailable(error: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable(error.to_string())
}

pub(crate) fn backend(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(error.to_string())
}

/// A pool error as the store's: anything about reaching the server is "unavailable".
pub(crate) fn from_pool(error: PoolError) -> StoreError {
    match error {
        PoolError::Backend(ConnectError::QueryError(error)) => from_diesel(error),
        other => unavailable(other),
    }
}

/// Diesel's error in our terms: a lost connection or a server shutting down or starting is
/// "unavailable" (a retry may work); anything else is a backend error.
pub(crate) fn from_diesel(error: DieselError) -> StoreError {
    const GONE: [&str; 5] =
        ["terminating connection", "shutting down", "starting up", "connection closed", "in recovery mode"];
    match &error {
        // The server's `statement_timeout`: the call's own deadline, ended on the server.
        DieselError::DatabaseError(_, info) if info.message().contains("statement timeout") => {
            StoreError::Timeout(error.to_string())
        }
        DieselError::DatabaseError(DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand, _) => {
            unavailable(error)
        }
        DieselError::DatabaseError(_, info) if GONE.iter().any(|gone| info.message().contains(gone)) => {
            unavailable(error)
        }
        // 53100 disk_full: a data file could not grow ("could not extend file ...: No space
        // left on device", hint "Check free disk space.").
        DieselError::DatabaseError(_, info)
            if info.message().contains("No space left on device") || info.hint() == Some("Check free disk space.") =>
        {
            StoreError::StorageFull(error.to_string())
        }
        _ => backend(error),
    }
}

/// Whether PostgreSQL rolled a transaction back to break a deadlock, or for a serialization
/// conflict: nothing of it was kept, and the same transaction tried again commits once the
/// other has gone (PostgreSQL's manual, "Deadlocks"). An insert racing retention's sweep of
/// the same old day was such a victim, answered 500 (`cargo xtask ci`, 2026-11-27).
pub(crate) fn conflicted(error: &DieselError) -> bool {
    match error {
        DieselError::DatabaseError(DatabaseErrorKind::SerializationFailure, _) => true,
        DieselError::DatabaseError(_, info) => info.message().contains("deadlock detected"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_data_file_that_cannot_grow_is_storage_full() {
        let message = "could not extend file \"base/16384/16385\": No space left on device".to_owned();
        let error = DieselError::DatabaseError(DatabaseErrorKind::Unknown, Box::new(message));
        assert!(matches!(from_diesel(error), StoreError::StorageFull(reason) if reason.contains("No space left")));
        let other = DieselError::DatabaseError(DatabaseErrorKind::Unknown, Box::new("syntax error".to_owned()));
        assert!(matches!(from_diesel(other), StoreError::Backend(_)));
    }
}
