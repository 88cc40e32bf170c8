//! The web dashboard's pages as HTTP answers: one shell for every page, holding no data, with
//! its script and style from this server under a policy that allows nothing inline and no
//! framing; what they do in a browser is `cargo xtask browser`'s suite.

use std::io::Write as _;

use actix_web::http::StatusCode;

use crate::common::start;

fn header<'a>(reply: &'a crate::common::RawReply, name: &str) -> &'a str {
    reply.headers.get(name).and_then(|value| value.to_str().ok()).unwrap_or_default()
}

#[actix_web::test]
async fn every_page_is_the_shell_under_a_policy_without_inline_script() {
    let server = start().await;
    server.ingest(vec![serde_json::json!({"level": "info", "message": "secret-ish text", "source": "s", "environment": "production"})]).await;
    let mut shells = Vec::new();
    for page in
        ["/", "/login", "/logs/0190f3a2-8c1e-7b4a-9d2e-1f0a2b3c4d5e", "/flows", "/flows/a%20b", "/tail", "/settings"]
    {
        let reply = server.request_raw("GET", page, &[], Vec::new()).await;
        assert_eq!(reply.status, StatusCode::OK, "{page}");
        assert!(header(&reply, "content-type").starts_with("text/html"), "{page}");
        let policy = header(&reply, "content-security-policy");
        for directive in ["script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "connect-src 'self'"] {
            assert!(policy.contains(directive), "{page}: {policy}");
        }
        assert!(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"), "{policy}");
        assert_eq!(header(&reply, "x-frame-options"), "DENY");
        assert_eq!(header(&reply, "x-content-type-options"), "nosniff");
        shells.push(reply.bytes);
    }
    assert!(shells.windows(2).all(|pair| pair[0] == pair[1]), "every page is the same shell");
    let html = String::from_utf8_lossy(&shells[0]);
    assert!(!html.contains("<script>") && !html.contains("style=") && !html.contains("http"), "{html}");
    assert!(!html.contains("secret-ish"), "the shell holds no data");
    assert!(html.contains("src=\"/assets/app.js\"") && html.contains("href=\"/assets/app.css\""), "{html}");
    server.stop().await;
}

#[actix_web::test]
async fn the_script_and_style_are_served_once_and_revalidated() {
    let server = start().await;
    for (path, kind) in [("/assets/app.js", "text/javascript"), ("/assets/app.css", "text/css")] {
        let first = server.request_raw("GET", path, &[], Vec::new()).await;
        assert_eq!(first.status, StatusCode::OK, "{path}");
        assert!(header(&first, "content-type").starts_with(kind), "{path}");
        assert_eq!(header(&first, "cache-control"), "no-cache");
        let etag = header(&first, "etag").to_owned();
        assert!(etag.starts_with('"') && etag.len() > 4, "{etag}");
        let again = server.request_raw("GET", path, &[("If-None-Match", &etag)], Vec::new()).await;
        assert_eq!(again.status, StatusCode::NOT_MODIFIED, "{path}");
        assert!(again.bytes.is_empty());
        let stale = server.request_raw("GET", path, &[("If-None-Match", "\"other\"")], Vec::new()).await;
        assert_eq!(stale.status, StatusCode::OK, "{path}");
    }
    server.stop().await;
}

/// The budget: the script and style a page loads, 150 KB compressed in all.
#[actix_web::test]
async fn a_page_loads_at_most_150_kb_of_script_and_style_compressed() {
    let server = start().await;
    let mut compressed = 0;
    for path in ["/", "/assets/app.js", "/assets/app.css"] {
        let reply = server.request_raw("GET", path, &[], Vec::new()).await;
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gzip.write_all(&reply.bytes).expect("gzip");
        compressed += gzip.finish().expect("gzip").len();
    }
    assert!(compressed <= 150 * 1024, "{compressed} bytes compressed");
    eprintln!("the dashboard's shell, script and style: {compressed} bytes gzipped");
    server.stop().await;
}
