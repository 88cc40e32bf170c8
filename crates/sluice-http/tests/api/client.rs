//! `sluice-client`'s typed calls against the real server, one after the other as a program
//! embedding the crate would make them: every route's answer decodes into its type, batches
//! of 100 are sent whole, the tail streams a log, and refusals come back as `Error::Refused`.
//! And every JSON answer of the server, read into its `sluice-api` type (the one the client
//! reads and the server writes) and written again, is the same JSON: no field is lost, added
//! or renamed on the way.

use futures_util::StreamExt;
use serde_json::json;
use sluice_client::{Client, Error, KeyRequest, TailEvent};
use sluice_model::Role;

use crate::common::{Reply, new_user, start};

/// `reply`'s body read as a `T` and written again: the same JSON.
fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(what: &str, reply: &Reply) {
    assert!(reply.status.is_success() || reply.status.is_client_error(), "{what}: {}", reply.status);
    let typed: T = serde_json::from_value(reply.body.clone()).unwrap_or_else(|error| panic!("{what}: {error}"));
    let again = serde_json::to_value(&typed).expect("serializable");
    assert_eq!(again, reply.body, "{what}: the type and the answer disagree");
}

#[actix_web::test]
async fn every_answer_round_trips_through_its_api_type() {
    use sluice_api as api;
    let server = start().await;
    let workspace = server.workspace.id;
    new_user(&server.store, "root@example.com", true, &[(workspace, Role::Owner)]).await;
    new_user(&server.store, "dev@example.com", false, &[]).await;
    let auth = format!("Bearer {}", server.key);
    let key = |method: &'static str, path: &'static str, body: Option<serde_json::Value>| {
        let auth = auth.clone();
        let server = &server;
        async move {
            let mut headers = vec![("Authorization", auth.as_str())];
            if body.is_some() {
                headers.push(("Content-Type", "application/json"));
            }
            server
                .request(method, path, &headers, body.map(|body| body.to_string().into_bytes()).unwrap_or_default())
                .await
        }
    };
    let entries = json!({"logs": [
        {"level": "error", "message": "card declined", "source": "shop", "environment": "production",
         "flowId": "checkout-9", "stepIndex": 0, "data": {"amount": 12.5, "tags": ["a", {"b": null}]},
         "tags": ["pay"], "userId": "u-1", "errorName": "Declined", "timestamp": "2026-12-07T10:00:00Z"},
        {"level": "info", "message": "card paid", "source": "shop", "environment": "staging", "flowId": "checkout-9",
         "stepIndex": 2}
    ]});
    round_trip::<api::Ingested>("ingest", &key("POST", "/v1/logs", Some(entries)).await);
    round_trip::<api::ErrorBody>("ingest refused", &key("POST", "/v1/logs", Some(json!({"logs": [{}]}))).await);
    let page = key("GET", "/v1/logs", None).await;
    round_trip::<api::LogPage>("list", &page);
    let id = page.body["logs"][0]["id"].as_str().expect("an id").to_owned();
    let one = server.request("GET", &format!("/v1/logs/{id}"), &[("Authorization", auth.as_str())], Vec::new()).await;
    round_trip::<api::OneLog>("get", &one);
    round_trip::<api::SearchPage>("search", &key("GET", "/v1/logs/search?q=card%20-paid", None).await);
    for group in ["day", "hour", "source"] {
        let path = format!("/v1/stats?groupBy={group}");
        let stats = server.request("GET", &path, &[("Authorization", auth.as_str())], Vec::new()).await;
        round_trip::<api::Stats>(&path, &stats);
    }
    round_trip::<api::Summary>("summary", &key("GET", "/v1/stats/summary", None).await);
    round_trip::<api::FlowPage>("flows", &key("GET", "/v1/flows", None).await);
    round_trip::<api::FlowTimeline>("timeline", &key("GET", "/v1/flows/checkout-9", None).await);
    round_trip::<api::CreatedFlow>("new flow", &key("POST", "/v1/flows", Some(json!({"name": "Refund"}))).await);
    round_trip::<api::Health>("healthz", &server.get("/healthz").await);
    round_trip::<api::Health>("readyz", &server.get("/readyz").await);

    let token = server.sign_in("root@example.com").await;
    let user = |method: &'static str, path: String, body: Option<serde_json::Value>| {
        let (server, token) = (&server, token.clone());
        async move { server.as_user(&token, method, &path, body).await }
    };
    round_trip::<api::Me>("me", &user("GET", "/v1/me".into(), None).await);
    round_trip::<api::Workspaces>("workspaces", &user("GET", "/v1/workspaces".into(), None).await);
    let made = user("POST", "/v1/workspaces".into(), Some(json!({"name": "second"}))).await;
    round_trip::<api::Membership>("new workspace", &made);
    round_trip::<api::WorkspaceInfo>("workspace", &user("GET", "/v1/workspace".into(), None).await);
    let plan = user("PUT", "/v1/workspace/plan".into(), Some(json!({"plan": "enterprise"}))).await;
    round_trip::<api::PlanSet>("plan", &plan);
    let created = user("POST", "/v1/keys".into(), Some(json!({"name": "ci", "scopes": "read"}))).await;
    round_trip::<api::CreatedKey>("new key", &created);
    round_trip::<api::Keys>("keys", &user("GET", "/v1/keys".into(), None).await);
    let key_id = created.body["keyId"].as_str().expect("a key id").to_owned();
    round_trip::<api::KeyRevoked>("revoke", &user("DELETE", format!("/v1/keys/{key_id}"), None).await);
    let added = user("POST", "/v1/members".into(), Some(json!({"email": "dev@example.com", "role": "viewer"}))).await;
    round_trip::<api::Member>("new member", &added);
    let member = added.body["userId"].as_str().expect("a user id").to_owned();
    let role = user("PATCH", format!("/v1/members/{member}"), Some(json!({"role": "member"}))).await;
    round_trip::<api::MemberRole>("role", &role);
    round_trip::<api::Members>("members", &user("GET", "/v1/members".into(), None).await);
    round_trip::<api::Sessions>("sessions", &user("GET", "/v1/sessions".into(), None).await);

    let form = [("Content-Type", "application/x-www-form-urlencoded")];
    let code = server.request("POST", "/oauth/device/code", &form, b"client_id=sluice-cli".to_vec()).await;
    round_trip::<api::DeviceCode>("device code", &code);
    let poll = format!(
        "grant_type=urn:ietf:params:oauth:grant-type:device_code&client_id=sluice-cli&device_code={}",
        code.body["device_code"].as_str().expect("a device code")
    );
    round_trip::<api::TokenAnswer>("poll", &server.request("POST", "/oauth/token", &form, poll.into_bytes()).await);
    let user_code = code.body["user_code"].as_str().expect("a user code").to_owned();
    let decided = user("POST", "/v1/device/approve".into(), Some(json!({"userCode": user_code}))).await;
    round_trip::<api::Decided>("approve", &decided);
    round_trip::<api::ErrorBody>("unknown", &user("GET", "/v1/nothing".into(), None).await);
    server.stop().await;
}

