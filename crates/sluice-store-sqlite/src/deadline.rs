//! The deadline of a store call on SQLite, which has no statement timeout of its own.
//!
//! A call runs on a blocking thread with its deadline in a thread-local ([`DeadlineScope`]).
//! A statement that may step many rows calls `sluice_alive` once a row, which answers with a
//! [`Verdict`] that fails the statement once the deadline has passed: SQLite stops it where it
//! is, the call returns [`StoreError::Timeout`] and its connection goes back to the pool at once.
//! The reads' loops between their statements check the deadline too ([`check`]).

use std::cell::Cell;
use std::time::Instant;

use diesel::serialize::{self, Output, ToSql};
use diesel::sql_types::Bool;
use diesel::sqlite::Sqlite;
use sluice_store::StoreError;

/// The text a statement stopped by its deadline fails with; [`crate::error::from_diesel`]
/// knows it.
pub(crate) const DEADLINE_PASSED: &str = "sluice: the call's deadline passed";

/// How many rows a statement steps between two reads of the clock (a read costs about 25 ns,
/// a row's exact check more; the deadline is late by at most these rows).
const ROWS_PER_CHECK: u32 = 64;

thread_local! {
    /// The deadline of the call running on this thread, if any.
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    /// Rows stepped since the clock was last read.
    static ROWS: Cell<u32> = const { Cell::new(0) };
}

/// Sets this thread's deadline until dropped.
pub(crate) struct DeadlineScope;

impl DeadlineScope {
    pub(crate) fn enter(deadline: Instant) -> Self {
        DEADLINE.with(|current| current.set(Some(deadline)));
        ROWS.with(|rows| rows.set(0));
        DeadlineScope
    }
}

impl Drop for DeadlineScope {
    fn drop(&mut self) {
        DEADLINE.with(|current| current.set(None));
    }
}

/// Whether this thread's call is past its deadline (false outside a call).
pub(crate) fn passed() -> bool {
    DEADLINE.with(Cell::get).is_some_and(|deadline| Instant::now() >= deadline)
}

/// [`passed`] as the store's error, for the loops between statements.
pub(crate) fn check() -> Result<(), StoreError> {
    if passed() { Err(StoreError::Timeout(DEADLINE_PASSED.to_owned())) } else { Ok(()) }
}

/// Whether a statement stepping its rows should stop: true once the deadline has passed, the
/// clock read every [`ROWS_PER_CHECK`] rows.
fn row_past_deadline() -> bool {
    ROWS.with(|rows| {
        let stepped = rows.get() + 1;
        if stepped < ROWS_PER_CHECK {
            rows.set(stepped);
            return false;
        }
        rows.set(0);
        passed()
    })
}

/// What a per-row SQL function answers: its value, or (once the deadline has passed) an error
/// that ends the statement.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Verdict(Option<bool>);

impl Verdict {
    /// `value`, unless this thread's call is past its deadline.
    pub(crate) fn of(value: impl FnOnce() -> bool) -> Self {
        Verdict(if row_past_deadline() { None } else { Some(value()) })
    }
}

impl ToSql<Bool, Sqlite> for Verdict {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        match self.0 {
            Some(true) => <bool as ToSql<Bool, Sqlite>>::to_sql(&true, out),
            Some(false) => <bool as ToSql<Bool, Sqlite>>::to_sql(&false, out),
            None => Err(DEADLINE_PASSED.into()),
        }
    }
}

/// SQL functions written in Rust, registered on every connection.
pub(crate) mod functions {
    diesel::define_sql_function! {
        /// True, or (past the call's deadline) an error that ends the statement: in the filter
        /// of every statement that may step many rows.
        fn sluice_alive() -> Bool;
    }
}

/// Registers [`functions`] on a connection.
pub(crate) fn register_functions(connection: &mut diesel::SqliteConnection) -> diesel::QueryResult<()> {
    // Not deterministic: SQLite would otherwise call it once per statement, not once a row.
    functions::sluice_alive_utils::register_nondeterministic_impl(connection, || Verdict::of(|| true))
}

#[cfg(test)]
mod tests {
    use diesel::connection::SimpleConnection;
    use diesel::prelude::*;
    use diesel::sql_types::BigInt;

    use super::*;

    #[derive(QueryableByName, Debug)]
    struct Count {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }

    /// A million rows, each asking `sluice_alive`.
    const MILLION_ROWS: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000) \
         SELECT count(*) AS n FROM c WHERE sluice_alive()";

    fn connection() -> SqliteConnection {
        let mut connection = SqliteConnection::establish(":memory:").expect("in-memory database");
        register_functions(&mut connection).expect("functions");
        connection
    }

    /// A statement stepping rows stops once its call's deadline has passed, as the store's
    /// timeout; the connection answers the next statement at once; without a deadline, or
    /// before it, the statement runs to its end.
    #[test]
    fn a_statement_past_the_deadline_is_stopped_and_the_connection_serves_again() {
        let mut connection = connection();
        let count = |connection: &mut SqliteConnection| diesel::sql_query(MILLION_ROWS).get_result::<Count>(connection);
        assert_eq!(count(&mut connection).expect("no deadline").n, 1_000_000);
        {
            let _scope = DeadlineScope::enter(Instant::now());
            let error = count(&mut connection).expect_err("the deadline has passed");
            assert!(matches!(crate::error::from_diesel(error), StoreError::Timeout(_)));
            assert!(matches!(check(), Err(StoreError::Timeout(_))));
        }
        // Out of the scope the same connection serves, with no transaction left open.
        connection.batch_execute("BEGIN; ROLLBACK;").expect("no transaction left behind");
        let _scope = DeadlineScope::enter(Instant::now() + std::time::Duration::from_secs(3600));
        assert_eq!(count(&mut connection).expect("before the deadline").n, 1_000_000);
        assert!(check().is_ok());
    }
}
