//! Encodes the loghub samples of `../shared/corpus/loghub` into blocks and prints what a log
//! costs: bytes in the head, index and body, and encoding time. Two kinds of data: the lines
//! as they are, and with real entropy (digit runs randomised, a request id and a user id each).
//!
//! `cargo run --release -p sluice-blocks --example measure [CORPUS_DIR]`

use std::time::Instant;

use sluice_blocks::{MAX_BLOCK_ROWS, encode};
use sluice_model::{Environment, Level, Log, LogEntry, LogId};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "../shared/corpus/loghub".into());
    let mut lines = Vec::new();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|extension| extension == "log") {
            lines.extend(std::fs::read_to_string(&path)?.lines().filter(|line| !line.is_empty()).map(str::to_owned));
        }
    }
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for entropy in [false, true] {
        let count = MAX_BLOCK_ROWS * 4;
        let mut base = 0_u128;
        let logs: Vec<Log> = (0..count)
            .map(|index| {
                let line = &lines[(next() as usize) % lines.len()];
                let message = if entropy {
                    line.chars()
                        .map(|c| if c.is_ascii_digit() { char::from(b'0' + (next() % 10) as u8) } else { c })
                        .collect()
                } else {
                    line.clone()
                };
                // As the server makes them (`LogId::batch`): a random id a request of 100 logs,
                // the request's next ones counting up from it.
                if index % 100 == 0 {
                    base = (u128::from(1_765_000_000_000_u64 + index as u64 / 50) << 80)
                        | (0x7 << 76)
                        | (u128::from(next() & 0xfff) << 64)
                        | (0b10 << 62)
                        | u128::from(next() >> 3);
                }
                let id = base + (index % 100) as u128;
                Log {
                    id: LogId::from_slice(&id.to_be_bytes()).expect("16 bytes"),
                    entry: LogEntry {
                        timestamp: 1_765_000_000_000 + index as i64 / 50,
                        level: Level::ALL[(next() % 4) as usize],
                        message,
                        source: ["api", "billing", "worker"][(next() % 3) as usize].into(),
                        environment: Environment::Production,
                        dataset: "default".into(),
                        version: None,
                        user_id: entropy.then(|| format!("user-{}", next() % 100_000)),
                        session_id: None,
                        request_id: entropy.then(|| format!("{:032x}", u128::from(next()) << 64 | u128::from(next()))),
                        data: None,
                        error_name: None,
                        error_stack: None,
                        tags: None,
                        flow_id: None,
                        step_index: None,
                    },
                    country: None,
                    ip_address: None,
                }
            })
            .collect();
        let json: usize = logs.iter().map(|log| serde_json::to_string(log).map_or(0, |text| text.len())).sum();
        let started = Instant::now();
        let (mut head, mut index, mut body) = (0, 0, 0);
        let mut blocks = Vec::new();
        for chunk in logs.chunks(MAX_BLOCK_ROWS) {
            let block = encode(chunk)?;
            (head, index, body) = (head + block.head.len(), index + block.index.len(), body + block.body.len());
            blocks.push(block);
        }
        let seconds = started.elapsed().as_secs_f64();
        let mut columns = [0_usize; sluice_blocks::block::COLUMNS];
        for block in &blocks {
            for granule in sluice_blocks::Head::decode(&block.head)?.granules {
                for (column, range) in granule.columns.iter().enumerate() {
                    columns[column] += range.len();
                }
            }
        }
        let columns: Vec<String> = columns.iter().map(|bytes| format!("{:.1}", *bytes as f64 / count as f64)).collect();
        println!(
            "B/log by column (id, timestamp, level, source, environment, dataset, version, userId, sessionId, requestId, message, data, errorName, errorStack, tags, flowId, stepIndex, country, ipAddress): {}",
            columns.join(" ")
        );
        let per = |bytes: usize| bytes as f64 / count as f64;
        println!(
            "{}: {count} logs, JSON {:.0} B/log; head {:.1} + index {:.1} + body {:.1} = {:.1} B/log; encoded {:.0} logs/s on one core",
            if entropy { "with entropy" } else { "as they are" },
            per(json),
            per(head),
            per(index),
            per(body),
            per(head + index + body),
            count as f64 / seconds
        );
    }
    Ok(())
}
