//! How a store runs a call on one of its connections ([`Calls`]): what the queries both stores
//! share ([`tenancy_and_accounts!`](crate::tenancy_and_accounts)) need of each.

use std::future::Future;
use std::pin::Pin;

use diesel::result::Error as DieselError;
use sluice_store::{PoolStatus, StoreError};

/// A call's work on a connection.
pub type CallFuture<'c, R> = Pin<Box<dyn Future<Output = Result<R, StoreError>> + Send + 'c>>;

/// A transaction's work: any error, the database's or the store's, rolls it back.
pub type TransactionFuture<'c, R> = Pin<Box<dyn Future<Output = Result<R, TransactionError>> + Send + 'c>>;

/// Why a transaction's work stopped: it is rolled back either way.
#[derive(Debug)]
pub enum TransactionError {
    /// A statement failed.
    Diesel(DieselError),
    /// The work refused (a rule, a missing row, a corrupt column).
    Store(StoreError),
}

impl From<DieselError> for TransactionError {
    fn from(error: DieselError) -> Self {
        TransactionError::Diesel(error)
    }
}

impl From<StoreError> for TransactionError {
    fn from(error: StoreError) -> Self {
        TransactionError::Store(error)
    }
}

impl TransactionError {
    /// The call's answer: a statement's failure as `from_diesel` reads it, or the refusal.
    pub fn into_store(self, from_diesel: impl FnOnce(DieselError) -> StoreError) -> StoreError {
        match self {
            TransactionError::Diesel(error) => from_diesel(error),
            TransactionError::Store(error) => error,
        }
    }
}

/// A call's work on a connection of type `C`, answering `R`.
pub trait Work<C, R>: for<'c> FnOnce(&'c mut C) -> CallFuture<'c, R> + Send + 'static {}

impl<C, R, F> Work<C, R> for F where F: for<'c> FnOnce(&'c mut C) -> CallFuture<'c, R> + Send + 'static {}

/// A transaction's work on a connection of type `C`, answering `R`.
pub trait TransactionWork<C, R>: for<'c> FnOnce(&'c mut C) -> TransactionFuture<'c, R> + Send + 'static {}

impl<C, R, F> TransactionWork<C, R> for F where F: for<'c> FnOnce(&'c mut C) -> TransactionFuture<'c, R> + Send + 'static
{}

/// A store's way of running a call: which connection, within what deadline, under which lock.
pub trait Calls: Sync {
    /// The connection a call's work gets.
    type Connection: Send + 'static;

    /// Runs `work` on a connection, within the call's deadline.
    fn read<R: Send + 'static>(
        &self,
        work: impl Work<Self::Connection, R>,
    ) -> impl Future<Output = Result<R, StoreError>> + Send;

    /// [`Calls::read`] for work that writes: where the store serialises its writers, in turn.
    fn write<R: Send + 'static>(
        &self,
        work: impl Work<Self::Connection, R>,
    ) -> impl Future<Output = Result<R, StoreError>> + Send;

    /// [`Calls::write`] in one transaction that holds the write lock from its start, so rows it
    /// reads stay as read until it commits (with `lock_rows`, the rows it locks).
    fn transaction<R: Send + 'static>(
        &self,
        work: impl TransactionWork<Self::Connection, R>,
    ) -> impl Future<Output = Result<R, StoreError>> + Send;

    /// The store's error for a database error.
    fn from_diesel(error: DieselError) -> StoreError;
}

/// A pool's state as the store reports it (`Store::pool_status`).
pub fn pool_status(status: deadpool::Status) -> PoolStatus {
    PoolStatus { max: status.max_size, open: status.size, idle: status.available, waiting: status.waiting }
}
