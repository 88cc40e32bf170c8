//! Blocks against the logs they were made of: every log comes back as it went in, by id and
//! whole; every filter and search finds exactly what checking each log finds (the index never
//! misses and the columns decide); damaged bytes give an error, never a panic.

use proptest::prelude::*;
use sluice_blocks::{Block, GRANULE_ROWS, LogFilter, Matcher, PageCollector, Search, encode};
use sluice_model::{Environment, JsonObject, Level, Log, LogEntry, LogId};
use sluice_query::{Query, SearchField};

mod common;
use common::{random_logs, word_of};

fn matches_filter(log: &Log, filter: &LogFilter) -> bool {
    let entry = &log.entry;
    filter.level.is_none_or(|level| entry.level == level)
        && filter.environment.is_none_or(|environment| entry.environment == environment)
        && filter.source.as_deref().is_none_or(|source| entry.source == source)
        && filter.dataset.as_deref().is_none_or(|dataset| entry.dataset == dataset)
        && filter.user_id.as_deref().is_none_or(|user| entry.user_id.as_deref() == Some(user))
        && filter.session_id.as_deref().is_none_or(|session| entry.session_id.as_deref() == Some(session))
        && filter.flow_id.as_deref().is_none_or(|flow| entry.flow_id.as_deref() == Some(flow))
        && filter.from.is_none_or(|from| entry.timestamp >= from)
        && filter.to.is_none_or(|to| entry.timestamp <= to)
}

fn matches_search(log: &Log, search: &Search) -> bool {
    let entry = &log.entry;
    search.matches(
        &entry.message,
        entry.error_name.as_deref(),
        entry.error_stack.as_deref(),
        entry.data.as_ref().map(JsonObject::as_str),
    )
}

fn sorted_ids(mut ids: Vec<LogId>) -> Vec<LogId> {
    ids.sort_unstable();
    ids
}

#[test]
fn every_log_comes_back_whole_and_by_id() {
    let logs = random_logs(7, 2 * GRANULE_ROWS + 77);
    let encoded = encode(&logs).unwrap();
    let block = Block::open(&encoded.head, &encoded.index, &encoded.body).unwrap();
    assert_eq!(block.head.granules.len(), 3);
    assert_eq!(block.head.summary.rows as usize, logs.len());
    let mut expected = logs.clone();
    expected.sort_by_key(|log| log.id);
    assert_eq!(block.all_logs().unwrap(), expected);
    for log in logs.iter().step_by(37) {
        assert_eq!(block.get(log.id).unwrap().as_ref(), Some(log));
    }
    let absent = LogId::from_slice(&[0xff; 16]).unwrap();
    assert_eq!(block.get(absent).unwrap(), None);
}

#[test]
fn the_summary_counts_what_the_block_holds() {
    let logs = random_logs(11, 1500);
    let encoded = encode(&logs).unwrap();
    let summary = Block::open(&encoded.head, &encoded.index, &encoded.body).unwrap().head.summary;
    for (code, level) in Level::ALL.iter().enumerate() {
        assert_eq!(summary.levels[code] as usize, logs.iter().filter(|log| log.entry.level == *level).count());
    }
    for (code, environment) in Environment::ALL.iter().enumerate() {
        assert_eq!(
            summary.environments[code] as usize,
            logs.iter().filter(|log| log.entry.environment == *environment).count()
        );
    }
    assert!(summary.sources_complete);
    for (source, count) in &summary.sources {
        assert_eq!(*count as usize, logs.iter().filter(|log| log.entry.source == source.as_str()).count());
    }
    let earliest = logs.iter().map(|log| log.entry.timestamp).min().unwrap();
    let latest = logs.iter().map(|log| log.entry.timestamp).max().unwrap();
    assert_eq!(summary.timestamps, (earliest, latest));
}

#[test]
fn too_many_logs_and_repeated_ids_are_refused() {
    assert!(encode(&[]).is_err());
    let mut logs = random_logs(3, 2);
    logs[1].id = logs[0].id;
    assert!(encode(&logs).is_err());
}

/// A needle cut from a log of the block, in one of the ways people search: a word, a piece of
/// one, a run of words, a piece of an identifier.
fn needle_from(logs: &[Log], pick: usize, start: usize, length: usize) -> String {
    let text = &logs[pick % logs.len()].entry.message;
    let cuts: Vec<usize> = text.char_indices().map(|(at, _)| at).chain(std::iter::once(text.len())).collect();
    let from = start % cuts.len();
    let to = (from + length).min(cuts.len() - 1);
    text[cuts[from]..cuts[to]].to_owned()
}

