//! Fuzz target for the text parser (see common.rs for what is checked).
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|body: &[u8]| common::check(sluice_ingest::Format::Text, body));
