//! `POST /v1/flows`, `GET /v1/flows` and `GET /v1/flows/{flowId}`: creation, the summary's
//! shape, ordering, filters and paging, the timeline's order, gaps, duplicates and truncation,
//! refusals, and another workspace's flows.

use awc::http::StatusCode;
use serde_json::{Value, json};

use crate::common::{NOW, entry, new_key, new_workspace, start};

fn step(message: &str, flow: &str, step: Option<u16>, timestamp: i64) -> Value {
    let mut e = entry(message);
    e["flowId"] = json!(flow);
    e["timestamp"] = json!(timestamp);
    if let Some(step) = step {
        e["stepIndex"] = json!(step);
    }
    e
}

fn flow_ids(reply: &crate::common::Reply) -> Vec<String> {
    reply.body["flows"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|flow| flow["flowId"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[actix_web::test]
async fn a_created_flow_is_listed_before_its_logs_then_filled_by_them() {
    let server = start().await;
    server.set_now(NOW);
    let reply = server.post_json("/v1/flows", &json!({"name": "Checkout <b>"})).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    let flow_id = reply.body["flowId"].as_str().expect("flowId").to_owned();
    assert_eq!(reply.body, json!({"flowId": flow_id, "name": "Checkout <b>", "createdAt": NOW}));
    assert_eq!(flow_id.len(), 36, "a UUID");
    let unnamed = server.post("/v1/flows", "application/json", Vec::new()).await;
    assert_eq!(unnamed.status, StatusCode::CREATED, "an empty body is {{}}");
    assert!(unnamed.body.get("name").is_none(), "no name, no field: {}", unnamed.body);

    let listed = server.get("/v1/flows").await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    let created = listed.body["flows"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|flow| flow["flowId"] == json!(flow_id))
        .cloned()
        .expect("the created flow is listed");
    assert_eq!(
        created,
        json!({"flowId": flow_id, "name": "Checkout <b>", "steps": 0, "logs": 0, "firstTimestamp": NOW,
            "lastTimestamp": NOW, "durationMs": 0, "sources": [],
            "levels": {"debug": 0, "info": 0, "warn": 0, "error": 0, "total": 0}})
    );

    server.ingest(vec![step("cart", &flow_id, Some(0), NOW + 10), step("paid", &flow_id, Some(1), NOW + 70)]).await;
    let timeline = server.get(&format!("/v1/flows/{flow_id}")).await;
    assert_eq!(timeline.status, StatusCode::OK, "{}", timeline.body);
    assert_eq!(timeline.body["flow"]["name"], json!("Checkout <b>"));
    assert_eq!((&timeline.body["flow"]["logs"], &timeline.body["flow"]["durationMs"]), (&json!(2), &json!(60)));
    server.stop().await;
}

#[actix_web::test]
async fn the_list_sums_each_flow_orders_by_last_activity_and_filters() {
    let server = start().await;
    let mut failed = step("declined", "order-1", Some(1), NOW + 20);
    failed["level"] = json!("error");
    failed["source"] = json!("payments");
    let mut staged = step("staged", "order-2", Some(0), NOW + 5);
    staged["environment"] = json!("staging");
    server
        .ingest(vec![
            step("cart", "order-1", Some(0), NOW),
            failed,
            staged,
            step("late", "order-3", None, NOW + 30),
            entry("no flow at all"),
        ])
        .await;

    let reply = server.get("/v1/flows").await;
    assert_eq!(flow_ids(&reply), ["order-3", "order-1", "order-2"], "newest last activity first");
    assert_eq!(reply.body["pagination"], json!({"limit": 50, "offset": 0, "count": 3, "hasMore": false}));
    assert_eq!(
        reply.body["flows"][1],
        json!({"flowId": "order-1", "steps": 2, "logs": 2, "firstTimestamp": NOW, "lastTimestamp": NOW + 20,
            "durationMs": 20, "sources": ["api", "payments"],
            "levels": {"debug": 0, "info": 1, "warn": 0, "error": 1, "total": 2}})
    );

    let page = server.get("/v1/flows?limit=1&offset=1").await;
    assert_eq!(flow_ids(&page), ["order-1"]);
    assert_eq!(page.body["pagination"], json!({"limit": 1, "offset": 1, "count": 1, "hasMore": true}));
    assert_eq!(flow_ids(&server.get("/v1/flows?hasErrors=true").await), ["order-1"]);
    assert_eq!(flow_ids(&server.get("/v1/flows?hasErrors=false").await).len(), 3);
    let payments = server.get("/v1/flows?source=payments").await;
    assert_eq!(flow_ids(&payments), ["order-1"]);
    assert_eq!(payments.body["flows"][0]["logs"], json!(2), "the summary stays the whole flow's");
    assert_eq!(flow_ids(&server.get("/v1/flows?environment=staging").await), ["order-2"]);
    let window = server.get(&format!("/v1/flows?from={}&to={}", NOW + 5, NOW + 20)).await;
    assert_eq!(flow_ids(&window), ["order-1", "order-2"], "from and to are inclusive, on last activity");
    let clamped = server.get("/v1/flows?limit=100000").await;
    assert_eq!(clamped.body["pagination"]["limit"], json!(500));

    for (query, issue) in [
        ("hasErrors=yes", r#"["hasErrors"] Expected 'true' or 'false', received 'yes'"#),
        (
            "environment=prod",
            r#"["environment"] Invalid enum value. Expected 'development' | 'staging' | 'production', received 'prod'"#,
        ),
        ("limit=0", r#"["limit"] Number must be greater than or equal to 1"#),
        ("offset=99990&limit=20", r#"["offset"] Offset too large: narrow the time range with from/to"#),
        ("from=x", r#"["from"] Expected number, received 'x'"#),
    ] {
        let reply = server.get(&format!("/v1/flows?{query}")).await;
        assert_eq!((reply.status, reply.error()), (StatusCode::BAD_REQUEST, "Validation error"), "{query}");
        assert_eq!(reply.issues(), [issue], "{query}");
    }
    server.stop().await;
}

#[actix_web::test]
async fn a_timeline_orders_steps_marks_gaps_and_duplicates_and_truncates() {
    let server = start().await;
    server
        .ingest(vec![
            step("step 3", "f", Some(3), NOW),
            step("no step", "f", None, NOW - 50),
            step("step 1 again", "f", Some(1), NOW + 40),
            step("step 1", "f", Some(1), NOW + 30),
            step("step 0", "f", Some(0), NOW + 90),
        ])
        .await;
    let reply = server.get("/v1/flows/f").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.messages(), ["step 0", "step 1", "step 1 again", "step 3", "no step"]);
    assert_eq!(
        (&reply.body["flow"]["missingSteps"], &reply.body["flow"]["duplicateSteps"], &reply.body["flow"]["steps"]),
        (&json!([2]), &json!([1]), &json!(3))
    );
    assert!(reply.body.get("truncated").is_none(), "no truncated field when whole: {}", reply.body);
    assert_eq!(reply.body["logs"][0]["stepIndex"], json!(0));

    // 2,001 logs: 2,000 shown and `truncated`.
    for part in 0..21 {
        let batch: Vec<Value> = (0..100)
            .map(|n| part * 100 + n)
            .filter(|index| *index <= 2_000)
            .map(|index| step(&format!("long {index}"), "long", Some((index % 1_000) as u16), NOW + index as i64))
            .collect();
        if !batch.is_empty() {
            server.ingest(batch).await;
        }
    }
    let reply = server.get("/v1/flows/long").await;
    assert_eq!(reply.body["logs"].as_array().map(Vec::len), Some(2_000));
    assert_eq!((&reply.body["truncated"], &reply.body["flow"]["logs"]), (&json!(true), &json!(2_001)));

    // Any text is a flow id; the path carries it percent-encoded.
    server.ingest(vec![step("odd", "a b/é", Some(0), NOW)]).await;
    let reply = server.get("/v1/flows/a%20b%2F%C3%A9").await;
    assert_eq!((reply.status, reply.messages()), (StatusCode::OK, vec!["odd".to_owned()]), "{}", reply.body);

    for path in ["/v1/flows/nobody", &format!("/v1/flows/{}", "x".repeat(101))] {
        let reply = server.get(path).await;
        assert_eq!((reply.status, reply.body.clone()), (StatusCode::NOT_FOUND, json!({"error": "Flow not found"})));
    }
    server.stop().await;
}

#[actix_web::test]
async fn creating_refuses_a_bad_body_and_needs_the_ingest_scope() {
    let server = start().await;
    for (body, issue) in [
        (json!({"name": "x".repeat(101)}), r#"["name"] String must contain at most 100 character(s)"#),
        (json!({"name": 7}), r#"["name"] Expected string, received number"#),
        (json!({"name": ""}), r#"["name"] String must contain at least 1 character(s)"#),
        (json!(["name"]), "[] Expected object, received array"),
    ] {
        let reply = server.post_json("/v1/flows", &body).await;
        assert_eq!((reply.status, reply.error()), (StatusCode::BAD_REQUEST, "Validation error"), "{body}");
        assert_eq!(reply.issues(), [issue], "{body}");
    }
    let reply = server.post("/v1/flows", "application/json", b"{not json".to_vec()).await;
    assert_eq!((reply.status, &reply.body["code"]), (StatusCode::BAD_REQUEST, &json!("PARSE_ERROR")));
    let reply = server.post("/v1/flows", "application/json", vec![b' '; 64 * 1024]).await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE);

    let (read_only, _) =
        new_key(&server.store, server.workspace.id, sluice_model::Scopes { ingest: false, read: true }, None).await;
    let reply = server
        .request(
            "POST",
            "/v1/flows",
            &[("X-API-Key", &read_only), ("Content-Type", "application/json")],
            b"{}".to_vec(),
        )
        .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    assert!(flow_ids(&server.get("/v1/flows").await).is_empty(), "nothing refused was stored");
    server.stop().await;
}

#[actix_web::test]
async fn another_workspace_never_sees_a_flow() {
    let server = start().await;
    server.ingest(vec![step("mine", "shared-name", Some(0), NOW)]).await;
    let other = new_workspace(&server.store, "other").await;
    let (key, _) = new_key(&server.store, other.id, sluice_model::Scopes::ALL, None).await;
    let auth = [("X-API-Key", key.as_str())];
    let reply = server.request("GET", "/v1/flows/shared-name", &auth, Vec::new()).await;
    assert_eq!((reply.status, reply.error()), (StatusCode::NOT_FOUND, "Flow not found"));
    let reply = server.request("GET", "/v1/flows", &auth, Vec::new()).await;
    assert_eq!((reply.status, flow_ids(&reply).len()), (StatusCode::OK, 0));
    server.stop().await;
}
