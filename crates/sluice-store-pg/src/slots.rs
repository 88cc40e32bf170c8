//! The counter slots this process's insert transactions take ([`COUNTER_SLOTS`]).

use std::sync::{Mutex, PoisonError};

/// Counter slots: the rows of each counter an insert transaction adds to (migration
/// `counter_slots`). Concurrent transactions of this process take different slots, so they
/// never wait for each other's counter rows (another process's may share one, and then waits,
/// as any writer did before slots).
const COUNTER_SLOTS: u32 = 8;

/// The slots this process's insert transactions hold.
pub(crate) struct Slots {
    /// Bit `n`: slot `n` is held.
    held: Mutex<u8>,
    /// Where this process starts looking, so processes sharing a database spread out.
    first: u32,
}

impl Slots {
    pub(crate) fn new() -> Self {
        Slots { held: Mutex::new(0), first: std::process::id() % COUNTER_SLOTS }
    }

    /// A slot no other transaction of this process holds (when all are held, a held one:
    /// waiting on a counter row is slower, never wrong), given back when dropped.
    pub(crate) fn take(&self) -> Slot<'_> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let free = (0..COUNTER_SLOTS).map(|n| (self.first + n) % COUNTER_SLOTS).find(|&n| *held & (1 << n) == 0);
        let number = free.unwrap_or(self.first);
        if free.is_some() {
            *held |= 1 << number;
        }
        Slot { slots: self, number, owned: free.is_some() }
    }
}

/// A slot taken from [`Slots`].
pub(crate) struct Slot<'a> {
    slots: &'a Slots,
    number: u32,
    owned: bool,
}

impl Slot<'_> {
    pub(crate) fn number(&self) -> i16 {
        i16::try_from(self.number).unwrap_or(0)
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if self.owned {
            *self.slots.held.lock().unwrap_or_else(PoisonError::into_inner) &= !(1 << self.number);
        }
    }
}
