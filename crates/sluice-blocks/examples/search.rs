//! Searches blocks held in memory, to time what this crate costs a search apart from any
//! storage: `--logs` logs (1M by default) of loghub lines, each carrying a rare value of one of
//! several shapes (in 100 logs each, spread over time), a phrase of four common words (in 1,000),
//! `kappaNNN` (0.1 %) and `lambdaN` (10 %), encoded into blocks; then, for each kind of
//! needle, 30 searches for the newest 50 matches, newest blocks first, with the granules the
//! index allows, their rows and the page gathered by this crate. Prints p50 and p95 a kind,
//! the granules decoded a search, and the bytes a log.
//!
//! `cargo run --release -p sluice-blocks --example search [LOGS] [CORPUS_DIR]`

use std::time::Instant;

use sluice_blocks::{Block, LogFilter, MAX_BLOCK_ROWS, Matcher, PageCollector, Search, encode};
use sluice_model::{Environment, Level, Log, LogEntry, LogId};
use sluice_query::{Query, SearchField};

fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

const WORDS: [&str; 8] = ["alpha", "berry", "cedar", "delta", "ember", "fjord", "grove", "harbor"];
const COMMON: [&str; 16] = [
    "request",
    "session",
    "worker",
    "started",
    "finished",
    "connection",
    "closed",
    "opened",
    "queue",
    "message",
    "client",
    "server",
    "update",
    "received",
    "sent",
    "block",
];

/// The rare value of a group, of one of six shapes.
fn value(group: u64) -> String {
    let h = mix(group);
    let n = group / 6;
    match group % 6 {
        0 => format!("acct{}{:06}", WORDS[(h % 8) as usize], n),
        1 => format!("{}", 1_000_000_000 + (n * 7_654_321 + h % 1000) % 9_000_000_000),
        2 => format!("{:08x}{:016x}", n, h),
        3 => format!("{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}", h >> 32, (h >> 16) & 0xffff, n & 0xfff, h & 0xfff, n),
        4 => format!("/srv/{}/{}/{:06}.log", WORDS[(h % 8) as usize], WORDS[((h >> 3) % 8) as usize], n),
        _ => format!(
            "{}.{}{}@{}.example",
            WORDS[(h % 8) as usize],
            WORDS[((h >> 3) % 8) as usize],
            n,
            WORDS[((h >> 6) % 8) as usize]
        ),
    }
}

