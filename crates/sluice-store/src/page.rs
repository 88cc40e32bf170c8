//! A page of a search collected from rows read newest first, the same way in every store:
//! skip `offset` matches, keep `limit`, and stop at the first match after them, which decides
//! `has_more` exactly.

use sluice_model::Log;

use crate::{LogPage, Page, Search, StoreError};

/// A stored log row the exact check can read before it is turned into a [`Log`].
pub trait SearchableRow: TryInto<Log, Error = StoreError> {
    /// Whether the row's searched fields match `search` (the check every index candidate
    /// passes).
    fn matches(&self, search: &Search) -> bool;
}

/// Collects the page of `search` from rows offered newest first.
#[derive(Debug)]
pub struct PageCollector<'a> {
    search: &'a Search,
    page: Page,
    skipped: u64,
    read: usize,
    logs: Vec<Log>,
    has_more: bool,
}

impl<'a> PageCollector<'a> {
    /// An empty page of `search`.
    pub fn new(search: &'a Search, page: Page) -> Self {
        PageCollector { search, page, skipped: 0, read: 0, logs: Vec::new(), has_more: false }
    }

    /// Offers one row; false once the page is decided (full, and one more match seen), after
    /// which later rows cannot change it.
    pub fn offer<R: SearchableRow>(&mut self, row: R) -> Result<bool, StoreError> {
        self.read += 1;
        if !row.matches(self.search) {
            return Ok(true);
        }
        if self.skipped < self.page.offset {
            self.skipped += 1;
        } else if self.logs.len() == self.page.limit as usize {
            self.has_more = true;
            return Ok(false);
        } else {
            self.logs.push(row.try_into()?);
        }
        Ok(true)
    }

    /// Offers rows until the page is decided; false once it is.
    pub fn offer_all<R: SearchableRow>(&mut self, rows: impl IntoIterator<Item = R>) -> Result<bool, StoreError> {
        for row in rows {
            if !self.offer(row)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// How many rows were offered.
    pub fn read(&self) -> usize {
        self.read
    }

    /// The page.
    pub fn finish(self) -> LogPage {
        LogPage { logs: self.logs, has_more: self.has_more }
    }
}
