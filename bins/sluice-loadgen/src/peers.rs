//! The peers benchmark's workload (`cargo xtask bench peers`): the same logs sent to sluice
//! (`POST /v1/logs`, JSON) and to VictoriaLogs (`/insert/jsonline`), then the same searches,
//! each with a value drawn at random for the run, timed on both (sluice's query language,
//! LogsQL with `| sort by (_time desc) limit 50`).
//!
//! Log `i` is a loghub line followed by `ref=<value>`, a value of one of [`SHAPES`] (group
//! `i % groups`, a hundredth of the logs: each value is in 100 logs spread over time, 0.001 %
//! of 10M; a group's shape is `group % SHAPES.len()`), a phrase of four common words (in 1,000
//! logs each, every word in a quarter of the logs), `kappaNNN` (0.1 % of the logs) and
//! `lambdaN` (10 %). Two kinds of data: `plain`, the loghub lines as they are; `entropy`, their
//! digit runs randomised, with a unique request id (32 hex digits) and one of 100,000 user
//! ids each. Everything is a function of `i`, so the queries know what exists without reading
//! anything back.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::json;

use crate::cli::{DataArgs, Kind, PeersArgs, Target};
use crate::search::print_query_row;
use crate::workload::mix;
use crate::{ENTRIES, Line, level_of, quantile_ms};

/// The shapes of the rare values, each a query kind of its own.
pub(crate) const SHAPES: [&str; 10] =
    ["word", "identifier", "number", "hex", "UUID", "dotted name", "path", "e-mail", "IP address", "camelCase"];

/// The kinds of query after the shapes', in the order they are run and printed.
const OTHER_KINDS: [&str; 7] = [
    "substring of a rare value",
    "rare phrase of common words",
    "term in 0.1 %",
    "common word (10 %), newest page",
    "absent word",
    "two rare values OR'ed",
    "rare value and an exclusion",
];

/// Words the values and phrases are made of.
const WORDS: [&str; 16] = [
    "alpha", "berry", "cedar", "delta", "ember", "fjord", "grove", "harbor", "iris", "juniper", "kelp", "lotus",
    "maple", "nectar", "opal", "pine",
];

/// Syllables of the rare words.
const SYLLABLES: [&str; 32] = [
    "ka", "ro", "mi", "zu", "te", "lan", "vor", "qui", "bex", "dra", "sol", "fen", "gri", "hob", "jul", "kra", "lym",
    "mox", "nid", "osk", "pry", "quo", "rix", "sav", "tuv", "ulm", "vex", "wyn", "xal", "yor", "zed", "bru",
];

/// Common words of the rare phrases.
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

fn word(bits: u64) -> &'static str {
    WORDS[(bits % 16) as usize]
}

/// What the workload holds, as functions of a log's index or a group.
pub(crate) struct Peers {
    lines: Vec<Line>,
    logs: u64,
    groups: u64,
    newest_ms: i64,
    entropy: bool,
}

impl Peers {
    fn new(lines: Vec<Line>, logs: u64, entropy: bool) -> Peers {
        let newest_ms = crate::wall_clock().unix_timestamp() * 1_000;
        Peers { lines, logs, groups: (logs / 100).max(SHAPES.len() as u64), newest_ms, entropy }
    }

