//! `GET /v1/logs/tail`: logs streamed as they are committed, filters and `q`, the heartbeat,
//! the replay after `Last-Event-ID`, a reader too slow for the logs (`dropped`, memory
//! bounded), the per-workspace cap, another workspace's logs, and the end at shutdown.
//!
//! Nothing here sleeps to order events: a tail's events come in the order the server queued
//! them, and the test servers' heartbeat (50 ms) follows whatever a tail held, so reading up to
//! a heartbeat, or up to a log ingested last, shows everything queued before it.

use std::time::Duration;

use awc::http::StatusCode;
use serde_json::{Value, json};
use sluice_model::Scopes;

use crate::common::{Tail, entry, new_key, new_workspace, resident_bytes, start};

fn log(message: &str, level: &str) -> Value {
    let mut e = entry(message);
    e["level"] = json!(level);
    e
}

/// The next `count` logs' messages, skipping heartbeats; each must come within a second of
/// being asked for (DECISIONS: within 1 s of its 200).
async fn next_logs(tail: &mut Tail, count: usize) -> Vec<String> {
    let mut messages = Vec::new();
    while messages.len() < count {
        let event = actix_web::rt::time::timeout(Duration::from_secs(1), tail.next())
            .await
            .expect("a log within a second")
            .expect("the stream is open");
        match event.event.as_str() {
            "comment" => continue,
            "log" => messages.push(event.data["message"].as_str().unwrap_or("").to_owned()),
            other => panic!("unexpected {other} event: {event:?}"),
        }
    }
    messages
}

#[actix_web::test]
async fn logs_after_connecting_arrive_once_committed_with_filters_and_q() {
    let server = start().await;
    server.ingest(vec![log("before the tail", "error")]).await;
    let (status, tail) = server.tail("/v1/logs/tail?level=error&q=payment").await;
    assert_eq!(status, StatusCode::OK);
    let mut tail = tail.expect("a tail");
    let (before, dropped) = tail.until_heartbeat().await;
    assert!(before.is_empty() && dropped.is_empty(), "nothing from before it opened: {before:?}");

    server
        .ingest(vec![
            log("payment declined", "error"),
            log("payment ok", "info"),
            log("disk full", "error"),
            log("PAYMENT timeout", "error"),
        ])
        .await;
    assert_eq!(next_logs(&mut tail, 2).await, ["payment declined", "PAYMENT timeout"]);
    // The logs that did not match were never queued: the next is the next match.
    server.ingest(vec![log("payment retried", "error")]).await;
    let event = loop {
        let event = tail.next().await.expect("open");
        if event.event != "comment" {
            break event;
        }
    };
    assert_eq!(event.data["message"], json!("payment retried"));
    assert_eq!(event.data["level"], json!("error"));
    assert_eq!(event.id.as_deref(), event.data["id"].as_str(), "the event id is the log's");

    let (status, error) = server.tail("/v1/logs/tail?q=a").await;
    assert_eq!(
        (status, error.err()),
        (StatusCode::BAD_REQUEST, Some(json!({"error": "Search query must be at least 2 characters"})))
    );
    let (status, error) = server.tail("/v1/logs/tail?level=fatal").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error:?}", error = error.err());
    server.stop().await;
}

