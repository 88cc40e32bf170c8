//! What the API answers, as typed values: the wire types of `sluice-api` (the ones the server
//! writes its answers from), and the live tail's events.

pub use sluice_api::*;

/// One event of the live tail.
#[derive(Debug, Clone, PartialEq)]
pub enum TailEvent {
    /// A log, as it was committed.
    Log(Box<Log>),
    /// The server dropped this many logs because the reader fell behind.
    Dropped(u64),
}