fn quoted(needle: &str) -> String {
    format!("\"{}\"", needle.replace('"', ""))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A search finds exactly the logs whose text matches, whatever the needle's shape.
    #[test]
    fn a_search_finds_exactly_what_checking_every_log_finds(
        seed in any::<u64>(),
        picks in proptest::collection::vec((any::<usize>(), any::<usize>(), 3_usize..24), 1..3),
        shape in 0_usize..4,
        fields in prop_oneof![Just(vec![SearchField::Message]), Just(SearchField::ALL.to_vec()), Just(vec![SearchField::Data])],
    ) {
        let logs = random_logs(seed, GRANULE_ROWS + 300);
        let encoded = encode(&logs).unwrap();
        let block = Block::open(&encoded.head, &encoded.index, &encoded.body).unwrap();
        let needles: Vec<String> = picks.iter().map(|(pick, start, length)| needle_from(&logs, *pick, *start, *length)).collect();
        let raw = match shape {
            0 => quoted(&needles[0]),
            1 => needles.iter().map(|needle| quoted(needle)).collect::<Vec<_>>().join(" OR "),
            2 => format!("{} -{}", quoted(&needles[0]), word_of(seed)),
            _ => needles.iter().map(|needle| quoted(needle)).collect::<Vec<_>>().join(" "),
        };
        let Ok(query) = Query::parse(&raw) else { return Ok(()) };
        let search = Search { query, fields };
        let filter = LogFilter::default();
        let found = sorted_ids(block.hits(&Matcher::new(&filter, Some(&search))).unwrap().iter().map(|hit| hit.id).collect());
        let expected = sorted_ids(logs.iter().filter(|log| matches_search(log, &search)).map(|log| log.id).collect());
        prop_assert_eq!(found, expected, "{}", raw);
    }

    /// A filter keeps exactly the logs that meet it.
    #[test]
    fn a_filter_keeps_exactly_the_logs_that_meet_it(seed in any::<u64>(), pick in any::<usize>(), which in 0_usize..8) {
        let logs = random_logs(seed, GRANULE_ROWS + 300);
        let encoded = encode(&logs).unwrap();
        let block = Block::open(&encoded.head, &encoded.index, &encoded.body).unwrap();
        let model = &logs[pick % logs.len()].entry;
        let mut filter = LogFilter::default();
        match which {
            0 => filter.level = Some(model.level),
            1 => filter.source = Some(model.source.to_string()),
            2 => filter.environment = Some(model.environment),
            3 => filter.user_id = model.user_id.clone().or(Some("nobody".into())),
            4 => filter.session_id = model.session_id.clone().or(Some("none".into())),
            5 => filter.flow_id = model.flow_id.clone().or(Some("none".into())),
            6 => (filter.from, filter.to) = (Some(model.timestamp - 5_000), Some(model.timestamp + 5_000)),
            _ => (filter.dataset, filter.level) = (Some(model.dataset.to_string()), Some(Level::Error)),
        }
        let found = sorted_ids(block.hits(&Matcher::new(&filter, None)).unwrap().iter().map(|hit| hit.id).collect());
        let expected = sorted_ids(logs.iter().filter(|log| matches_filter(log, &filter)).map(|log| log.id).collect());
        prop_assert_eq!(found, expected);
    }
}

#[test]
fn a_rare_identifier_reads_only_its_granules() {
    let mut logs = random_logs(5, 8 * GRANULE_ROWS);
    let planted = 5 * GRANULE_ROWS + 123;
    logs[planted].entry.message = "charge failed for order zq7-88231-xk9 after retry".into();
    let encoded = encode(&logs).unwrap();
    let block = Block::open(&encoded.head, &encoded.index, &encoded.body).unwrap();
    for needle in ["zq7-88231-xk9", "88231-xk9", "q7-88231-x", "charge failed for"] {
        let search = Search { query: Query::parse(&quoted(needle)).unwrap(), fields: vec![SearchField::Message] };
        let filter = LogFilter::default();
        let matcher = Matcher::new(&filter, Some(&search));
        let count = block.head.granules.len();
        let granules = matcher
            .granules(&block.head, |position| Ok(&encoded.index[sluice_blocks::bloom::slice_range(position, count)]))
            .unwrap();
        // Its own granule, and at most two others its keys' false positives let in.
        assert!(granules.len() <= 3 && granules.contains(&(planted / GRANULE_ROWS)), "{needle}: {granules:?}");
        let hits = block.hits(&matcher).unwrap();
        assert_eq!(block.logs(&hits).unwrap()[0].entry.message, logs[planted].entry.message, "{needle}");
    }
}

