//! How the search index narrows a search ([`lookup`]): each needle by its signature keys
//! ([`crate::blocks`]) or, when it has none, by its run trigrams in the full-text index.

use sluice_store::Search;
use sluice_store::grams::{needle_run_trigrams, needle_signature_keys, trigram_token};
use sluice_store::signature::needle_positions;

/// How the index looks one needle up.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NeedleLookup {
    /// By the full-text index: an FTS5 query of all of its run trigrams.
    Trigrams(String),
    /// By the chunks' signatures: the positions of all of its signature keys.
    Signature(Vec<u32>),
}

/// What the index narrows a search to: the chunks that may match every index group, a group
/// matching when any one of its needles does.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Lookup {
    /// One FTS5 query of the groups whose needles all go by trigrams; `None` when there are none.
    pub(crate) trigrams: Option<String>,
    /// The groups with a needle that goes by signature.
    pub(crate) signed: Vec<Vec<NeedleLookup>>,
}

/// How the index narrows `search`: each needle by its signature keys (the runs holding a
/// digit, their starts and long grams: what makes an identifier rare) or, when it has none,
/// by its run trigrams. A group with a needle that has no key at all (`a-b`, `123`) narrows
/// nothing and is left to the exact check. `None` when the query gives the index nothing.
/// Every FTS5 token is quoted, and holds no quote (only hex digits), so nothing inside the
/// quotes is special.
pub(crate) fn lookup(search: &Search) -> Option<Lookup> {
    let needle = |needle: &str| {
        let keys = needle_signature_keys(needle);
        if !keys.is_empty() {
            return Some(NeedleLookup::Signature(needle_positions(&keys)));
        }
        let all: Vec<String> = needle_run_trigrams(needle)
            .into_iter()
            .map(|code| {
                let mut token = String::from("\"");
                trigram_token(code, &mut token);
                token.push('"');
                token
            })
            .collect();
        (!all.is_empty()).then(|| NeedleLookup::Trigrams(format!("({})", all.join(" AND "))))
    };
    let mut trigrams = Vec::new();
    let mut signed = Vec::new();
    for group in search.query.index_groups() {
        let Some(needles) = group.iter().map(|text| needle(text)).collect::<Option<Vec<NeedleLookup>>>() else {
            continue;
        };
        if needles.iter().all(|needle| matches!(needle, NeedleLookup::Trigrams(_))) {
            let queries: Vec<String> = needles
                .into_iter()
                .filter_map(|needle| match needle {
                    NeedleLookup::Trigrams(query) => Some(query),
                    NeedleLookup::Signature(_) => None,
                })
                .collect();
            trigrams.push(format!("({})", queries.join(" OR ")));
        } else {
            signed.push(needles);
        }
    }
    let trigrams = (!trigrams.is_empty()).then(|| trigrams.join(" AND "));
    (trigrams.is_some() || !signed.is_empty()).then_some(Lookup { trigrams, signed })
}

#[cfg(test)]
mod tests {
    use sluice_query::SearchField;

    use super::*;

    #[test]
    fn needles_go_by_their_signature_keys_or_else_their_trigrams() {
        let search = |raw: &str| Search {
            query: sluice_query::Query::parse(raw).expect("query"),
            fields: vec![SearchField::Message],
        };
        let hex = |text: &str| needle_run_trigrams(text).iter().map(|code| format!("\"{code:x}\"")).collect::<Vec<_>>();
        let signed = |text: &str| NeedleLookup::Signature(needle_positions(&needle_signature_keys(text)));
        assert_eq!(
            lookup(&search("Abcd efg OR hij -zzz")),
            Some(Lookup {
                trigrams: Some(format!(
                    "(({})) AND (({}) OR ({}))",
                    hex("abcd").join(" AND "),
                    hex("efg")[0],
                    hex("hij")[0]
                )),
                signed: Vec::new(),
            })
        );
        assert_eq!(lookup(&search("ab -cdef")), None);
        // A needle without a key narrows nothing: its group is left out, or the whole query.
        assert_eq!(lookup(&search("a-b 123")), None);
        assert_eq!(
            lookup(&search("a-b OR abcd efg")),
            Some(Lookup { trigrams: Some(format!("(({}))", hex("efg")[0])), signed: Vec::new() })
        );
        // The runs a needle's separators delimit, and the long grams of its long runs.
        assert_eq!(
            lookup(&search("ORD-4821937 shipped")),
            Some(Lookup {
                trigrams: Some(format!("(({}))", hex("shipped").join(" AND "))),
                signed: vec![vec![signed("ord-4821937")]],
            })
        );
        assert_eq!(
            lookup(&search("8F3A2B1C9D0E4F57 OR shipped")),
            Some(Lookup {
                trigrams: None,
                signed: vec![vec![
                    signed("8f3a2b1c9d0e4f57"),
                    NeedleLookup::Trigrams(format!("({})", hex("shipped").join(" AND ")))
                ]],
            })
        );
    }
}
