//! `GET /v1/stats` and `GET /v1/stats/summary` end to end, with the server's clock set:
//! defaults, groupings, filters, refused parameters, summary and tenant isolation.

use awc::http::StatusCode;
use serde_json::{Value, json};
use sluice_model::Scopes;

use crate::common::{entry, new_key, new_workspace, start};

/// 2026-03-10 00:00:00 UTC.
const MARCH_10: i64 = 1_773_100_800_000;
const HOUR: i64 = 3_600_000;
const DAY: i64 = 24 * HOUR;

fn log(level: &str, source: &str, timestamp: i64) -> Value {
    let mut e = entry("m");
    e["level"] = json!(level);
    e["source"] = json!(source);
    e["timestamp"] = json!(timestamp);
    e
}

fn zeros(date: &str) -> Value {
    json!({"date": date, "debug": 0, "info": 0, "warn": 0, "error": 0, "total": 0})
}

#[actix_web::test]
async fn stats_by_day_default_to_eight_dense_days() {
    let server = start().await;
    server.set_now(MARCH_10 + 15 * HOUR);
    server
        .ingest(vec![
            log("info", "api", MARCH_10 - 8 * DAY + 23 * HOUR), // 2026-03-02: before the period
            log("info", "api", MARCH_10 - 7 * DAY),             // 2026-03-03 00:00
            log("error", "web", MARCH_10 - 1),                  // 2026-03-09 23:59:59.999
            log("warn", "api", MARCH_10),                       // 2026-03-10 00:00
            log("debug", "api", MARCH_10 + 20 * HOUR),          // later today
        ])
        .await;
    let reply = server.get("/v1/stats").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(
        reply.body,
        json!({
            "stats": [
                {"date": "2026-03-03", "debug": 0, "info": 1, "warn": 0, "error": 0, "total": 1},
                zeros("2026-03-04"), zeros("2026-03-05"), zeros("2026-03-06"), zeros("2026-03-07"), zeros("2026-03-08"),
                {"date": "2026-03-09", "debug": 0, "info": 0, "warn": 0, "error": 1, "total": 1},
                {"date": "2026-03-10", "debug": 1, "info": 0, "warn": 1, "error": 0, "total": 2},
            ],
            "totals": {"debug": 1, "info": 1, "warn": 1, "error": 1, "total": 4},
            "period": {"from": "2026-03-03", "to": "2026-03-10", "groupBy": "day"}
        })
    );
    server.stop().await;
}

#[actix_web::test]
async fn stats_by_hour_and_by_source_with_filters() {
    let server = start().await;
    server.set_now(MARCH_10 + 2 * HOUR);
    let mut staging = log("warn", "api", MARCH_10 + HOUR);
    staging["environment"] = json!("staging");
    let mut audit = log("info", "batch", MARCH_10 + HOUR + 5);
    audit["dataset"] = json!("audit");
    server
        .ingest(vec![
            log("info", "api", MARCH_10 + 1),
            log("info", "web", MARCH_10 + HOUR - 1),
            log("error", "web", MARCH_10 + 23 * HOUR),
            staging,
            audit,
        ])
        .await;
    let hours = server.get("/v1/stats?from=2026-03-10&to=2026-03-10&groupBy=hour").await;
    assert_eq!(hours.status, StatusCode::OK, "{}", hours.body);
    let records = hours.body["stats"].as_array().cloned().unwrap_or_default();
    assert_eq!(records.len(), 24, "whole days, future hours included");
    assert_eq!(
        records[0],
        json!({"date": "2026-03-10", "hour": 0, "debug": 0, "info": 2, "warn": 0, "error": 0, "total": 2})
    );
    assert_eq!(records[1]["total"], json!(2));
    assert_eq!(records[23]["error"], json!(1));
    assert_eq!(hours.body["period"], json!({"from": "2026-03-10", "to": "2026-03-10", "groupBy": "hour"}));

    let sources = server.get("/v1/stats?groupBy=source").await;
    let names: Vec<&str> =
        sources.body["stats"].as_array().into_iter().flatten().filter_map(|r| r["source"].as_str()).collect();
    assert_eq!(names, ["api", "web", "batch"], "by total desc, then name");
    assert_eq!(
        sources.body["stats"][1],
        json!({"source": "web", "debug": 0, "info": 1, "warn": 0, "error": 1, "total": 2})
    );

    let web = server.get("/v1/stats?groupBy=source&source=web").await;
    assert_eq!(web.body["totals"]["total"], json!(2));
    let staging = server.get("/v1/stats?environment=staging").await;
    assert_eq!(staging.body["totals"], json!({"debug": 0, "info": 0, "warn": 1, "error": 0, "total": 1}));
    let audit = server.get("/v1/stats?dataset=audit&groupBy=source").await;
    assert_eq!(
        audit.body["stats"],
        json!([{"source": "batch", "debug": 0, "info": 1, "warn": 0, "error": 0, "total": 1}])
    );
    server.stop().await;
}

