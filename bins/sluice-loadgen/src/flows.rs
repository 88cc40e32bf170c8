//! The flow benchmark's workload (`cargo xtask bench flows`, issue 26): the search
//! benchmark's logs, each in a flow of ten steps (`flow-N`), but the newest 1,000, which make
//! one flow of 1,000 steps (`flow-long`); then the flow list and timelines over HTTP, and, given
//! the first admin's password, the web dashboard explorer's first page as its script asks for
//! it (issue 29).

use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::quantile_ms;
use crate::workload::{LONG_FLOW, Workload};

/// A kind of read: its name, the URL of its `n`-th request, and the answer's array it counts.
type Read<'a> = (&'a str, Box<dyn Fn(u64) -> String + 'a>, &'a str);

/// Runs `repeat` reads of each kind, one at a time (one more first, to warm up), and prints a
/// row per kind: `| kind | p50 ms | p95 ms | max ms | 5xx | items |`.
pub(crate) async fn queries(workload: &Workload, url: &str, key: &str, repeat: u64) -> anyhow::Result<()> {
    let client = awc::Client::builder().timeout(Duration::from_secs(60)).finish();
    let auth = format!("Bearer {key}");
    let base = url.trim_end_matches('/');
    let short_flows = workload.logs.saturating_sub(LONG_FLOW) / 10;
    let kinds: [Read<'_>; 4] = [
        ("flow list, newest page (50)", Box::new(|_| format!("{base}/v1/flows")), "flows"),
        (
            "flow list, a page deep in (offset 5,000)",
            Box::new(|n| format!("{base}/v1/flows?offset={}", 5_000 + n)),
            "flows",
        ),
        ("timeline of 1,000 steps", Box::new(|_| format!("{base}/v1/flows/flow-long")), "logs"),
        (
            "timeline of 10 steps",
            Box::new(move |n| format!("{base}/v1/flows/flow-{}", (n * 7_919) % short_flows.max(1))),
            "logs",
        ),
    ];
    for (name, target, items) in &kinds {
        let (mut latencies, mut errors, mut count) = (Vec::new(), 0, 0);
        for n in 0..=repeat {
            let target = target(n);
            let started = Instant::now();
            let mut response = client
                .get(target.as_str())
                .insert_header(("Authorization", auth.as_str()))
                .send()
                .await
                .map_err(|error| anyhow::anyhow!("{target}: {error}"))?;
            let body = response.body().limit(64 << 20).await.context("answer")?;
            let elapsed = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            if n == 0 {
                continue;
            }
            latencies.push(elapsed);
            if response.status().is_server_error() {
                errors += 1;
            } else if response.status().is_success() {
                let value: serde_json::Value = serde_json::from_slice(&body).context("answer is JSON")?;
                count = value[*items].as_array().map_or(0, Vec::len);
            } else {
                bail!("{target} answered {}: {}", response.status(), String::from_utf8_lossy(&body));
            }
        }
        latencies.sort_unstable();
        let (p50, p95) = (quantile_ms(&latencies, 0.50), quantile_ms(&latencies, 0.95));
        let max = latencies.last().map_or(0.0, |max| *max as f64 / 1000.0);
        eprintln!("{name}: p50 {p50:.1} ms, p95 {p95:.1} ms, max {max:.1} ms, {errors} errors");
        println!("query | {name} | {p50:.1} | {p95:.1} | {max:.1} | {errors} | {count}");
    }
    Ok(())
}

/// Times one GET as the dashboard does (session cookie, `X-Requested-With`): microseconds,
/// whether the server failed, and how many logs the answer holds (0 when it is not a list).
async fn timed_get(client: awc::Client, target: String, cookie: String) -> anyhow::Result<(u64, bool, usize)> {
    let started = Instant::now();
    let mut response = client
        .get(target.as_str())
        .insert_header(("Cookie", cookie.as_str()))
        .insert_header(("X-Requested-With", "sluice"))
        .send()
        .await
        .map_err(|error| anyhow::anyhow!("{target}: {error}"))?;
    let body = response.body().limit(64 << 20).await.context("answer")?;
    if !response.status().is_success() && !response.status().is_server_error() {
        bail!("{target} answered {}: {}", response.status(), String::from_utf8_lossy(&body));
    }
    let elapsed = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    let logs = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|value| value["logs"].as_array().map(Vec::len))
        .unwrap_or(0);
    Ok((elapsed, response.status().is_server_error(), logs))
}