    /// The rare value of `group`, of shape `group % SHAPES.len()`.
    fn value(&self, group: u64) -> String {
        let h = mix(group ^ 0x00C0_FFEE);
        let n = group / SHAPES.len() as u64;
        match group % SHAPES.len() as u64 {
            0 => {
                (0..4).map(|at| SYLLABLES[((h >> (5 * at)) % 32) as usize]).collect::<String>()
                    + SYLLABLES[(n % 32) as usize]
            }
            1 => format!(
                "{}{}{:06}",
                ["acct", "usr", "sku", "tx", "job"][(h % 5) as usize],
                SYLLABLES[(n % 32) as usize],
                n
            ),
            2 => format!("{}", 1_000_000_000 + (n.wrapping_mul(7_654_321) + h % 1_000) % 9_000_000_000),
            3 => format!("{:08x}{:016x}", n, h),
            4 => {
                let low = mix(h);
                format!(
                    "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
                    h >> 32,
                    (h >> 16) & 0xFFFF,
                    n & 0xFFF,
                    0x8000 | ((low >> 48) & 0x3FFF),
                    (low & 0xFFFF_0000_0000) | (n & 0xFFFF_FFFF)
                )
            }
            5 => format!("io.{}.{}.Worker{}", word(h), word(h >> 4), n),
            6 => format!("/srv/{}/{}/{:06}.log", word(h), word(h >> 4), n),
            7 => format!("{}.{}{}@{}.example", word(h), word(h >> 4), n, word(h >> 8)),
            8 => format!("10.{}.{}.{}", (n >> 16) & 255, (n >> 8) & 255, n & 255),
            _ => {
                let verb = ["load", "save", "find", "sync", "drop"][(h % 5) as usize];
                let noun = |bits: u64| {
                    let word = word(bits);
                    word[..1].to_ascii_uppercase() + &word[1..]
                };
                format!("{verb}{}{}{n}", noun(h >> 4), noun(h >> 8))
            }
        }
    }

    /// The phrase of four common words of phrase group `group` (distinct for 65,536 groups).
    fn phrase(group: u64) -> String {
        let code = (group.wrapping_mul(40_503).wrapping_add(12_345)) % 65_536;
        (0..4).map(|at| COMMON[((code >> (4 * at)) % 16) as usize]).collect::<Vec<_>>().join(" ")
    }

    /// Log `i`: its message and, for the entropy kind, its request and user ids.
    fn entry(&self, i: u64) -> serde_json::Value {
        let line = &self.lines[usize::try_from(i.wrapping_mul(7_919) % self.lines.len() as u64).unwrap_or(0)];
        let text = if self.entropy {
            let mut digits = mix(i ^ 0xD161_7500);
            line.text
                .chars()
                .map(|c| {
                    if c.is_ascii_digit() {
                        digits = mix(digits);
                        char::from(b'0' + (digits % 10) as u8)
                    } else {
                        c
                    }
                })
                .collect()
        } else {
            line.text.clone()
        };
        let message = format!(
            "{text} ref={} {} kappa{:03} lambda{}",
            self.value(i % self.groups),
            Peers::phrase(i % (self.logs / 1_000).max(1)),
            i % 1_000,
            i % 10
        );
        let mut entry = json!({
            "timestamp": self.newest_ms - i64::try_from(self.logs - i).unwrap_or(0),
            "level": level_of(&line.text),
            "message": message,
            "source": line.system,
            "environment": "production",
        });
        if self.entropy {
            entry["requestId"] = json!(format!("{:016x}{:016x}", mix(i), mix(!i)));
            entry["userId"] = json!(format!("user-{}", mix(i ^ 0x05E2) % 100_000));
        }
        entry
    }

