//! Fuzz target for block decoding: any bytes, cut into a head, an index and a body, open as a
//! block or give an error, never a panic; an opened block's logs, lookups by id and searches
//! end in logs or an error.
#![no_main]

use sluice_blocks::{Block, LogFilter, Matcher, Search};
use sluice_query::{Query, SearchField};

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| {
    // The first four bytes say how long the head and the index are.
    let Some((lengths, rest)) = bytes.split_first_chunk::<4>() else { return };
    let head_length = usize::from(u16::from_le_bytes([lengths[0], lengths[1]])).min(rest.len());
    let (head, rest) = rest.split_at(head_length);
    let index_length = usize::from(u16::from_le_bytes([lengths[2], lengths[3]])).min(rest.len());
    let (index, body) = rest.split_at(index_length);
    let Ok(block) = Block::open(head, index, body) else { return };
    let _ = block.all_logs();
    let _ = block.get(block.head.summary.ids.0);
    let filter = LogFilter { source: Some("api".into()), ..LogFilter::default() };
    let Ok(query) = Query::parse("connection reset 4821937") else { return };
    let search = Search { query, fields: SearchField::ALL.to_vec() };
    if let Ok(hits) = block.hits(&Matcher::new(&filter, Some(&search))) {
        let _ = block.logs(&hits);
    }
});