#[actix_web::test]
async fn tails_with_other_filters_each_get_their_own_logs_of_one_batch() {
    // One batch is encoded once for all tails: a tail showing everything shares it, filtered
    // tails get their own logs out of it, whichever tails are open together.
    let server = start().await;
    let mut open = Vec::new();
    for path in ["/v1/logs/tail?level=error", "/v1/logs/tail?q=disk", "/v1/logs/tail"] {
        let (status, tail) = server.tail(path).await;
        assert_eq!(status, StatusCode::OK);
        let mut tail = tail.expect("a tail");
        assert!(tail.until_heartbeat().await.0.is_empty());
        open.push(tail);
        if open.len() == 2 {
            // Filtered tails only: the batch holds only what some filter shows.
            server
                .ingest(vec![log("fine", "info"), log("disk slow", "info"), log("crash", "warn"), log("boom", "error")])
                .await;
            let [errors, disk] = &mut open[..] else { unreachable!("two tails") };
            assert_eq!(next_logs(disk, 1).await, ["disk slow"]);
            assert_eq!(next_logs(errors, 1).await, ["boom"]);
        }
    }
    let batch = vec![
        log("payment declined", "error"),
        log("disk at 91%", "warn"),
        log("ok", "info"),
        log("disk full", "error"),
    ];
    server.ingest(batch).await;
    let [errors, disk, all] = &mut open[..] else { unreachable!("three tails") };
    assert_eq!(next_logs(all, 4).await, ["payment declined", "disk at 91%", "ok", "disk full"]);
    assert_eq!(next_logs(errors, 2).await, ["payment declined", "disk full"]);
    assert_eq!(next_logs(disk, 2).await, ["disk at 91%", "disk full"]);
    server.stop().await;
}

#[actix_web::test]
async fn last_event_id_replays_what_came_after_it_oldest_first() {
    let server = start().await;
    for (message, level) in [("one", "info"), ("two", "error"), ("three", "info"), ("four", "error"), ("five", "info")]
    {
        server.ingest(vec![log(message, level)]).await;
    }
    let listed = server.get("/v1/logs?limit=10").await;
    let ids: Vec<String> = listed.body["logs"]
        .as_array()
        .into_iter()
        .flatten()
        .rev()
        .map(|l| l["id"].as_str().unwrap_or("").to_owned())
        .collect();

    let (_, tail) = server.tail_with("/v1/logs/tail", &[("X-API-Key", &server.key), ("Last-Event-ID", &ids[1])]).await;
    let mut tail = tail.expect("a tail");
    assert_eq!(tail.until_heartbeat().await.0, ["three", "four", "five"]);
    server.ingest(vec![log("six", "info")]).await;
    assert_eq!(next_logs(&mut tail, 1).await, ["six"], "then live, without repeating the replay");

    let (_, tail) = server.tail(&format!("/v1/logs/tail?level=error&lastEventId={}", ids[0])).await;
    assert_eq!(tail.expect("a tail").until_heartbeat().await.0, ["two", "four"], "the replay is filtered too");
    for unknown in ["0190f3a2-8c1e-7b4a-9d2e-1f0a2b3c4d5e", "not-an-id"] {
        let (_, tail) = server.tail(&format!("/v1/logs/tail?lastEventId={unknown}")).await;
        assert!(tail.expect("a tail").until_heartbeat().await.0.is_empty(), "an unknown id replays nothing");
    }
    // Another workspace's id replays nothing either.
    let other = new_workspace(&server.store, "other").await;
    let (key, _) = new_key(&server.store, other.id, Scopes::ALL, None).await;
    let (_, tail) = server.tail_with("/v1/logs/tail", &[("X-API-Key", &key), ("Last-Event-ID", &ids[0])]).await;
    assert!(tail.expect("a tail").until_heartbeat().await.0.is_empty());
    server.stop().await;
}

#[actix_web::test]
async fn a_reader_that_stops_reading_gets_dropped_and_memory_stays_bounded() {
    let server = start().await;
    let (_, tail) = server.tail("/v1/logs/tail").await;
    let mut tail = tail.expect("a tail");
    let _ = tail.until_heartbeat().await;
    // The tail is not read while 30,000 logs are ingested: more than its queue and every
    // socket buffer between it and the server hold.
    let before = resident_bytes();
    const BATCHES: usize = 300;
    for batch in 0..BATCHES {
        server.ingest((0..100).map(|n| entry(&format!("flood {batch} {n} {}", "x".repeat(200)))).collect()).await;
    }
    let grown = resident_bytes().saturating_sub(before);
    assert!(grown < 64 << 20, "the server's memory grew by {} MiB for one stalled tail", grown >> 20);
    // Now read: what came, plus what the `dropped` events count, is every log.
    let (mut received, mut dropped) = (0_u64, 0_u64);
    while received + dropped < (BATCHES * 100) as u64 {
        let event = tail.next().await.expect("open");
        match event.event.as_str() {
            "log" => received += 1,
            "dropped" => dropped += event.data["count"].as_u64().expect("a count"),
            _ => {}
        }
    }
    assert!(dropped > 0, "a reader this slow loses events ({received} received)");
    server.ingest(vec![entry("after the flood")]).await;
    assert_eq!(next_logs(&mut tail, 1).await, ["after the flood"], "and it goes on once it reads again");
    server.stop().await;
}

