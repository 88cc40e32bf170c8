//! `sluice-loadgen reads`: the soak benchmark's readers (`cargo xtask bench soak`). For
//! `--seconds`, `--connections` loops each send the next of a fixed round of reads a person's
//! dashboard makes (the newest page, a level filter, two searches, the day's summary): with
//! `--rate READS_PER_SECOND` (all loops together) at fixed times, latency counted from when a
//! read was due; without it as soon as the last is answered. The latencies of those answered
//! 200 are kept.
//!
//! Prints a summary on stderr (also each read's p50 and p99, to tell which one moved) and, last
//! on stdout, one line: `reads COUNT P50_MS P99_MS FAILED`.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::cli::ReadsArgs;

/// The round of reads, in turn.
const READS: [&str; 5] = [
    "/v1/logs?limit=100",
    "/v1/logs?level=error&limit=50",
    "/v1/logs/search?q=connection&limit=50",
    "/v1/logs/search?q=%22received%20block%22%20-exception&limit=20",
    "/v1/stats/summary",
];

/// Runs the readers as the command line says.
pub(crate) async fn run(args: ReadsArgs) -> anyhow::Result<()> {
    let ReadsArgs { url, key, seconds, connections, rate } = args;
    let base = url.trim_end_matches('/').to_owned();
    let auth = format!("Bearer {key}");
    let client = awc::Client::builder().timeout(Duration::from_secs(30)).finish();
    let until = Instant::now() + Duration::from_secs(seconds);
    let latencies: Rc<RefCell<Vec<(usize, u64)>>> = Rc::default();
    let failed: Rc<RefCell<u64>> = Rc::default();
    // Paced: each loop sends one read every `interval`, the loops staggered across it.
    let interval = rate.map(|rate| Duration::from_secs_f64(connections as f64 / rate.max(0.001)));
    let started = Instant::now();
    let workers: Vec<_> = (0..connections)
        .map(|worker| {
            let (client, base, auth) = (client.clone(), base.clone(), auth.clone());
            let (latencies, failed) = (latencies.clone(), failed.clone());
            let mut due = interval.map(|interval| started + interval.mul_f64(worker as f64 / connections as f64));
            actix_rt::spawn(async move {
                let mut turn = worker;
                while Instant::now() < until {
                    let read = turn % READS.len();
                    let path = READS[read];
                    turn += 1;
                    let sent = crate::when_due(&mut due, interval).await;
                    let answer = client
                        .get(format!("{base}{path}"))
                        .insert_header(("Authorization", auth.as_str()))
                        .send()
                        .await;
                    let ok = match answer {
                        Ok(mut response) => response.body().limit(16 << 20).await.is_ok() && response.status() == 200,
                        Err(_) => false,
                    };
                    if ok {
                        let micros = u64::try_from(sent.elapsed().as_micros()).unwrap_or(u64::MAX);
                        latencies.borrow_mut().push((read, micros));
                    } else {
                        *failed.borrow_mut() += 1;
                    }
                }
            })
        })
        .collect();
    for worker in workers {
        let _ = worker.await;
    }
    let answered = latencies.take();
    for (read, path) in READS.iter().enumerate() {
        let mut these: Vec<u64> =
            answered.iter().filter(|(which, _)| *which == read).map(|(_, micros)| *micros).collect();
        these.sort_unstable();
        let (p50, p99) = (crate::quantile_ms(&these, 0.50), crate::quantile_ms(&these, 0.99));
        eprintln!("reads: {path}: {} answered, p50 {p50:.1} ms, p99 {p99:.1} ms", these.len());
    }
    let mut latencies: Vec<u64> = answered.into_iter().map(|(_, micros)| micros).collect();
    latencies.sort_unstable();
    let (p50, p99) = (crate::quantile_ms(&latencies, 0.50), crate::quantile_ms(&latencies, 0.99));
    let failed = failed.take();
    eprintln!("reads: {} answered, p50 {p50:.1} ms, p99 {p99:.1} ms, {failed} failed", latencies.len());
    println!("reads {} {p50:.1} {p99:.1} {failed}", latencies.len());
    Ok(())
}
