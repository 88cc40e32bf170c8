//! A store's storage found full, as both stores track it (docs/API.md, "Storage is full"):
//! full from a write that failed for lack of space until one succeeds again, with one ERROR
//! line when it fills and one INFO line when it has room again. The store's readiness check
//! tries a write of its own while it is full ([`crate::Store::ping`]), so the service finds its
//! room again by itself once space is freed, even with no client writing meanwhile.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::StoreError;

/// Whether the storage was full at the last write, and where it is (for the log line).
#[derive(Debug)]
pub struct FullState {
    full: AtomicBool,
    place: String,
}

impl FullState {
    /// Not full; `place` says where the data lives ("SQLite database /var/lib/sluice.db").
    pub fn new(place: impl Into<String>) -> Self {
        FullState { full: AtomicBool::new(false), place: place.into() }
    }

    /// Whether the last write found the storage full.
    pub fn is_full(&self) -> bool {
        self.full.load(Ordering::Acquire)
    }

    /// Takes a write's outcome: a [`StoreError::StorageFull`] marks the storage full (logged
    /// once, when it fills), a success marks it as having room again; any other failure says
    /// nothing about space.
    pub fn note<T>(&self, outcome: &Result<T, StoreError>) {
        match outcome {
            Err(StoreError::StorageFull(reason)) => {
                if !self.full.swap(true, Ordering::AcqRel) {
                    tracing::error!(
                        storage.place = %self.place,
                        error.reason = %reason,
                        "storage full: {} cannot grow; ingest answers 503 until space is freed",
                        self.place
                    );
                }
            }
            Ok(_) => {
                if self.full.swap(false, Ordering::AcqRel) {
                    tracing::info!(storage.place = %self.place, "storage has room again: ingest resumes");
                }
            }
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_from_a_write_refused_for_space_until_one_succeeds() {
        let state = FullState::new("a test database");
        assert!(!state.is_full());
        state.note::<()>(&Err(StoreError::Backend("other".into())));
        assert!(!state.is_full(), "another failure says nothing about space");
        state.note::<()>(&Err(StoreError::StorageFull("database or disk is full".into())));
        assert!(state.is_full());
        state.note::<()>(&Err(StoreError::Unavailable("busy".into())));
        assert!(state.is_full(), "still full until a write succeeds");
        state.note(&Ok(()));
        assert!(!state.is_full());
    }
}
