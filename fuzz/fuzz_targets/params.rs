//! Fuzz target for query-string parameters: any query string is read or refused with issues,
//! never a panic, as the list, search and stats routes read theirs (text, vocabularies,
//! integers, the search fields, the stats period).
#![no_main]

use sluice_model::{Environment, Level};
use sluice_query::SearchField;
use sluice_query::params::Params;
use sluice_query::stats::StatsRequest;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| {
    let Ok(query) = std::str::from_utf8(bytes) else { return };
    let Ok(mut params) = Params::parse(query) else { return };
    let _ = params.text("source");
    let _ = params.vocabulary::<Level>("level");
    let _ = params.vocabulary::<Environment>("environment");
    let limit = params.integer("limit", 1);
    let offset = params.integer("offset", 0);
    assert!(limit.is_none_or(|limit| limit >= 1) && offset.is_none_or(|offset| offset >= 0));
    let _ = params.integer("from", 0);
    if let Err(issue) = SearchField::parse_list(params.text("fields").as_deref()) {
        params.push(issue);
    }
    let (from, to, group_by) = (params.text("from"), params.text("to"), params.text("groupBy"));
    if let Err(issues) = StatsRequest::parse(from.as_deref(), to.as_deref(), group_by.as_deref(), 1_795_305_600_000) {
        issues.into_iter().for_each(|issue| params.push(issue));
    }
    if let Err(invalid) = params.finish() {
        assert!(!invalid.0.is_empty());
    }
});
