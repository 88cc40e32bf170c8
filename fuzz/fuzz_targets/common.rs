//! What every fuzz target checks: any bytes give entries or an error, never a panic, and
//! never more entries than the batch limit; the sniffer copes with the same bytes.

use sluice_ingest::{Defaults, Format, Options, parse};

pub fn check(format: Format, body: &[u8]) {
    let mut options = Options::new(1_700_000_000_000);
    options.defaults =
        Defaults { source: Some("fuzz".into()), environment: Some("production".into()), ..Defaults::default() };
    if let Ok(batch) = parse(format, body, &options) {
        assert!(!batch.entries.is_empty() && batch.entries.len() <= options.max_entries);
    }
    let _ = Format::sniff(body);
}
