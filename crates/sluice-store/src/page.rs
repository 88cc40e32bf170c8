//! A page of a search collected from rows read newest first, the same way in every store:
//! skip `offset` matches, keep `limit`, and stop at the first match after them, which decides
//! `has_more` exactly. And [`Newest`], the window of a walk that reads rows a step at a time
//! but not in order: it holds the rows that may be on the page whole and those the page skips
//! by their key only, so memory holds the page, up to 100,000 keys and one step.

use std::collections::HashMap;
use std::hash::Hash;

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

/// A stored row as a [`Newest`] window orders it: newest first by `(ts, id)`.
pub trait KeyedRow {
    /// The row's id as its store holds it.
    type Id: Ord + Clone + Hash;
    /// The row's time, Unix ms.
    fn ts(&self) -> i64;
    /// The row's id.
    fn id(&self) -> &Self::Id;
}

/// A row a [`Newest`] window holds: whole while it may be on the page, its key while the page
/// skips it.
enum Held<R: KeyedRow> {
    Row(R),
    Key(i64, R::Id),
}

impl<R: KeyedRow> Held<R> {
    fn key(&self) -> (i64, &R::Id) {
        match self {
            Held::Row(row) => (row.ts(), row.id()),
            Held::Key(ts, id) => (*ts, id),
        }
    }
}

/// The newest rows that decide a page, gathered from steps that arrive in no order: the
/// first `offset + limit + 1` by `(ts, id)`, those before the page's offset kept as keys (24
/// to 40 bytes each, not a log's text). A key that later rows push onto the page is read again
/// by the store ([`Newest::into_page`]).
///
/// ```
/// use sluice_store::Page;
/// use sluice_store::page::{KeyedRow, Newest};
/// struct Row(i64, u32);
/// impl KeyedRow for Row {
///     type Id = u32;
///     fn ts(&self) -> i64 { self.0 }
///     fn id(&self) -> &u32 { &self.1 }
/// }
/// let mut newest = Newest::new(Page { limit: 2, offset: 1 });
/// newest.extend([Row(50, 1), Row(10, 2)]);
/// newest.extend([Row(40, 3), Row(30, 4)]);
/// // 50 is skipped; 40 and 30 are the page, 10 tells more follow.
/// let page = newest.into_page();
/// assert!(page.missing().is_empty());
/// let rows = page.fill(Default::default());
/// assert_eq!(rows.iter().map(|row| row.0).collect::<Vec<_>>(), [40, 30, 10]);
/// ```
pub struct Newest<R: KeyedRow> {
    need: usize,
    skipped: usize,
    held: Vec<Held<R>>,
}

impl<R: KeyedRow> Newest<R> {
    /// An empty window for `page`.
    pub fn new(page: Page) -> Self {
        let skipped = usize::try_from(page.offset).unwrap_or(usize::MAX);
        Newest { need: skipped.saturating_add(page.limit as usize).saturating_add(1), skipped, held: Vec::new() }
    }

    /// Adds a step's rows, keeping the newest `need` of all seen.
    pub fn extend(&mut self, rows: impl IntoIterator<Item = R>) {
        self.held.extend(rows.into_iter().map(Held::Row));
        self.held.sort_by(|a, b| b.key().cmp(&a.key()));
        self.held.truncate(self.need);
        for held in self.held.iter_mut().take(self.skipped) {
            if let Held::Row(row) = held {
                *held = Held::Key(row.ts(), row.id().clone());
            }
        }
    }

    /// The rows that decide the page: `offset + limit + 1`.
    pub fn need(&self) -> usize {
        self.need
    }

    /// How many rows are held (keys included).
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// Whether no row is held.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// Whether the page is decided once every row left is at `bound` or older: `need` rows
    /// newer than that are held.
    pub fn decided(&self, bound: i64) -> bool {
        self.held.len() == self.need && self.held.last().is_some_and(|held| held.key().0 > bound)
    }

    /// The rows from the page's offset on: its `limit` and one more when there is one.
    pub fn into_page(mut self) -> PageRows<R> {
        let rows = self.held.split_off(self.skipped.min(self.held.len()));
        PageRows { rows }
    }
}

/// The rows of a page from a [`Newest`] window, some of them keys to read again.
pub struct PageRows<R: KeyedRow> {
    rows: Vec<Held<R>>,
}

impl<R: KeyedRow> PageRows<R> {
    /// The `(ts, id)` of the rows the store must read again, oldest last.
    pub fn missing(&self) -> Vec<(i64, R::Id)> {
        self.rows
            .iter()
            .filter_map(|held| match held {
                Held::Key(ts, id) => Some((*ts, id.clone())),
                Held::Row(_) => None,
            })
            .collect()
    }

    /// The page's rows, newest first, with those read again put in their places; one the
    /// store no longer has (retention deleted it meanwhile) is left out.
    pub fn fill(self, mut read: HashMap<R::Id, R>) -> Vec<R>
    where
        R::Id: Eq,
    {
        self.rows
            .into_iter()
            .filter_map(|held| match held {
                Held::Row(row) => Some(row),
                Held::Key(_, id) => read.remove(&id),
            })
            .collect()
    }
}
