//! Plans over HTTP: the rate limit with its headers and a sliding window on an injected
//! clock, the monthly quota's boundary batch, and who the client is (address and country).

use std::sync::Arc;

use awc::http::StatusCode;
use serde_json::{Value, json};
use sluice_http::OriginResolver;
use sluice_http::origin::{open_country_database, parse_trusted_proxies};
use sluice_model::{Limits, Plan, Scopes};
use sluice_store_sqlite::SqliteOptions;

use crate::common::{NOW, Reply, TestServer, entry, new_key, new_workspace, start, start_configured};

/// The server's workspace put on `plan` with `limits`, before any request (so no cached key
/// holds the old figures).
async fn on_plan(server: &TestServer, plan: Plan, limits: Limits) {
    server.store.set_plan(server.workspace.id, plan, limits).await.expect("set plan");
}

fn header(reply: &Reply, name: &str) -> Option<String> {
    reply.headers.get(name).map(|value| value.to_str().expect("ASCII header").to_owned())
}

/// `(limit, remaining, reset)` of a reply.
fn rate_headers(reply: &Reply) -> (Option<String>, Option<String>, Option<String>) {
    (header(reply, "x-ratelimit-limit"), header(reply, "x-ratelimit-remaining"), header(reply, "x-ratelimit-reset"))
}

fn expect_headers(reply: &Reply, limit: u32, remaining: u32, reset: u64) {
    assert_eq!(
        rate_headers(reply),
        (Some(limit.to_string()), Some(remaining.to_string()), Some(reset.to_string())),
        "{}",
        reply.body
    );
}

async fn post_one(server: &TestServer, key: &str, message: &str) -> Reply {
    let auth = format!("Bearer {key}");
    let body = json!({"logs": [entry(message)]}).to_string().into_bytes();
    server.request("POST", "/v1/logs", &[("Authorization", &auth), ("Content-Type", "application/json")], body).await
}

#[actix_web::test]
async fn the_sixtieth_request_passes_and_the_sixty_first_is_refused_with_headers() {
    let server = start().await;
    on_plan(&server, Plan::Free, Plan::Free.limits()).await;
    let second_key = new_key(&server.store, server.workspace.id, Scopes::ALL, None).await.0;
    server.set_now(NOW);

    // An error is counted and carries the headers too.
    let bad = server.post("/v1/logs", "application/json", b"{\"logs\": [{}]}".to_vec()).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    expect_headers(&bad, 60, 59, 60);
    for n in 2..=60_u32 {
        let reply = post_one(&server, &server.key, &format!("request {n}")).await;
        assert_eq!(reply.status, StatusCode::OK, "request {n}: {}", reply.body);
        expect_headers(&reply, 60, 60 - n, 60);
    }
    // The 61st, with another key of the same workspace: the window is the workspace's.
    server.set_now(NOW + 999);
    let refused = post_one(&server, &second_key, "one too many").await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(refused.body, json!({"error": "Rate limit exceeded", "retryAfter": 60}));
    assert_eq!(header(&refused, "retry-after").as_deref(), Some("60"));
    expect_headers(&refused, 60, 0, 60);
    // Refused requests store nothing; another workspace has its own window; reads are free.
    let other = new_workspace(&server.store, "other").await;
    server.store.set_plan(other.id, Plan::Free, Plan::Free.limits()).await.expect("plan");
    let other_key = new_key(&server.store, other.id, Scopes::ALL, None).await.0;
    let elsewhere = post_one(&server, &other_key, "elsewhere").await;
    assert_eq!(elsewhere.status, StatusCode::OK);
    expect_headers(&elsewhere, 60, 59, 60);
    let listed = server.get("/v1/logs").await;
    assert_eq!(listed.status, StatusCode::OK);
    assert_eq!(listed.body["pagination"]["count"], json!(59));
    assert_eq!(rate_headers(&listed), (None, None, None));
}

