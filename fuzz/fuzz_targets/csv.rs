//! Fuzz target for the csv parser (see common.rs for what is checked).
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|body: &[u8]| common::check(sluice_ingest::Format::Csv, body));