#[actix_web::test]
async fn the_twenty_first_tail_of_a_workspace_is_refused_and_a_closed_one_frees_its_slot() {
    let server = start().await;
    let mut tails = Vec::new();
    for _ in 0..20 {
        let (status, tail) = server.tail("/v1/logs/tail").await;
        assert_eq!(status, StatusCode::OK);
        tails.push(tail.expect("a tail"));
    }
    let (status, error) = server.tail("/v1/logs/tail").await;
    assert_eq!((status, error.err()), (StatusCode::TOO_MANY_REQUESTS, Some(json!({"error": "Too many live tails"}))));
    // Another workspace has slots of its own.
    let other = new_workspace(&server.store, "other").await;
    let (key, _) = new_key(&server.store, other.id, Scopes::ALL, None).await;
    let (status, _other_tail) = server.tail_with("/v1/logs/tail", &[("X-API-Key", &key)]).await;
    assert_eq!(status, StatusCode::OK);

    // A client goes: the server sees it at the next heartbeat it writes, and frees the slot.
    drop(tails.pop());
    let workspace = server.workspace.id;
    for _ in 0..500 {
        if server.tails.open_tails(workspace) < 20 {
            break;
        }
        actix_web::rt::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(server.tails.open_tails(workspace), 19, "the closed tail's slot is free");
    let (status, _) = server.tail("/v1/logs/tail").await;
    assert_eq!(status, StatusCode::OK);
    server.stop().await;
}

#[actix_web::test]
async fn another_workspace_never_reaches_a_tail_and_shutdown_ends_it() {
    let server = start().await;
    let (_, tail) = server.tail("/v1/logs/tail").await;
    let mut tail = tail.expect("a tail");
    let other = new_workspace(&server.store, "other").await;
    let (key, _) = new_key(&server.store, other.id, Scopes::ALL, None).await;
    let body = json!([entry("theirs")]).to_string().into_bytes();
    let reply =
        server.request("POST", "/v1/logs", &[("X-API-Key", &key), ("Content-Type", "application/json")], body).await;
    assert_eq!(reply.status, StatusCode::OK);
    server.ingest(vec![entry("mine")]).await;
    assert_eq!(next_logs(&mut tail, 1).await, ["mine"], "the other workspace's log never came");

    // The first event is a heartbeat comment when nothing else is due.
    let (_, quiet) = server.tail("/v1/logs/tail").await;
    let first = quiet.expect("a tail").next().await.expect("an event");
    assert_eq!(first.event, "comment");

    server.tails.close();
    while let Some(event) = tail.next().await {
        assert_eq!(event.event, "comment", "nothing but what it held: {event:?}");
    }
    let (status, _) = server.tail("/v1/logs/tail").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "no tail opens while the server stops");
    server.stop().await;
}

/// A server on PostgreSQL, its database's URL, and a store of its own on that database for a
/// second server.
async fn first_and_its_database() -> (crate::common::TestServer, String, std::sync::Arc<dyn sluice_store::Store>) {
    let first = start().await;
    let url = first.database.as_ref().expect("a PostgreSQL database").url().to_owned();
    let options = sluice_store_pg::PgOptions { pool_size: 4, ..Default::default() };
    let store = sluice_store_pg::PgStore::connect(&url, &options).await.expect("connect");
    (first, url, std::sync::Arc::new(store))
}