#[actix_web::test]
async fn the_window_slides_with_the_clock() {
    let server = start().await;
    on_plan(&server, Plan::Free, Plan::Free.limits()).await;
    server.set_now(NOW);
    for n in 0..30 {
        assert_eq!(post_one(&server, &server.key, &format!("early {n}")).await.status, StatusCode::OK);
    }
    server.set_now(NOW + 10_000);
    for n in 0..30 {
        assert_eq!(post_one(&server, &server.key, &format!("later {n}")).await.status, StatusCode::OK);
    }
    // One millisecond before the first second leaves the window: refused, retry in 1 s.
    server.set_now(NOW + 59_999);
    let refused = post_one(&server, &server.key, "too soon").await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(refused.body["retryAfter"], json!(1));
    expect_headers(&refused, 60, 0, 1);
    // The first 30 left: 30 free again, the oldest counted now 10 s from leaving.
    server.set_now(NOW + 60_000);
    let admitted = post_one(&server, &server.key, "on time").await;
    assert_eq!(admitted.status, StatusCode::OK, "{}", admitted.body);
    expect_headers(&admitted, 60, 29, 10);
}

#[actix_web::test]
async fn plans_without_a_rate_limit_send_no_rate_headers_and_custom_figures_apply() {
    let server = start().await;
    server.set_now(NOW);
    // Enterprise, unlimited: no headers, no refusals.
    for n in 0..70 {
        let reply = post_one(&server, &server.key, &format!("unlimited {n}")).await;
        assert_eq!(reply.status, StatusCode::OK);
        assert_eq!(rate_headers(&reply), (None, None, None));
    }
    // A custom figure on another workspace.
    let custom = new_workspace(&server.store, "custom").await;
    let limits = Limits { requests_per_minute: Some(3), ..Plan::Enterprise.limits() };
    server.store.set_plan(custom.id, Plan::Enterprise, limits).await.expect("plan");
    let key = new_key(&server.store, custom.id, Scopes::ALL, None).await.0;
    for n in 0..3 {
        assert_eq!(post_one(&server, &key, &format!("custom {n}")).await.status, StatusCode::OK);
    }
    let refused = post_one(&server, &key, "custom 4").await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    expect_headers(&refused, 3, 0, 60);
}

#[actix_web::test]
async fn the_batch_that_would_cross_the_monthly_quota_is_refused_whole() {
    let server = start().await;
    on_plan(&server, Plan::Enterprise, Limits { logs_per_month: Some(250), ..Plan::Enterprise.limits() }).await;
    // Mid-month by the server's clock: 2023-11-14 22:13:20 UTC; December starts 1,388,800 s later.
    server.set_now(NOW);
    let batch =
        |prefix: &str, count: usize| -> Vec<Value> { (0..count).map(|n| entry(&format!("{prefix} {n}"))).collect() };
    server.ingest(batch("first", 100)).await;
    server.ingest(batch("second", 100)).await;
    let refused = server.post_json("/v1/logs", &json!({"logs": batch("third", 100)})).await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        refused.body,
        json!({"error": "Monthly log quota exceeded", "code": "QUOTA_EXCEEDED", "retryAfter": 1_388_800})
    );
    assert_eq!(header(&refused, "retry-after").as_deref(), Some("1388800"));
    let listed = server.get("/v1/logs?limit=1000").await;
    assert_eq!(listed.body["pagination"]["count"], json!(200), "the refused batch left logs behind");
    // Exactly to the quota, then not one more.
    server.ingest(batch("fourth", 50)).await;
    let one_more = server.post_json("/v1/logs", &json!({"logs": batch("fifth", 1)})).await;
    assert_eq!(one_more.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(one_more.body["code"], json!("QUOTA_EXCEEDED"));
}

#[actix_web::test]
async fn refusals_after_the_rate_limit_carry_its_headers_and_count_in_its_window() {
    let server = start().await;
    let limits = Limits { requests_per_minute: Some(5), logs_per_month: Some(150), ..Plan::Pro.limits() };
    on_plan(&server, Plan::Pro, limits).await;
    server.set_now(NOW);
    let entries: Vec<Value> = (0..100).map(|n| entry(&format!("counted {n}"))).collect();
    let stored = server.post_json("/v1/logs", &json!({"logs": entries})).await;
    assert_eq!(stored.status, StatusCode::OK, "{}", stored.body);
    expect_headers(&stored, 5, 4, 60);
    // Past the monthly quota: refused, and the rate headers still tell the window.
    let entries: Vec<Value> = (0..100).map(|n| entry(&format!("over {n}"))).collect();
    let over = server.post_json("/v1/logs", &json!({"logs": entries})).await;
    assert_eq!((over.status, over.body["code"].clone()), (StatusCode::TOO_MANY_REQUESTS, json!("QUOTA_EXCEEDED")));
    expect_headers(&over, 5, 3, 60);
    // Too large a body: 413 with the headers.
    let big = server.post("/v1/logs", "application/json", vec![b' '; 5 * 1024 * 1024 + 1]).await;
    assert_eq!((big.status, big.error()), (StatusCode::PAYLOAD_TOO_LARGE, "Payload too large"));
    expect_headers(&big, 5, 2, 60);
}

