//! Sending a data set once, as fast as it is answered: `--connections` keep-alive
//! connections, each sending its next batch when the last is answered, a 503 with
//! `Retry-After` sent again after the wait it names (as shippers do), anything else counted as
//! lost. The search, flow and peers benchmarks' ingest.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use anyhow::bail;

/// Where batches go: a URL, its headers, and the status that means stored.
pub(crate) struct Target {
    /// The full URL of the ingest endpoint.
    pub(crate) url: String,
    /// Headers of every request (authorization, content type).
    pub(crate) headers: Vec<(String, String)>,
    /// The status of a stored batch (200 on sluice and VictoriaLogs alike, 204 on Loki's push).
    pub(crate) stored: u16,
}

/// What sending took.
pub(crate) struct Sent {
    /// Logs sent.
    pub(crate) logs: u64,
    /// From the first request to the last answer.
    pub(crate) seconds: f64,
    /// Batches answered 503 and sent again.
    pub(crate) retried: u64,
    /// Each stored batch's latency in µs, sorted (the last try's, for one sent again).
    pub(crate) latencies: Vec<u64>,
}

/// Sends batches `0, batch, 2 * batch ...` below `logs`, each `body(first)`, to `target`; fails
/// when any batch was not stored.
pub(crate) async fn send_all(
    logs: u64,
    batch: u64,
    connections: usize,
    target: Target,
    body: impl Fn(u64) -> Vec<u8> + 'static,
) -> anyhow::Result<Sent> {
    let client = awc::Client::builder()
        .connector(awc::Connector::new().limit(connections))
        .timeout(Duration::from_secs(120))
        .finish();
    let shared = Rc::new((client, target, body));
    let next = Rc::new(Cell::new(0_u64));
    let failures = Rc::new(Cell::new(0_u64));
    let retried = Rc::new(Cell::new(0_u64));
    let latencies = Rc::new(RefCell::new(Vec::new()));
    let start = Instant::now();
    let workers: Vec<_> = (0..connections)
        .map(|_| {
            let (shared, next, failures, retried, latencies) =
                (shared.clone(), next.clone(), failures.clone(), retried.clone(), latencies.clone());
            actix_rt::spawn(async move {
                let (client, target, body) = &*shared;
                loop {
                    let first = next.get();
                    if first >= logs {
                        break;
                    }
                    next.set(first + batch);
                    let body = body(first);
                    let mut ok = false;
                    for _ in 0..20 {
                        let mut request = client.post(target.url.as_str());
                        for (name, value) in &target.headers {
                            request = request.insert_header((name.as_str(), value.as_str()));
                        }
                        let started = Instant::now();
                        let Ok(mut response) = request.send_body(body.clone()).await else { break };
                        let _ = response.body().limit(1 << 20).await;
                        let status = response.status().as_u16();
                        let wait = response
                            .headers()
                            .get("Retry-After")
                            .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
                        if status == target.stored {
                            latencies
                                .borrow_mut()
                                .push(u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX));
                            ok = true;
                            break;
                        }
                        match (status, wait) {
                            (503, Some(seconds)) => {
                                retried.set(retried.get() + 1);
                                actix_rt::time::sleep(Duration::from_secs(seconds)).await;
                            }
                            _ => break,
                        }
                    }
                    if !ok {
                        failures.set(failures.get() + 1);
                    }
                }
            })
        })
        .collect();
    for worker in workers {
        let _ = worker.await;
    }
    let seconds = start.elapsed().as_secs_f64();
    if failures.get() > 0 {
        bail!("{} batches were not stored: the data set is incomplete", failures.get());
    }
    let mut latencies = latencies.take();
    latencies.sort_unstable();
    Ok(Sent { logs, seconds, retried: retried.get(), latencies })
}