fn phrase(group: u64) -> String {
    let code = (group.wrapping_mul(40_503).wrapping_add(12_345)) % 65_536;
    (0..4).map(|at| COMMON[((code >> (4 * at)) % 16) as usize]).collect::<Vec<_>>().join(" ")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let logs_wanted: u64 = std::env::args().nth(1).map_or(Ok(1_000_000), |text| text.parse())?;
    let dir = std::env::args().nth(2).unwrap_or_else(|| "../shared/corpus/loghub".into());
    let mut lines = Vec::new();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|extension| extension == "log") {
            lines.extend(std::fs::read_to_string(&path)?.lines().filter(|line| !line.is_empty()).map(str::to_owned));
        }
    }
    let groups = logs_wanted / 100;
    let started = Instant::now();
    let mut blocks = Vec::new();
    let mut batch = Vec::with_capacity(MAX_BLOCK_ROWS);
    for i in 0..logs_wanted {
        let line = &lines[(i.wrapping_mul(7_919) % lines.len() as u64) as usize];
        let message = format!(
            "{line} ref={} {} kappa{:03} lambda{}",
            value(i % groups),
            phrase(i % (logs_wanted / 1000)),
            i % 1000,
            i % 10
        );
        let id = (u128::from(1_765_000_000_000 + i / 20) << 80) | (0x7 << 76) | u128::from(mix(i) >> 2);
        batch.push(Log {
            id: LogId::from_slice(&id.to_be_bytes()).ok_or("an id")?,
            entry: LogEntry {
                timestamp: 1_765_000_000_000 + i as i64 / 20,
                level: Level::ALL[(mix(i ^ 1) % 4) as usize],
                message,
                source: "app".into(),
                environment: Environment::Production,
                dataset: "default".into(),
                version: None,
                user_id: None,
                session_id: None,
                request_id: None,
                data: None,
                error_name: None,
                error_stack: None,
                tags: None,
                flow_id: None,
                step_index: None,
            },
            country: None,
            ip_address: None,
        });
        if batch.len() == MAX_BLOCK_ROWS {
            blocks.push(encode(&batch)?);
            batch.clear();
        }
    }
    if !batch.is_empty() {
        blocks.push(encode(&batch)?);
    }
    let bytes: usize = blocks.iter().map(|block| block.head.len() + block.index.len() + block.body.len()).sum();
    println!(
        "{logs_wanted} logs in {} blocks, {:.1} B a log, encoded in {:.1} s",
        blocks.len(),
        bytes as f64 / logs_wanted as f64,
        started.elapsed().as_secs_f64()
    );
    let opened: Vec<Block<'_>> =
        blocks.iter().map(|block| Block::open(&block.head, &block.index, &block.body)).collect::<Result<_, _>>()?;
    let kinds: [(&str, &dyn Fn(u64) -> String); 10] = [
        ("rare identifier", &|n| format!("\"{}\"", value(6 * (mix(n) % (groups / 6))))),
        ("rare number", &|n| format!("\"{}\"", value(6 * (mix(n) % (groups / 6)) + 1))),
        ("rare hex", &|n| format!("\"{}\"", value(6 * (mix(n) % (groups / 6)) + 2))),
        ("rare UUID", &|n| format!("\"{}\"", value(6 * (mix(n) % (groups / 6)) + 3))),
        ("rare path", &|n| format!("\"{}\"", value(6 * (mix(n) % (groups / 6)) + 4))),
        ("substring of a rare value", &|n| {
            let whole = value(mix(n) % groups);
            let start = (mix(n ^ 9) % (whole.len() as u64 - 8)) as usize;
            format!("\"{}\"", &whole[start..start + 8])
        }),
        ("rare phrase of common words", &|n| format!("\"{}\"", phrase(mix(n) % (logs_wanted / 1000)))),
        ("term in 0.1 %", &|n| format!("kappa{:03}", mix(n) % 1000)),
        ("common word (10 %)", &|n| format!("lambda{}", n % 10)),
        ("absent word", &|n| format!("nowhere{:06}", n)),
    ];
    for (name, query) in kinds {
        let mut times = Vec::new();
        let mut granules_read = Vec::new();
        for n in 0..30 {
            let search = Search { query: Query::parse(&query(n))?, fields: vec![SearchField::Message] };
            let filter = LogFilter::default();
            let matcher = Matcher::new(&filter, Some(&search));
            let started = Instant::now();
            let mut page = PageCollector::new(51);
            let mut decoded = 0;
            let mut granules = std::collections::HashMap::new();
            for (number, block) in opened.iter().enumerate().rev() {
                let summary = &block.head.summary;
                if page.can_skip((summary.timestamps.1, summary.ids.1)) {
                    continue;
                }
                let count = block.head.granules.len();
                let index = &blocks[number].index;
                let candidates = matcher.granules(&block.head, |position| {
                    index
                        .get(sluice_blocks::bloom::slice_range(position, count))
                        .ok_or(sluice_blocks::DecodeError::Truncated)
                })?;
                for granule in candidates.into_iter().rev() {
                    if page.can_skip((block.head.granules[granule].timestamps.1, block.head.granules[granule].ids.1)) {
                        continue;
                    }
                    decoded += 1;
                    let read = block.granule(granule)?;
                    for hit in matcher.rows(&read, granule)? {
                        page.offer(hit.timestamp, hit.id, (number, hit));
                    }
                    granules.insert((number, granule), read);
                }
            }
            let kept = page.into_sorted();
            let mut logs = 0;
            for (_, _, (number, hit)) in kept.iter().take(50) {
                logs += granules.get(&(*number, hit.granule)).ok_or("a kept granule")?.logs(&[hit.row])?.len();
            }
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            granules_read.push(decoded);
            assert!(name == "absent word" || logs > 0, "{name}: {} found nothing", query(n));
        }
        times.sort_by(f64::total_cmp);
        granules_read.sort_unstable();
        println!(
            "{name}: p50 {:.2} ms, p95 {:.2} ms, granules decoded (median) {}",
            times[15], times[28], granules_read[15]
        );
    }
    Ok(())
}
