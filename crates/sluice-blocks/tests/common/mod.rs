//! Logs of many shapes, drawn from a seed: words, numbers, hex, UUIDs, order numbers, e-mail
//! and IP addresses, paths, camelCase, non-ASCII text, JSON `data`, optional fields set or not,
//! timestamps out of order.

// Each test binary uses a part of this module.
#![allow(dead_code)]

use sluice_model::{Environment, JsonObject, Level, Log, LogEntry, LogId};

/// SplitMix64: a small, seeded, reproducible generator.
pub struct Draw(u64);

impl Draw {
    pub fn new(seed: u64) -> Self {
        Draw(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }

    pub fn hex(&mut self, digits: usize) -> String {
        (0..digits).map(|_| char::from_digit(self.below(16) as u32, 16).unwrap_or('0')).collect()
    }
}

const WORDS: [&str; 16] = [
    "timeout",
    "connection",
    "reset",
    "peer",
    "failed",
    "retry",
    "cache",
    "miss",
    "payment",
    "declined",
    "user",
    "session",
    "started",
    "worker",
    "shutdown",
    "queue",
];

/// A word of the logs' vocabulary.
pub fn word_of(seed: u64) -> &'static str {
    WORDS[(seed % WORDS.len() as u64) as usize]
}

fn message(draw: &mut Draw) -> String {
    let user = format!("{}{}", draw.pick(&["alice", "bob", "carol", "dave"]), draw.below(500));
    match draw.below(9) {
        0 => format!("User {user} logged in from 10.{}.{}.{}", draw.below(256), draw.below(256), draw.below(256)),
        1 => format!(
            "GET /api/v{}/users/{}/orders?page={} 200 {}ms",
            draw.below(3),
            draw.below(100_000),
            draw.below(50),
            draw.below(900)
        ),
        2 => format!("order ORD-{:07} paid by {user}@example.com", draw.below(10_000_000)),
        3 => format!(
            "request {}-{}-4{}-a{}-{} failed: connection reset by peer",
            draw.hex(8),
            draw.hex(4),
            draw.hex(3),
            draw.hex(3),
            draw.hex(12)
        ),
        4 => format!(
            "cache miss for key {} in {}",
            draw.hex(16),
            draw.pick(&["getUserById", "loadOrderLines", "FetchPriceList"])
        ),
        5 => format!(
            "job {}.{} took {} ms; retry={}",
            draw.pick(&WORDS),
            draw.pick(&WORDS),
            draw.below(10_000),
            draw.below(4)
        ),
        6 => format!("Zugriff verweigert für Benutzer {user} — Grüße ✓ {}", draw.below(1000)),
        7 => format!("PacketResponder {} for block blk_-{} terminating", draw.below(3), draw.below(1 << 62)),
        _ => (0..3 + draw.below(8)).map(|_| draw.pick(&WORDS)).collect::<Vec<_>>().join(" "),
    }
}

/// `count` logs drawn from `seed`.
pub fn random_logs(seed: u64, count: usize) -> Vec<Log> {
    let mut draw = Draw::new(seed);
    let base_ms: u64 = 1_765_000_000_000;
    (0..count)
        .map(|index| {
            let accepted = base_ms + index as u64 * 3;
            let id = (u128::from(accepted) << 80)
                | (0x7 << 76)
                | u128::from(draw.below(1 << 12)) << 64
                | (0b10 << 62)
                | u128::from(draw.next() >> 2);
            let level = Level::ALL[draw.below(4) as usize];
            let data = match draw.below(3) {
                0 => None,
                1 => Some(format!(
                    r#"{{"attempt":{},"path":"/var/lib/sluice/{}","traceId":"{}"}}"#,
                    draw.below(5),
                    draw.pick(&WORDS),
                    draw.hex(32)
                )),
                _ => Some(format!(r#"{{"note":"{} {}"}}"#, draw.pick(&WORDS), draw.pick(&WORDS))),
            };
            let error = level == Level::Error && draw.below(2) == 0;
            Log {
                id: LogId::from_slice(&id.to_be_bytes()).expect("16 bytes"),
                entry: LogEntry {
                    timestamp: (accepted as i64) - draw.below(60_000) as i64,
                    level,
                    message: message(&mut draw),
                    source: draw.pick(&["api", "billing", "worker", "edge-proxy", "auth"]).into(),
                    environment: Environment::ALL[draw.below(3) as usize],
                    dataset: draw.pick(&["default", "default", "audit"]).into(),
                    version: (draw.below(2) == 0).then(|| format!("1.{}.0", draw.below(4))),
                    user_id: (draw.below(2) == 0).then(|| format!("u{}", draw.below(300))),
                    session_id: (draw.below(3) == 0).then(|| draw.hex(12)),
                    request_id: (draw.below(2) == 0).then(|| draw.hex(32)),
                    data: data.map(|text| JsonObject::from_text(text).expect("an object")),
                    error_name: error.then(|| draw.pick(&["TypeError", "TimeoutError", "ECONNRESET"]).to_owned()),
                    error_stack: error.then(|| {
                        format!("at handler (/srv/app/{}.js:{}:{})", draw.pick(&WORDS), draw.below(400), draw.below(80))
                    }),
                    tags: (draw.below(4) == 0).then(|| vec![draw.pick(&WORDS).to_owned()]),
                    flow_id: (draw.below(5) == 0).then(|| format!("flow-{}", draw.below(20))),
                    step_index: (draw.below(5) == 0).then(|| draw.below(10) as u16),
                },
                country: (draw.below(3) == 0).then(|| "DE".to_owned()),
                ip_address: (draw.below(2) == 0).then(|| format!("192.0.2.{}", draw.below(256))),
            }
        })
        .collect()
}