#[test]
fn pages_across_blocks_are_newest_first() {
    let logs = random_logs(9, 3000);
    let blocks: Vec<_> = logs.chunks(1000).map(|chunk| encode(chunk).unwrap()).collect();
    let opened: Vec<Block<'_>> =
        blocks.iter().map(|block| Block::open(&block.head, &block.index, &block.body).unwrap()).collect();
    let filter = LogFilter { level: Some(Level::Warn), ..LogFilter::default() };
    let matcher = Matcher::new(&filter, None);
    let mut page = PageCollector::new(25);
    for (number, block) in opened.iter().enumerate() {
        if page.can_skip((block.head.summary.timestamps.1, block.head.summary.ids.1)) {
            continue;
        }
        for hit in block.hits(&matcher).unwrap() {
            page.offer(hit.timestamp, hit.id, (number, hit));
        }
    }
    let kept: Vec<LogId> = page.into_sorted().into_iter().map(|(_, id, _)| id).collect();
    let mut expected: Vec<&Log> = logs.iter().filter(|log| log.entry.level == Level::Warn).collect();
    expected.sort_by_key(|log| std::cmp::Reverse((log.entry.timestamp, log.id)));
    let expected: Vec<LogId> = expected.into_iter().take(25).map(|log| log.id).collect();
    assert_eq!(kept, expected);
}

#[test]
fn damaged_bytes_give_an_error_or_the_same_logs_never_a_panic() {
    let logs = random_logs(13, 40);
    let encoded = encode(&logs).unwrap();
    let expected = Block::open(&encoded.head, &encoded.index, &encoded.body).unwrap().all_logs().unwrap();
    let filter = LogFilter { source: Some("billing".into()), ..LogFilter::default() };
    let search = Search { query: Query::parse("timeout").unwrap(), fields: SearchField::ALL.to_vec() };
    for part in 0..3 {
        let original = [&encoded.head, &encoded.index, &encoded.body][part];
        for at in (0..original.len()).step_by(3) {
            for flip in [0x01_u8, 0x80, 0xff] {
                let mut damaged = original.clone();
                damaged[at] ^= flip;
                let (head, index, body) = match part {
                    0 => (&damaged, &encoded.index, &encoded.body),
                    1 => (&encoded.head, &damaged, &encoded.body),
                    _ => (&encoded.head, &encoded.index, &damaged),
                };
                let Ok(block) = Block::open(head, index, body) else { continue };
                if let Ok(read) = block.all_logs()
                    && part == 2
                {
                    assert_eq!(read, expected, "a damaged body must not read as other logs");
                }
                let _ = block.hits(&Matcher::new(&filter, Some(&search)));
            }
        }
    }
}

#[test]
fn a_log_with_every_field_round_trips() {
    let log = Log {
        id: LogId::generate(),
        entry: LogEntry {
            timestamp: 1_765_000_000_123,
            level: Level::Error,
            message: "ünïcödé ✓ message with \"quotes\" and \n newline".into(),
            source: "billing".into(),
            environment: Environment::Staging,
            dataset: "audit".into(),
            version: Some("1.2.3".into()),
            user_id: Some("user-42".into()),
            session_id: Some("sess-9".into()),
            request_id: Some("req-7".into()),
            data: Some(JsonObject::from_text(r#"{"a":[1,2,{"b":null}],"c":"d"}"#.into()).unwrap()),
            error_name: Some("TypeError".into()),
            error_stack: Some("at f (x.js:1:2)\nat g".into()),
            tags: Some(vec!["a;b".into(), "ç".into(), String::new()]),
            flow_id: Some("flow-1".into()),
            step_index: Some(1000),
        },
        country: Some("DE".into()),
        ip_address: Some("2001:db8::1".into()),
    };
    let mut bare = log.clone();
    bare.id = LogId::generate();
    bare.entry.tags = Some(Vec::new());
    bare.entry.step_index = Some(0);
    let encoded = encode(&[log.clone(), bare.clone()]).unwrap();
    let block = Block::open(&encoded.head, &encoded.index, &encoded.body).unwrap();
    assert_eq!(block.get(log.id).unwrap(), Some(log));
    assert_eq!(block.get(bare.id).unwrap(), Some(bare));
}
