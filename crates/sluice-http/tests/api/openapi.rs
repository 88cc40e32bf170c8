//! The OpenAPI document: every route of the route table in it, served at `/openapi.json`
//! without a key, rendered at `/docs` from files inside the binary, and equal to its snapshot
//! `docs/openapi.json`, so every change to the API's description is seen in review.

use awc::http::StatusCode;
use serde_json::Value;

use crate::common::start;

const SNAPSHOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");

#[test]
fn the_document_equals_its_snapshot() {
    let document = sluice_http::openapi::document();
    if std::env::var_os("SLUICE_UPDATE_OPENAPI").is_some() {
        std::fs::write(SNAPSHOT, document).expect("write the snapshot");
        return;
    }
    let snapshot = std::fs::read_to_string(SNAPSHOT).unwrap_or_default();
    assert!(
        snapshot == document,
        "the OpenAPI document changed: review it, then accept it with \
         `SLUICE_UPDATE_OPENAPI=1 cargo test -p sluice-http --test api openapi` (it rewrites docs/openapi.json)"
    );
}

#[test]
fn every_route_is_described() {
    let document: Value = serde_json::from_str(sluice_http::openapi::document()).expect("JSON");
    assert_eq!(document["openapi"], "3.1.0");
    for route in sluice_http::routes() {
        // The reference page's and the dashboard's own files are not API; the dashboard's
        // pages are one shell, described once at `/`.
        let page = sluice_http::dashboard::PAGES.contains(&route.path) && route.path != "/";
        if route.path.starts_with("/docs/") || route.path.starts_with("/assets/") || page {
            continue;
        }
        let method = route.method.as_str().to_ascii_lowercase();
        let operation = &document["paths"][route.path][&method];
        assert!(operation.is_object(), "{} {} is not in the document", route.method, route.path);
        let responses = operation["responses"].as_object().expect("responses");
        assert!(responses.keys().any(|status| status.starts_with('2')), "{} {}: no success", route.method, route.path);
        if route.path.starts_with("/v1/") {
            for status in ["400", "401", "403", "404", "429", "500", "503"] {
                assert!(responses.contains_key(status), "{} {}: no {status}", route.method, route.path);
            }
        }
    }
    let ingest = &document["paths"]["/v1/logs"]["post"]["responses"]["200"]["headers"];
    assert!(ingest["X-RateLimit-Remaining"].is_object(), "the rate-limit headers: {ingest}");
}

#[actix_web::test]
async fn the_document_and_its_reference_page_are_served_without_a_key() {
    let server = start().await;
    let reply = server.request_raw("GET", "/openapi.json", &[], Vec::new()).await;
    assert_eq!(reply.status, StatusCode::OK);
    let served: Value = serde_json::from_slice(&reply.bytes).expect("JSON");
    assert_eq!(served, serde_json::from_str::<Value>(sluice_http::openapi::document()).expect("JSON"));

    let page = server.request_raw("GET", "/docs", &[], Vec::new()).await;
    assert_eq!(page.status, StatusCode::OK);
    let policy = page.headers.get("content-security-policy").and_then(|value| value.to_str().ok()).unwrap_or_default();
    assert!(policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'"), "{policy}");
    let html = String::from_utf8_lossy(&page.bytes);
    assert!(!html.contains("<script>") && !html.contains("http"), "no inline script, nothing from elsewhere: {html}");
    for asset in ["/docs/swagger-ui-bundle.js", "/docs/swagger-ui.css", "/docs/docs.js"] {
        assert!(html.contains(asset), "{asset} in the page");
        let reply = server.request_raw("GET", asset, &[], Vec::new()).await;
        assert_eq!(reply.status, StatusCode::OK, "{asset}");
        assert!(reply.bytes.len() > 100, "{asset}");
    }
    server.stop().await;
}