#[actix_web::test]
async fn bad_stats_parameters_are_refused_and_named() {
    let server = start().await;
    server.set_now(MARCH_10);
    let cases = [
        ("/v1/stats?from=2026-3-01", vec![r#"["from"] Invalid date '2026-3-01', expected YYYY-MM-DD"#]),
        ("/v1/stats?to=2026-02-30", vec![r#"["to"] Invalid date '2026-02-30', expected YYYY-MM-DD"#]),
        (
            "/v1/stats?groupBy=week",
            vec![r#"["groupBy"] Invalid enum value. Expected 'hour' | 'day' | 'source', received 'week'"#],
        ),
        ("/v1/stats?from=2026-03-05&to=2026-03-04", vec![r#"["from"] from must not be after to"#]),
        ("/v1/stats?from=2025-01-01&to=2026-01-02", vec![r#"["from"] The period must span at most 366 days"#]),
        (
            "/v1/stats?from=2026-01-01&to=2026-04-03&groupBy=hour",
            vec![r#"["from"] The period must span at most 92 days grouped by hour"#],
        ),
        (
            "/v1/stats?environment=prod",
            vec![
                r#"["environment"] Invalid enum value. Expected 'development' | 'staging' | 'production', received 'prod'"#,
            ],
        ),
    ];
    for (path, issues) in cases {
        let reply = server.get(path).await;
        assert_eq!((reply.status, reply.error()), (StatusCode::BAD_REQUEST, "Validation error"), "{path}");
        assert_eq!(reply.issues(), issues, "{path}");
    }
    server.stop().await;
}

#[actix_web::test]
async fn summary_compares_the_utc_day_with_yesterday() {
    let server = start().await;
    server.set_now(MARCH_10 + 9 * HOUR);
    let quiet = server.get("/v1/stats/summary").await;
    assert_eq!(
        quiet.body,
        json!({"today": {"debug": 0, "info": 0, "warn": 0, "error": 0, "total": 0},
               "comparison": {"yesterdayTotal": 0, "changePercent": 0, "trend": "stable"}})
    );
    let mut logs: Vec<Value> = (0..3).map(|i| log("info", "api", MARCH_10 - DAY + i)).collect();
    logs.push(log("error", "api", MARCH_10));
    logs.push(log("info", "api", MARCH_10 - DAY - 1)); // two days ago
    server.ingest(logs).await;
    let reply = server.get("/v1/stats/summary").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(
        reply.body,
        json!({"today": {"debug": 0, "info": 0, "warn": 0, "error": 1, "total": 1},
               "comparison": {"yesterdayTotal": 3, "changePercent": -66.7, "trend": "down"}})
    );
    server.stop().await;
}

#[actix_web::test]
async fn stats_and_summary_see_only_the_targeted_workspace() {
    let server = start().await;
    server.set_now(MARCH_10);
    server.ingest(vec![log("info", "api", MARCH_10)]).await;
    let other = new_workspace(&server.store, "other").await;
    let (other_key, _) = new_key(&server.store, other.id, Scopes::ALL, None).await;
    let auth = format!("Bearer {other_key}");
    for path in ["/v1/stats", "/v1/stats?groupBy=source", "/v1/stats/summary"] {
        let theirs = server.request("GET", path, &[("Authorization", &auth)], Vec::new()).await;
        let total =
            if path.ends_with("summary") { &theirs.body["today"]["total"] } else { &theirs.body["totals"]["total"] };
        assert_eq!(total, &json!(0), "{path}");
    }
    let mine = server.get("/v1/stats/summary").await;
    assert_eq!(mine.body["today"]["total"], json!(1));
    server.stop().await;
}
