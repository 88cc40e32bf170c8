//! The exact check of a search over a granule's rows at once: each searched column folded
//! ([`sluice_query::fold`]) into one buffer, rows apart by `0xFF` (a byte no UTF-8 text, so no
//! folded needle, holds, so no match spans two rows), each needle found with `memchr`'s
//! `memmem` in one pass over it, and the query's clauses combined row by row. The same
//! answer as [`Search::matches`] row by row (a proptest in `tests/blocks.rs` checks), at a
//! fraction of the cost.

use memchr::memmem::Finder;
use sluice_query::{Clause, Needle, SearchField};

use crate::DecodeError;
use crate::block::Column;
use crate::granule::Granule;
use crate::search::Search;

/// Between rows in a folded buffer.
const ROW_END: u8 = 0xFF;

/// One searched column of the rows being checked, folded: the bytes, and where each row starts.
struct Folded {
    bytes: Vec<u8>,
    starts: Vec<usize>,
}

impl Folded {
    fn of(granule: &Granule<'_>, column: Column, rows: &[usize]) -> Result<Folded, DecodeError> {
        let text = granule.text(column)?;
        let mut folded = Folded { bytes: Vec::new(), starts: Vec::with_capacity(rows.len() + 1) };
        for row in rows {
            folded.starts.push(folded.bytes.len());
            match text.get(*row) {
                Some(value) if value.is_ascii() => {
                    folded.bytes.extend(value.bytes().map(|byte| byte.to_ascii_lowercase()))
                }
                Some(value) => folded.bytes.extend_from_slice(sluice_query::fold(value).as_bytes()),
                None => {}
            }
            folded.bytes.push(ROW_END);
        }
        folded.starts.push(folded.bytes.len());
        Ok(folded)
    }

    /// Marks in `found` (one a row) each row that contains `finder`'s needle.
    fn mark(&self, finder: &Finder<'_>, found: &mut [bool]) {
        let mut from = 0;
        let mut row = 0;
        while let Some(at) = finder.find(&self.bytes[from..]) {
            let at = from + at;
            // The row holding `at`: rows are in order, so the search only moves forward.
            while self.starts[row + 1] <= at {
                row += 1;
            }
            found[row] = true;
            from = self.starts[row + 1];
            if from >= self.bytes.len() {
                break;
            }
        }
    }
}

/// Of `rows` (rows of `granule`), those whose searched fields match `search`.
pub(crate) fn matching_rows(search: &Search, granule: &Granule<'_>, rows: &[usize]) -> Result<Vec<usize>, DecodeError> {
    let columns: Vec<Folded> = search
        .fields
        .iter()
        .map(|field| {
            let column = match field {
                SearchField::Message => Column::Message,
                SearchField::ErrorName => Column::ErrorName,
                SearchField::ErrorStack => Column::ErrorStack,
                SearchField::Data => Column::Data,
            };
            Folded::of(granule, column, rows)
        })
        .collect::<Result<_, _>>()?;
    let found_anywhere = |needle: &Needle| {
        let mut found = vec![needle.folded.is_empty(); rows.len()];
        let finder = Finder::new(needle.folded.as_bytes());
        for column in &columns {
            column.mark(&finder, &mut found);
        }
        found
    };
    let mut keep = vec![true; rows.len()];
    for clause in search.query.clauses() {
        match clause {
            Clause::Contains(needle) => {
                keep.iter_mut().zip(found_anywhere(needle)).for_each(|(keep, found)| *keep &= found);
            }
            Clause::Excludes(needle) => {
                keep.iter_mut().zip(found_anywhere(needle)).for_each(|(keep, found)| *keep &= !found);
            }
            Clause::AnyOf(needles) => {
                let mut any = vec![false; rows.len()];
                for needle in needles {
                    any.iter_mut().zip(found_anywhere(needle)).for_each(|(any, found)| *any |= found);
                }
                keep.iter_mut().zip(any).for_each(|(keep, any)| *keep &= any);
            }
        }
    }
    Ok(rows.iter().zip(keep).filter(|(_, keep)| *keep).map(|(row, _)| *row).collect())
}
