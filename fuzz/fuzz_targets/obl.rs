//! Fuzz target: the obl parser answers any bytes with entries or an error, never a panic,
//! and never more entries than the batch limit allows.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_ingest::{Defaults, Format, Options, parse};

fuzz_target!(|body: &[u8]| {
    let mut options = Options::new(1_700_000_000_000);
    options.defaults =
        Defaults { source: Some("fuzz".into()), environment: Some("production".into()), ..Defaults::default() };
    if let Ok(batch) = parse(Format::Obl, body, &options) {
        assert!(!batch.entries.is_empty() && batch.entries.len() <= options.max_entries);
    }
    // The sniffer must cope with anything too.
    let _ = Format::sniff(body);
});
