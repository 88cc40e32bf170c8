//! `sluice-client`'s typed calls against the real server, one after the other as a program
//! embedding the crate would make them: every route's answer decodes into its type, batches
//! of 100 are sent whole, the tail streams a log, and refusals come back as `Error::Refused`.

use futures_util::StreamExt;
use serde_json::json;
use sluice_client::{Client, Error, KeyRequest, TailEvent};
use sluice_model::Role;

use crate::common::{new_user, start};

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
