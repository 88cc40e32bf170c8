//! The grammar's forms and mixtures, the parsed shape, and matching.

use proptest::prelude::*;

use super::*;

fn parsed(raw: &str) -> ParsedQuery {
    Query::parse(raw).expect("a valid query").parsed()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

fn shape(required: &[&str], phrases: &[&str], excluded: &[&str], optional: &[&str]) -> ParsedQuery {
    ParsedQuery {
        required: strings(required),
        phrases: strings(phrases),
        excluded: strings(excluded),
        optional: strings(optional),
    }
}

#[test]
fn each_form_lands_in_its_list() {
    assert_eq!(parsed("timeout"), shape(&["timeout"], &[], &[], &[]));
    assert_eq!(parsed("disk full"), shape(&["disk", "full"], &[], &[], &[]));
    assert_eq!(parsed(r#""connection reset""#), shape(&[], &["connection reset"], &[], &[]));
    assert_eq!(parsed("warn OR error"), shape(&[], &[], &[], &["warn", "error"]));
    assert_eq!(parsed("-debug"), shape(&[], &[], &["debug"], &[]));
    assert_eq!(parsed(r#"-"health check""#), shape(&[], &[], &["health check"], &[]));
}

#[test]
fn forms_mix_in_one_query() {
    assert_eq!(
        parsed(r#"db "pool exhausted" -test a OR b OR "c d" tail"#),
        shape(&["db", "tail"], &["pool exhausted"], &["test"], &["a", "b", "c d"])
    );
    // Two OR groups: both listed in `optional`; each must match on its own.
    assert_eq!(parsed("a OR b c OR d"), shape(&[], &[], &[], &["a", "b", "c", "d"]));
    let query = Query::parse("a OR b c OR d").expect("valid");
    assert!(query.matches(&["a c"]));
    assert!(!query.matches(&["a b"]), "the second group needs c or d");
}

#[test]
fn or_is_an_operator_only_in_upper_case_between_two_needles() {
    assert_eq!(parsed("warn or error"), shape(&["warn", "or", "error"], &[], &[], &[]));
    assert_eq!(parsed("OR timeout"), shape(&["OR", "timeout"], &[], &[], &[]));
    assert_eq!(parsed("timeout OR"), shape(&["timeout", "OR"], &[], &[], &[]));
    assert_eq!(parsed("a OR -b"), shape(&["a", "OR"], &[], &["b"], &[]));
    assert_eq!(parsed("a ORb"), shape(&["a", "ORb"], &[], &[], &[]));
    assert_eq!(parsed("a\tOR\n\"b c\""), shape(&[], &[], &[], &["a", "b c"]));
}

#[test]
fn dashes_and_quotes_at_the_edges() {
    assert_eq!(parsed("- x"), shape(&["-", "x"], &[], &[], &[]));
    assert_eq!(parsed("--verbose"), shape(&[], &[], &["-verbose"], &[]));
    assert_eq!(parsed("re-try"), shape(&["re-try"], &[], &[], &[]));
    assert_eq!(parsed(r#""unclosed phrase"#), shape(&[], &["unclosed phrase"], &[], &[]));
    assert_eq!(parsed(r#"say"hi there" now"#), shape(&["say", "now"], &["hi there"], &[], &[]));
    assert_eq!(parsed(r#"a "" b"#), shape(&["a", "b"], &[], &[], &[]), "an empty phrase means nothing");
    assert_eq!(parsed(r#"a OR "" b"#), shape(&["b"], &[], &[], &[]), "an OR group with nothing always holds");
}

#[test]
fn short_long_and_empty_queries_are_refused() {
    for raw in ["", "a", "  a  ", "é", r#""""#, r#"-"""#, "\t\t"] {
        assert_eq!(Query::parse(raw), Err(QueryError::TooShort), "{raw:?}");
    }
    assert!(Query::parse("ab").is_ok());
    assert!(Query::parse(&"é".repeat(MAX_QUERY_CHARS)).is_ok(), "characters, not bytes");
    let long = Query::parse(&"x".repeat(MAX_QUERY_CHARS + 1)).unwrap_err();
    assert_eq!(long.issue().map(|issue| issue.message), Some("String must contain at most 1000 character(s)".into()));
    assert_eq!(QueryError::TooShort.to_string(), "Search query must be at least 2 characters");
}

#[test]
fn matching_ignores_case_in_every_script() {
    let query = Query::parse("ÉCHEC straße ΣΦΑΛΜΑ").expect("valid");
    assert!(query.matches(&["échec de la tâche", "STRASSE", "straße: σφαλμα"]));
    assert!(!query.matches(&["echec straße σφαλμα"]), "no accent folding: é is not e");
    assert!(Query::parse("TIMEOUT").expect("valid").matches(&["read timeout"]));
}

#[test]
fn wildcards_and_backslashes_are_literal() {
    let query = Query::parse(r"100% a_b C:\temp").expect("valid");
    assert!(query.matches(&[r"disk 100% full, a_b in C:\temp"]));
    assert!(!query.matches(&[r"disk 1000 full, axb in C:/temp"]));
    assert!(!Query::parse("%%").expect("valid").matches(&["anything at all"]));
}

#[test]
fn exclusions_look_at_every_field() {
    let query = Query::parse("error -retry").expect("valid");
    assert!(query.matches(&["error in job", "", "{}"]));
    assert!(!query.matches(&["error in job", "", r#"{"action":"Retry"}"#]));
    let only_exclusions = Query::parse("-debug -trace").expect("valid");
    assert!(only_exclusions.matches(&["anything"]));
    assert!(!only_exclusions.matches(&["a DEBUG line"]));
}

#[test]
fn a_needle_is_found_within_one_field_not_across_two() {
    let query = Query::parse(r#""disk full""#).expect("valid");
    assert!(!query.matches(&["disk", "full"]));
    assert!(query.matches(&["the disk full alarm"]));
}

#[test]
fn field_lists() {
    assert_eq!(SearchField::parse_list(Some("")), Ok(vec![SearchField::Message]));
    assert_eq!(
        SearchField::parse_list(Some("errorName,errorStack")),
        Ok(vec![SearchField::ErrorName, SearchField::ErrorStack])
    );
    assert_eq!(SearchField::parse_list(Some(" data ")), Ok(vec![SearchField::Data]));
    let issue = SearchField::parse_list(Some("message,")).unwrap_err();
    assert_eq!(
        issue.message,
        "Invalid enum value. Expected 'message' | 'errorName' | 'errorStack' | 'data', received ''"
    );
    assert!(SearchField::parse_list(Some("Message")).is_err(), "names are exact");
}

/// Queries built from parts: words (some `OR`, some with `-`), phrases, spaces.
fn query_text() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        "[a-zA-Zé%_\\\\]{1,6}",
        Just("OR".to_owned()),
        "-[a-z]{0,4}",
        "\"[a-z %]{0,8}\"?",
        Just("\"".to_owned()),
    ];
    prop::collection::vec((part, prop_oneof![Just(" "), Just("  "), Just("\t"), Just("")]), 0..8)
        .prop_map(|parts| parts.into_iter().map(|(part, space)| format!("{part}{space}")).collect())
}

#[test]
fn index_groups_leave_short_needles_and_exclusions_to_the_check() {
    let query = Query::parse(r#"ab "Pool Full" -timeout x OR yyy ERR OR WARN"#).unwrap();
    assert_eq!(query.index_groups(), [vec!["pool full"], vec!["err", "warn"]]);
    assert!(Query::parse("-timeout").unwrap().index_groups().is_empty());
    assert!(Query::parse("ab cd").unwrap().index_groups().is_empty());
    // Three characters, counted as characters: "ÉtÉ" is indexable.
    assert_eq!(Query::parse("ÉtÉ").unwrap().index_groups(), [vec!["été"]]);
}

proptest! {
    /// Folding works character by character, so a substring of a text folds to a substring
    /// of the folded text: an index over folded text never misses what the check finds.
    #[test]
    fn folding_keeps_substrings(a in "\\PC{0,12}", b in "\\PC{0,12}", c in "\\PC{0,12}") {
        let whole = format!("{a}{b}{c}");
        prop_assert_eq!(fold(&whole), format!("{}{}{}", fold(&a), fold(&b), fold(&c)));
        prop_assert!(fold(&whole).contains(&fold(&b)));
    }

    /// The exact check on an ASCII field (searched without a folded copy) decides as folding
    /// the field and looking for the folded needle does.
    #[test]
    fn ascii_fields_match_as_their_folded_text_does(
        text in "[a-zA-Z0-9 _%-]{0,40}",
        needle in "[a-zA-Z0-9 _%-]{1,6}|\\PC{1,6}",
        inside in any::<bool>(),
    ) {
        let text = if inside { format!("{text}{}{text}", needle.to_uppercase()) } else { text };
        let raw = format!("\"{}\"", needle.replace('"', ""));
        if let Ok(query) = Query::parse(&raw) {
            let folded = fold(&text);
            let expected = query.clauses().iter().all(|clause| match clause {
                Clause::Contains(needle) => folded.contains(&needle.folded),
                Clause::Excludes(needle) => !folded.contains(&needle.folded),
                Clause::AnyOf(needles) => needles.iter().any(|needle| folded.contains(&needle.folded)),
            });
            prop_assert_eq!(query.matches(&[&text]), expected, "{:?} in {:?}", raw, text);
        }
    }

    #[test]
    fn every_string_parses_or_is_refused_with_a_reason(raw in "\\PC{0,40}") {
        match Query::parse(&raw) {
            Ok(query) => prop_assert!(!query.clauses().is_empty()),
            Err(error) => prop_assert_eq!(error, QueryError::TooShort),
        }
    }

    #[test]
    fn parsed_lists_hold_every_needle_once(raw in query_text()) {
        if let Ok(query) = Query::parse(&raw) {
            let parsed = query.parsed();
            let listed = parsed.required.len() + parsed.phrases.len() + parsed.excluded.len() + parsed.optional.len();
            let needles: usize = query.clauses().iter().map(|clause| match clause {
                Clause::AnyOf(needles) => needles.len(),
                _ => 1,
            }).sum();
            prop_assert_eq!(listed, needles);
        }
    }

    #[test]
    fn a_log_holding_every_required_needle_and_no_excluded_one_matches(raw in query_text()) {
        if let Ok(query) = Query::parse(&raw) {
            let parsed = query.parsed();
            let mut text: Vec<String> = parsed.required.iter().chain(&parsed.phrases).map(|needle| needle.to_uppercase()).collect();
            // One alternative of each OR group.
            for clause in query.clauses() {
                if let Clause::AnyOf(needles) = clause {
                    text.push(needles[0].text.clone());
                }
            }
            let text = text.join(" ");
            let excluded_inside = parsed.excluded.iter().any(|needle| fold(&text).contains(&fold(needle)));
            prop_assert_eq!(query.matches(&[&text]), !excluded_inside, "{:?} in {:?}", raw, text);
        }
    }
}
