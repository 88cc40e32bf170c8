//! `sluice-loadgen tail`: the live tail benchmark's load (`cargo xtask bench tail`, issue 26).
//! Opens `--tails` live tails, then for `--seconds` sends 100-entry JSON batches over 32
//! connections, as fast as answered or, with `--rate LOGS_PER_SECOND`, at fixed times. Each
//! log names its batch; a tail's reader notes when each event arrives, and the delivery time
//! of a log is from its batch's `200` (the commit's answer) to its event on the client (0 when
//! the event came first).
//!
//! With `--server-pid`, also the CPU seconds the server and this process (the senders and the
//! tails' readers) used while sending. Prints a summary on stderr and, last on stdout: `tail
//! LOGS SECONDS LOGS_PER_S P50_MS P99_MS DELIVERED DROPPED SERVER_CPU_S LOADGEN_CPU_S`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use anyhow::bail;
use serde_json::json;

use crate::cli::TailArgs;

/// Connections that send batches.
const SENDERS: usize = 32;

/// Runs the benchmark as the command line says.
pub(crate) async fn run(args: TailArgs) -> anyhow::Result<()> {
    let TailArgs { url, key, seconds, tails, rate, server_pid } = args;
    let base = url.trim_end_matches('/').to_owned();
    let auth = format!("Bearer {key}");
    // Arrivals: (batch, instant) per delivered event, all tails together; and `dropped` counts.
    let arrivals: Rc<RefCell<Vec<(u64, Instant)>>> = Rc::default();
    let dropped: Rc<RefCell<u64>> = Rc::default();
    let mut readers = Vec::new();
    for _ in 0..tails {
        let client = awc::Client::builder().disable_timeout().finish();
        let mut response = client
            .get(format!("{base}/v1/logs/tail"))
            .insert_header(("Authorization", auth.as_str()))
            .send()
            .await
            .map_err(|error| anyhow::anyhow!("opening a tail: {error}"))?;
        if response.status() != 200 {
            bail!("a tail answered {}", response.status());
        }
        let (arrivals, dropped) = (arrivals.clone(), dropped.clone());
        readers.push(actix_rt::spawn(async move {
            const DROPPED: &[u8] = b"event: dropped\ndata: {\"count\":";
            let (event_end, log) = (memchr::memmem::Finder::new(b"\n\n"), memchr::memmem::Finder::new(b"tailbench "));
            let digits_at = |bytes: &[u8]| -> u64 {
                let digits = &bytes[..bytes.iter().take_while(|byte| byte.is_ascii_digit()).count()];
                std::str::from_utf8(digits).ok().and_then(|d| d.parse().ok()).unwrap_or(0)
            };
            let mut buffer: Vec<u8> = Vec::new();
            loop {
                let chunk = std::future::poll_fn(|context| {
                    futures_core::Stream::poll_next(std::pin::Pin::new(&mut response), context)
                })
                .await;
                let Some(Ok(chunk)) = chunk else { break };
                let at = Instant::now();
                buffer.extend_from_slice(&chunk);
                // Each whole event of the buffer read in place, then the buffer's read part
                // dropped once per chunk: the reader costs little beside the server it measures
                // (both share this machine's cores).
                let mut start = 0;
                while let Some(end) = event_end.find(&buffer[start..]) {
                    let event = &buffer[start..start + end];
                    start += end + 2;
                    if let Some(count) = event.strip_prefix(DROPPED) {
                        *dropped.borrow_mut() += digits_at(count);
                    } else if let Some(at_batch) = log.find(event) {
                        arrivals.borrow_mut().push((digits_at(&event[at_batch + 10..]), at));
                    }
                }
                buffer.drain(..start);
            }
        }));
    }
    let client = awc::Client::builder()
        .connector(awc::Connector::new().limit(SENDERS))
        .timeout(Duration::from_secs(60))
        .finish();
    let acks: Rc<RefCell<HashMap<u64, Instant>>> = Rc::default();
    let next = Rc::new(std::cell::Cell::new(0_u64));
    let failed = Rc::new(std::cell::Cell::new(0_u64));
    let interval = rate.map(|rate| Duration::from_secs_f64(SENDERS as f64 * 100.0 / rate.max(1.0)));
    // CPU seconds of the server and of this process (the tails' readers among its work).
    let cpu = || {
        let of = |pid: Option<u32>| pid.and_then(crate::cpu_seconds).unwrap_or(0.0);
        (of(server_pid), of(Some(std::process::id())))
    };
    let cpu_before = cpu();
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let senders: Vec<_> = (0..SENDERS)
        .map(|sender| {
            let (client, base, auth, acks, next, failed) =
                (client.clone(), base.clone(), auth.clone(), acks.clone(), next.clone(), failed.clone());
            let mut due = interval.map(|interval| started + interval.mul_f64(sender as f64 / SENDERS as f64));
            actix_rt::spawn(async move {
                while Instant::now() < until {
                    crate::when_due(&mut due, interval).await;
                    let batch = next.get();
                    next.set(batch + 1);
                    let entries: Vec<_> = (0..100)
                        .map(|n| json!({"level": "info", "message": format!("tailbench {batch} {n} order accepted"), "source": "bench", "environment": "production"}))
                        .collect();
                    let sent = client
                        .post(format!("{base}/v1/logs"))
                        .insert_header(("Authorization", auth.as_str()))
                        .send_json(&json!({ "logs": entries }))
                        .await;
                    match sent {
                        Ok(mut response) if response.status() == 200 => {
                            acks.borrow_mut().insert(batch, Instant::now());
                            let _ = response.body().await;
                        }
                        _ => failed.set(failed.get() + 1),
                    }
                }
            })
        })
        .collect();
    for sender in senders {
        let _ = sender.await;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let cpu_after = cpu();
    let (server_cpu, client_cpu) = (cpu_after.0 - cpu_before.0, cpu_after.1 - cpu_before.1);
    let logs = acks.borrow().len() as u64 * 100;
    if logs == 0 {
        bail!("no batch was stored ({} failed)", failed.get());
    }
    // What is still on its way gets a moment to arrive before the readers stop.
    actix_rt::time::sleep(Duration::from_secs(2)).await;
    for reader in readers {
        reader.abort();
    }
    let acks = acks.take();
    let mut delivery: Vec<u64> = arrivals
        .take()
        .into_iter()
        .filter_map(|(batch, at)| {
            acks.get(&batch).map(|ack| u64::try_from(at.saturating_duration_since(*ack).as_micros()).unwrap_or(0))
        })
        .collect();
    delivery.sort_unstable();
    let (p50, p99) = (crate::quantile_ms(&delivery, 0.50), crate::quantile_ms(&delivery, 0.99));
    let rate = logs as f64 / elapsed;
    eprintln!(
        "tail: {logs} logs in {elapsed:.1} s ({rate:.0} logs/s, {} batches failed) with {tails} tails; \
         delivery p50 {p50:.1} ms, p99 {p99:.1} ms over {} events, {} dropped; CPU: server {server_cpu:.1} s, \
         load generator {client_cpu:.1} s",
        failed.get(),
        delivery.len(),
        dropped.borrow()
    );
    println!(
        "tail {logs} {elapsed:.1} {rate:.0} {p50:.1} {p99:.1} {} {} {server_cpu:.1} {client_cpu:.1}",
        delivery.len(),
        dropped.borrow()
    );
    Ok(())
}
