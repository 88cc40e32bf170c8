//! What the OTLP fuzz targets check: any bytes give a batch of at most 1,000 records, kept or
//! counted as rejected, or an error; never a panic; the JSON probe copes with the same bytes.

use sluice_ingest::Options;
use sluice_ingest::otlp::{Encoding, MAX_RECORDS, is_otlp_json, parse_otlp};

pub fn check(encoding: Encoding, body: &[u8]) {
    let mut options = Options::new(1_700_000_000_000);
    options.defaults.environment = Some("production".into());
    if let Ok(batch) = parse_otlp(encoding, body, &options) {
        assert!(batch.entries.len() + batch.rejected <= MAX_RECORDS);
        assert_eq!(batch.rejected == 0, batch.error_message.is_empty());
        let _ = batch.response(encoding);
    }
    let _ = is_otlp_json(body);
}