#[actix_web::test]
async fn two_servers_on_one_postgresql_deliver_each_others_logs_once() {
    // Servers share a PostgreSQL database; a SQLite file has one server.
    if crate::common::on_sqlite() {
        return;
    }
    let (first, _, store) = first_and_its_database().await;
    let second = crate::common::start_over(store).await;
    let (status, tail) = second.tail_with("/v1/logs/tail", &[("X-API-Key", &first.key)]).await;
    assert_eq!(status, StatusCode::OK);
    let mut tail = tail.expect("a tail");
    // The second server listens once its own connection has said LISTEN: until a probe sent
    // through the first arrives (observable state, not a guess at how long that takes).
    for probe in 0.. {
        assert!(probe < 200, "the second server never heard the first");
        first.ingest(vec![entry(&format!("probe {probe}"))]).await;
        if !tail.until_heartbeat().await.0.is_empty() {
            break;
        }
    }
    first.ingest(vec![log("from the first server", "error")]).await;
    let mut seen = Vec::new();
    while !seen.iter().any(|message: &String| message == "from the first server") {
        seen.extend(next_logs(&mut tail, 1).await);
    }
    // Its own logs reach it once (it hears its own announcements and skips them).
    let body = json!([entry("from the second server")]).to_string().into_bytes();
    let headers = [("X-API-Key", first.key.as_str()), ("Content-Type", "application/json")];
    assert_eq!(second.request("POST", "/v1/logs", &headers, body).await.status, StatusCode::OK);
    first.ingest(vec![entry("sentinel")]).await;
    let mut rest = Vec::new();
    while rest.last().is_none_or(|message: &String| message != "sentinel") {
        rest.extend(next_logs(&mut tail, 1).await);
    }
    rest.retain(|message| !message.starts_with("probe"));
    assert_eq!(rest, ["from the second server", "sentinel"]);
    second.stop().await;
    first.stop().await;
}

#[actix_web::test]
async fn a_server_tells_the_others_again_while_its_tail_stays_open() {
    if crate::common::on_sqlite() {
        return;
    }
    let (first, url, store) = first_and_its_database().await;
    // The second server says again every 100 ms (20 s in service) which workspaces it tails.
    let watching = store.clone();
    let second = crate::common::start_over_configured(store, move |state| {
        state.tails.close();
        state.tails = sluice_http::tail::TailHub::connect_refreshing(watching, Duration::from_millis(100));
    })
    .await;
    // Nobody tails yet: no watch.
    assert_eq!(sluice_store_pg::testing::tail_watches_left_ms(&url).await, Vec::<i64>::new());
    let (status, tail) = second.tail_with("/v1/logs/tail", &[("X-API-Key", &first.key)]).await;
    assert_eq!(status, StatusCode::OK);
    let mut tail = tail.expect("a tail");
    // The tail's watch was stored before its 200, holding about a minute.
    let left = sluice_store_pg::testing::tail_watches_left_ms(&url).await;
    assert!(matches!(left.as_slice(), [ms] if (50_000..=60_000).contains(ms)), "{left:?}");
    // As if the server had not said so for a minute: the first would announce nothing to it
    // but for the second saying it again while its tail is open.
    assert_eq!(sluice_store_pg::testing::lapse_tail_watches(&url).await, 1);
    for probe in 0.. {
        assert!(probe < 200, "the second server was never heard of again");
        first.ingest(vec![entry(&format!("probe {probe}"))]).await;
        if !tail.until_heartbeat().await.0.is_empty() {
            break;
        }
    }
    let left = sluice_store_pg::testing::tail_watches_left_ms(&url).await;
    assert!(matches!(left.as_slice(), [ms] if *ms > 50_000), "held again: {left:?}");
    second.stop().await;
    first.stop().await;
}