    /// The queries of a run, `repeat` + 1 of each kind (the first a warm-up), drawn from `seed`:
    /// each kind's name, and each query in sluice's language and in LogsQL.
    fn queries(&self, seed: u64, repeat: u64) -> Vec<(String, Vec<(String, String)>)> {
        let mut draw = mix(seed);
        let mut next = move || {
            draw = mix(draw);
            draw
        };
        let shaped = SHAPES.len() as u64;
        let rare = |shape: u64, bits: u64| self.value(shape + shaped * (bits % (self.groups / shaped).max(1)));
        let mut kinds = Vec::new();
        for (shape, name) in SHAPES.iter().enumerate() {
            let queries = (0..=repeat)
                .map(|_| rare(shape as u64, next()))
                .map(|value| (quoted(&value), quoted(&value)))
                .collect();
            kinds.push((format!("rare {name}"), queries));
        }
        for (kind, name) in OTHER_KINDS.iter().enumerate() {
            let queries = (0..=repeat)
                .map(|_| {
                    let (a, b) = (rare(next() % shaped, next()), rare(next() % shaped, next()));
                    match kind {
                        0 => {
                            let characters: Vec<char> = a.chars().collect();
                            let length = (6 + next() % 7).min(characters.len() as u64) as usize;
                            let start = (next() % (characters.len() - length + 1) as u64) as usize;
                            let piece: String = characters[start..start + length].iter().collect();
                            (quoted(&piece), format!("~{}", quoted(&regex_escaped(&piece))))
                        }
                        1 => {
                            let phrase = Peers::phrase(next() % (self.logs / 1_000).max(1));
                            (quoted(&phrase), quoted(&phrase))
                        }
                        2 => {
                            let term = format!("kappa{:03}", next() % 1_000);
                            (term.clone(), term)
                        }
                        3 => {
                            let term = format!("lambda{}", next() % 10);
                            (term.clone(), term)
                        }
                        4 => {
                            let term = format!("nowhere{:06}", next() % 1_000_000);
                            (term.clone(), term)
                        }
                        5 => (format!("{} OR {}", quoted(&a), quoted(&b)), format!("{} OR {}", quoted(&a), quoted(&b))),
                        _ => {
                            let term = format!("lambda{}", next() % 10);
                            (format!("{} -{term}", quoted(&a)), format!("{} !{term}", quoted(&a)))
                        }
                    }
                })
                .collect();
            kinds.push(((*name).to_owned(), queries));
        }
        kinds
    }
}

/// A quoted phrase of either language (backslashes and quotes escaped).
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// `text` as a regular expression matching it literally.
fn regex_escaped(text: &str) -> String {
    text.chars().fold(String::new(), |mut out, c| {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
        out
    })
}

/// `sluice-loadgen peers-ingest|peers-queries ...`: parses the mode's options and runs it.
pub(crate) async fn run(queries_only: bool, args: PeersArgs) -> anyhow::Result<()> {
    let PeersArgs { url, key, data: DataArgs { logs, corpus, connections }, repeat, seed, kind, target } = args;
    let (entropy, victoria) = (kind == Kind::Entropy, target == Target::Victorialogs);
    if key.is_empty() && !victoria {
        bail!("sluice needs --key");
    }
    let peers = Peers::new(crate::corpus_lines(&corpus)?, logs, entropy);
    let url = url.trim_end_matches('/').to_owned();
    if queries_only {
        queries(&peers, &url, &key, victoria, seed, repeat).await
    } else {
        ingest(peers, &url, &key, victoria, connections).await
    }
}

/// Sends every log once; prints `ingest | logs | seconds | batches sent again | logs/s | p99 ms`.
async fn ingest(peers: Peers, url: &str, key: &str, victoria: bool, connections: usize) -> anyhow::Result<()> {
    let target = if victoria {
        crate::send::Target {
            url: format!(
                "{url}/insert/jsonline?_msg_field=message&_time_field=timestamp&_stream_fields=source,environment"
            ),
            headers: vec![("Content-Type".into(), "application/stream+json".into())],
            stored: 200,
        }
    } else {
        crate::send::Target {
            url: format!("{url}/v1/logs"),
            headers: vec![
                ("Authorization".into(), format!("Bearer {key}")),
                ("Content-Type".into(), "application/json".into()),
            ],
            stored: 200,
        }
    };
    let logs = peers.logs;
    let body = move |first: u64| {
        let entries = (first..(first + ENTRIES as u64).min(peers.logs)).map(|i| peers.entry(i));
        if victoria {
            entries.map(|entry| entry.to_string() + "\n").collect::<String>().into_bytes()
        } else {
            json!({ "logs": entries.collect::<Vec<_>>() }).to_string().into_bytes()
        }
    };
    let sent = crate::send::send_all(logs, ENTRIES as u64, connections, target, body).await?;
    let p99 = quantile_ms(&sent.latencies, 0.99);
    eprintln!("peers-ingest: {logs} logs in {:.1} s, p99 {p99:.1} ms", sent.seconds);
    println!("ingest | {logs} | {:.1} | {} | {:.0} | {p99:.1}", sent.seconds, sent.retried, logs as f64 / sent.seconds);
    Ok(())
}