#[actix_web::test]
async fn every_typed_call_decodes_what_the_server_answers() {
    let server = start().await;
    let workspace = server.workspace.id;
    new_user(&server.store, "root@example.com", true, &[(workspace, Role::Owner)]).await;
    new_user(&server.store, "dev@example.com", false, &[]).await;
    let anonymous = Client::new(&server.base).expect("client");
    let wrong = anonymous.sign_in("root@example.com", "not the password").await.expect_err("refused");
    assert_eq!((wrong.status(), wrong.to_string()), (Some(401), "Invalid email or password".to_owned()));
    let (token, me) = anonymous.sign_in("root@example.com", crate::common::PASSWORD).await.expect("signed in");
    assert_eq!(me.workspaces.len(), 1);
    let client = anonymous.with_token(token);
    client.ready().await.expect("ready");

    // 250 entries: three batches, all stored.
    let entries = (0..250).map(|n| {
        json!({"level": if n % 50 == 0 { "error" } else { "info" }, "message": format!("order-{n:03} paid"),
            "source": "shop", "environment": "production", "flowId": "checkout-1", "stepIndex": n % 5})
    });
    let mut batches = Vec::new();
    assert_eq!(client.ingest_all(entries, |count| batches.push(count)).await.expect("sent"), 250);
    assert_eq!(batches, [100, 100, 50]);
    let page = client.list(&[("limit", "10"), ("level", "error")]).await.expect("list");
    assert_eq!((page.logs.len(), page.pagination.has_more), (5, false));
    let found = client.search(&[("q", "order-042")]).await.expect("search");
    assert_eq!(found.logs.len(), 1);
    let one = client.log(&found.logs[0].id.to_string()).await.expect("get");
    assert_eq!(one.entry.message, "order-042 paid");
    let stats = client.stats(&[("groupBy", "source")]).await.expect("stats");
    assert_eq!(stats.period.group_by, "source");
    assert!(client.summary().await.expect("summary").today.total <= 250);
    let made = client.create_flow(Some("Refund")).await.expect("flow made");
    assert_eq!(made.name.as_deref(), Some("Refund"));
    let flows = client.flows(&[("limit", "5")]).await.expect("flows");
    assert!(flows.flows.iter().any(|flow| flow.flow_id == "checkout-1" && flow.logs == 250), "{flows:?}");
    let timeline = client.flow("checkout-1").await.expect("timeline");
    assert_eq!((timeline.flow.summary.steps, timeline.logs.len()), (5, 250));

    // The tail streams what is committed after it started.
    let mut tail = client.tail(&[("source", "live")], None).await.expect("tail");
    client
        .ingest(&[json!({"level": "warn", "message": "streamed", "source": "live", "environment": "staging"})])
        .await
        .expect("sent");
    match tail.next().await {
        Some(Ok(TailEvent::Log(log))) => assert_eq!(log.entry.message, "streamed"),
        other => panic!("expected the log, got {other:?}"),
    }
    drop(tail);

    // People and keys.
    let me = client.me().await.expect("me");
    assert_eq!((me.user.email.as_str(), me.user.admin), ("root@example.com", true));
    let created = client.create_workspace("zz second").await.expect("workspace made");
    assert_eq!(created.role, "owner");
    assert_eq!(client.workspaces().await.expect("workspaces").len(), 2);
    let info = client.workspace().await.expect("workspace");
    assert_eq!((info.name.as_str(), info.role.as_str()), ("main", "owner"));
    client.set_plan("pro").await.expect("plan");
    assert_eq!(client.workspace().await.expect("workspace").limits.requests_per_minute, Some(600));
    let key = client
        .create_key(&KeyRequest { name: Some("ci".into()), scopes: Some(vec!["read".into()]), ..KeyRequest::default() })
        .await
        .expect("key");
    assert!(
        client
            .keys()
            .await
            .expect("keys")
            .iter()
            .any(|listed| listed.key_id == key.key_id && listed.scopes == ["read"])
    );
    client.revoke_key(&key.key_id).await.expect("revoked");
    let member = client.add_member("dev@example.com", "viewer").await.expect("member");
    client.set_role(&member.user_id, "member").await.expect("role");
    assert!(
        client.members().await.expect("members").iter().any(|m| m.email == "dev@example.com" && m.role == "member")
    );
    client.remove_member(&member.user_id).await.expect("removed");
    let refused = client.remove_member(&member.user_id).await.expect_err("gone");
    assert!(
        matches!(&refused, Error::Refused { status: 404, message, .. } if message == "Member not found"),
        "{refused:?}"
    );

    // Device sign-in decided through the client; sessions listed and ended.
    let code = client.start_device_login().await.expect("code");
    client.decide_device_login(&code.user_code.to_lowercase(), false).await.expect("denied");
    let sessions = client.sessions().await.expect("sessions");
    assert_eq!(sessions.iter().filter(|session| session.current).count(), 1);
    client.logout().await.expect("signed out");
    let after = client.me().await.expect_err("signed out");
    assert_eq!((after.status(), after.exit_code()), (Some(401), 2));
    server.stop().await;
}