/// The explorer's first page, `repeat` times (one more first, to warm up), as
/// `assets/dashboard/app.js` loads it: `GET /v1/me`, then the newest 50 logs, the counts by
/// hour of the last two UTC days and today against yesterday at once. Prints a row per call and
/// one for the page (from the first request to the last answer): the server's time for the
/// page, on loopback.
pub(crate) async fn explorer(url: &str, password: &str, repeat: u64) -> anyhow::Result<()> {
    let client = awc::Client::builder().timeout(Duration::from_secs(60)).finish();
    let base = url.trim_end_matches('/').to_owned();
    let response = client
        .post(format!("{base}/v1/auth/login"))
        .send_json(&serde_json::json!({"email": "admin@localhost", "password": password}))
        .await
        .map_err(|error| anyhow::anyhow!("sign-in: {error}"))?;
    if !response.status().is_success() {
        bail!("sign-in answered {}", response.status());
    }
    let cookie = response
        .headers()
        .get_all("set-cookie")
        .filter_map(|value| value.to_str().ok())
        .find(|value| value.starts_with("sluice_session="))
        .and_then(|value| value.split(';').next())
        .map(str::to_owned)
        .context("sign-in set no session cookie")?;
    let day = |ms: i64| {
        time::OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000))
            .map(|at| format!("{:04}-{:02}-{:02}", at.year(), u8::from(at.month()), at.day()))
            .unwrap_or_default()
    };
    let now = crate::wall_clock().unix_timestamp() * 1000;
    let calls = [
        ("explorer: who am I (`/v1/me`)", format!("{base}/v1/me")),
        ("explorer: the newest 50 logs", format!("{base}/v1/logs?limit=50&offset=0")),
        (
            "explorer: counts by hour, two UTC days",
            format!("{base}/v1/stats?from={}&to={}&groupBy=hour", day(now - 86_400_000), day(now)),
        ),
        ("explorer: today against yesterday", format!("{base}/v1/stats/summary")),
    ];
    let mut latencies: Vec<Vec<u64>> = vec![Vec::new(); calls.len() + 1];
    let mut errors = vec![0_u64; calls.len() + 1];
    let mut items = vec![0_usize; calls.len() + 1];
    for n in 0..=repeat {
        let started = Instant::now();
        let me = timed_get(client.clone(), calls[0].1.clone(), cookie.clone()).await?;
        let at_once: Vec<_> = calls[1..]
            .iter()
            .map(|(_, target)| actix_rt::spawn(timed_get(client.clone(), target.clone(), cookie.clone())))
            .collect();
        let mut answers = vec![me];
        for handle in at_once {
            answers.push(handle.await.context("a read's task")??);
        }
        let page = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        if n == 0 {
            continue;
        }
        answers.push((
            page,
            answers.iter().any(|(_, failed, _)| *failed),
            answers.iter().map(|(_, _, logs)| logs).sum(),
        ));
        for (index, (elapsed, failed, logs)) in answers.into_iter().enumerate() {
            latencies[index].push(elapsed);
            errors[index] += u64::from(failed);
            items[index] = logs;
        }
    }
    let names = calls.iter().map(|(name, _)| *name).chain(["explorer's first page (`/v1/me`, then the three at once)"]);
    for (((name, mut latencies), errors), items) in names.zip(latencies).zip(errors).zip(items) {
        latencies.sort_unstable();
        let (p50, p95) = (quantile_ms(&latencies, 0.50), quantile_ms(&latencies, 0.95));
        let max = latencies.last().map_or(0.0, |max| *max as f64 / 1000.0);
        eprintln!("{name}: p50 {p50:.1} ms, p95 {p95:.1} ms, max {max:.1} ms, {errors} errors");
        let items = if items > 0 { items.to_string() } else { "-".to_owned() };
        println!("query | {name} | {p50:.1} | {p95:.1} | {max:.1} | {errors} | {items}");
    }
    Ok(())
}
