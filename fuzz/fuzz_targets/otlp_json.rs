//! Fuzz target for the OTLP JSON reader: any bytes give entries (at most 1,000, each record
//! kept or counted as rejected) or an error, never a panic.
#![no_main]

mod otlp;

libfuzzer_sys::fuzz_target!(|body: &[u8]| otlp::check(sluice_ingest::otlp::Encoding::Json, body));