/// The address and country stored with the one log a request sends.
async fn client_of(server: &TestServer, headers: &[(&str, &str)]) -> (Value, Value) {
    let auth = format!("Bearer {}", server.key);
    let mut all = vec![("Authorization", auth.as_str()), ("Content-Type", "application/json")];
    all.extend_from_slice(headers);
    let marker = format!("client {}", sluice_model::LogId::generate());
    let reply =
        server.request("POST", "/v1/logs", &all, json!({"logs": [entry(&marker)]}).to_string().into_bytes()).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let listed = server.get("/v1/logs?limit=1").await;
    let log = &listed.body["logs"][0];
    assert_eq!(log["message"], json!(marker));
    (log["ipAddress"].clone(), log.get("country").cloned().unwrap_or(Value::Null))
}

#[actix_web::test]
async fn a_spoofed_forwarding_header_from_an_untrusted_peer_is_ignored() {
    let server = start().await;
    let spoofed = [("X-Forwarded-For", "203.0.113.5"), ("Forwarded", "for=198.51.100.7"), ("CF-IPCountry", "NL")];
    assert_eq!(client_of(&server, &spoofed).await, (json!("127.0.0.1"), Value::Null));
}

fn fixture() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/geoip/countries.mmdb")
}

#[actix_web::test]
async fn behind_a_trusted_proxy_the_forwarded_client_and_its_country_count() {
    let server = start_configured(&SqliteOptions::default(), |state| {
        let trusted = parse_trusted_proxies("127.0.0.1/32, 10.0.0.0/8").expect("proxies");
        let countries = open_country_database(&fixture()).expect("fixture database");
        state.origins = Arc::new(OriginResolver::new(trusted, Some(countries)));
    })
    .await;
    // The right-most untrusted hop; the client's own claim to its left is not believed.
    let chain = [("X-Forwarded-For", "192.0.2.99, 203.0.113.5, 10.1.1.1")];
    assert_eq!(client_of(&server, &chain).await, (json!("203.0.113.5"), json!("NL")));
    // IPv4 and IPv6 lookups in the database, through `Forwarded` as well.
    assert_eq!(
        client_of(&server, &[("X-Forwarded-For", "198.51.100.20")]).await,
        (json!("198.51.100.20"), json!("JP"))
    );
    assert_eq!(
        client_of(&server, &[("Forwarded", r#"for="[2001:db8:1::9]:443""#)]).await,
        (json!("2001:db8:1::9"), json!("BR"))
    );
    assert_eq!(
        client_of(&server, &[("X-Forwarded-For", "2001:db8:2::1")]).await,
        (json!("2001:db8:2::1"), json!("DE"))
    );
    // Addresses the database does not know have no country.
    assert_eq!(
        client_of(&server, &[("X-Forwarded-For", "198.51.100.200")]).await,
        (json!("198.51.100.200"), Value::Null)
    );
    assert_eq!(
        client_of(&server, &[("X-Forwarded-For", "2001:db8:3::1")]).await,
        (json!("2001:db8:3::1"), Value::Null)
    );
    // CF-IPCountry from the trusted proxy wins over the database.
    let cloudflare = [("X-Forwarded-For", "203.0.113.5"), ("CF-IPCountry", "ch")];
    assert_eq!(client_of(&server, &cloudflare).await, (json!("203.0.113.5"), json!("CH")));
    // No forwarding header: the proxy itself, which the database does not know.
    assert_eq!(client_of(&server, &[]).await, (json!("127.0.0.1"), Value::Null));
}

#[actix_web::test]
async fn without_trusted_proxies_the_country_comes_from_the_peer_address() {
    let server = start_configured(&SqliteOptions::default(), |state| {
        let countries = open_country_database(&fixture()).expect("fixture database");
        state.origins = Arc::new(OriginResolver::new(Vec::new(), Some(countries)));
    })
    .await;
    // The peer is 127.0.0.1, which the fixture does not place; the spoofed header changes nothing.
    assert_eq!(
        client_of(&server, &[("X-Forwarded-For", "203.0.113.5"), ("CF-IPCountry", "NL")]).await,
        (json!("127.0.0.1"), Value::Null)
    );
}
