//! Fuzz target for the search grammar: any `q` is parsed or refused with an issue, never a
//! panic; a parsed query describes itself and checks any text without panicking, and a query
//! matches a text made of its own required terms.
#![no_main]

use sluice_query::Query;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| {
    let Ok(raw) = std::str::from_utf8(bytes) else { return };
    // The text the query is checked against: the input itself, split in two fields.
    let middle = (0..=raw.len() / 2).rev().find(|at| raw.is_char_boundary(*at)).unwrap_or(0);
    let (first, second) = raw.split_at(middle);
    let Ok(query) = Query::parse(raw) else { return };
    let parsed = query.parsed();
    let _ = query.matches(&[first, second]);
    let _ = query.matches(&[]);
    // A log holding every required term and phrase (and nothing excluded) matches.
    if parsed.excluded.is_empty() && parsed.optional.is_empty() {
        let text = parsed.required.iter().chain(&parsed.phrases).cloned().collect::<Vec<_>>().join(" ");
        assert!(query.matches(&[&text]), "{raw:?} does not match {text:?}");
    }
});