/// Runs the run's queries one at a time; prints `query | kind | p50 ms | p95 ms | max ms | 5xx
/// | median hits` for each kind.
async fn queries(peers: &Peers, url: &str, key: &str, victoria: bool, seed: u64, repeat: u64) -> anyhow::Result<()> {
    let client = awc::Client::builder().timeout(Duration::from_secs(60)).finish();
    for (name, queries) in peers.queries(seed, repeat) {
        let (mut latencies, mut hits, mut errors) = (Vec::new(), Vec::new(), 0);
        for (n, (sluice, logsql)) in queries.iter().enumerate() {
            let request = if victoria {
                let query = format!("{logsql} | sort by (_time desc) limit 50");
                client.get(format!("{url}/select/logsql/query")).query(&[("query", query.as_str())])
            } else {
                client
                    .get(format!("{url}/v1/logs/search"))
                    .insert_header(("Authorization", format!("Bearer {key}")))
                    .query(&[("q", sluice.as_str()), ("limit", "50")])
            }
            .context("query string")?;
            let started = Instant::now();
            let mut response = request.send().await.map_err(|error| anyhow::anyhow!("search {sluice:?}: {error}"))?;
            let body = response.body().limit(64 << 20).await.context("search answer")?;
            let elapsed = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            if n == 0 {
                continue;
            }
            latencies.push(elapsed);
            if response.status().is_server_error() {
                errors += 1;
            } else if !response.status().is_success() {
                bail!("search {sluice:?} answered {}: {}", response.status(), String::from_utf8_lossy(&body));
            } else if victoria {
                hits.push(body.split(|byte| *byte == b'\n').filter(|line| !line.is_empty()).count());
            } else {
                let value: serde_json::Value = serde_json::from_slice(&body).context("search answer is JSON")?;
                hits.push(value["logs"].as_array().map_or(0, Vec::len));
            }
        }
        print_query_row(&name, latencies, hits, errors);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peers(logs: u64, entropy: bool) -> Peers {
        let lines = vec![Line { system: "hdfs".into(), text: "Received block blk_3587 of size 67108864".into() }];
        Peers::new(lines, logs, entropy)
    }

    #[test]
    fn every_shape_is_distinct_per_group() {
        let work = peers(1_000_000, false);
        let values: std::collections::HashSet<String> = (0..work.groups).map(|group| work.value(group)).collect();
        assert!(values.len() as u64 > work.groups * 99 / 100, "{} of {}", values.len(), work.groups);
        assert!(work.value(4).len() == 36 && work.value(8).starts_with("10."), "{} {}", work.value(4), work.value(8));
    }

    #[test]
    fn every_query_finds_what_it_should_in_the_data() {
        let work = peers(20_000, true);
        let messages: Vec<String> =
            (0..work.logs).map(|i| work.entry(i)["message"].as_str().unwrap_or_default().to_lowercase()).collect();
        for (name, queries) in work.queries(7, 5) {
            for (sluice, _) in queries {
                let needle = sluice.split(" -").next().unwrap_or_default().split(" OR ").next().unwrap_or_default();
                let needle = needle.trim_matches('"').to_lowercase();
                let found = messages.iter().filter(|message| message.contains(&needle)).count();
                if name == "absent word" {
                    assert_eq!(found, 0, "{sluice}");
                } else {
                    assert!(found > 0, "{name}: {sluice} is in some log");
                }
            }
        }
    }

    #[test]
    fn a_substring_is_escaped_for_logsql() {
        assert_eq!(regex_escaped("a.b/c(d)"), "a\\.b/c\\(d\\)");
        assert_eq!(quoted(&regex_escaped("a.b")), "\"a\\\\.b\"");
    }
}
