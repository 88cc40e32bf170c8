//! Accounts over HTTP (docs/API.md, Accounts): sign-in and its throttle, the cookie and the
//! cross-site rule, sessions beside keys on the log routes, each role against each management
//! route, the last owner, a user without a workspace, sessions listed, revoked and expired, on
//! one node and on two.

use awc::http::StatusCode;
use serde_json::{Value, json};
use sluice_model::{Role, SESSION_IDLE_MS};

use crate::common::{NOW, PASSWORD, TestServer, entry, new_user, new_workspace, session_cookie, start, start_over};

fn login_body(email: &str, password: &str) -> Vec<u8> {
    json!({"email": email, "password": password}).to_string().into_bytes()
}

async fn login(server: &TestServer, email: &str, password: &str) -> crate::common::Reply {
    let headers = [("Content-Type", "application/json")];
    server.request("POST", "/v1/auth/login", &headers, login_body(email, password)).await
}

#[actix_web::test]
async fn sign_in_sets_the_cookie_and_refuses_a_wrong_email_or_password_alike() {
    let server = start().await;
    server.set_now(NOW);
    new_user(&server.store, "Ada@Example.com", false, &[(server.workspace.id, Role::Owner)]).await;
    let reply = login(&server, "ada@example.COM", PASSWORD).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.body["user"]["email"], "Ada@Example.com");
    assert_eq!(reply.body["user"]["admin"], false);
    assert_eq!(
        reply.body["workspaces"],
        json!([{"workspaceId": server.workspace.id.to_string(), "name": "main", "role": "owner"}])
    );
    let cookie = reply.headers.get("set-cookie").and_then(|value| value.to_str().ok()).unwrap_or_default().to_owned();
    for part in ["HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(cookie.contains(part), "{cookie}");
    }
    assert!(!cookie.contains("Secure"), "plain HTTP from an untrusted peer: {cookie}");
    let token = session_cookie(&reply.headers).expect("cookie");
    assert!(token.starts_with("slc_sess_") && token.len() == 41, "{token}");

    for (email, password) in [("ada@example.com", "wrong password"), ("nobody@example.com", PASSWORD)] {
        let reply = login(&server, email, password).await;
        assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
        assert_eq!(reply.body, json!({"error": "Invalid email or password"}));
        assert!(session_cookie(&reply.headers).is_none());
    }
    let reply = login(&server, "", "").await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.error(), "Validation error");

    // The cookie and the bearer token are one session.
    let cookie_header = format!("sluice_session={token}");
    let me = server.request("GET", "/v1/me", &[("Cookie", &cookie_header)], Vec::new()).await;
    assert_eq!(me.status, StatusCode::OK, "{}", me.body);
    assert_eq!(me.body["user"]["email"], "Ada@Example.com");
    assert_eq!(server.as_user(&token, "GET", "/v1/me", None).await.body, me.body);
    server.stop().await;
}

#[actix_web::test]
async fn the_eleventh_failed_sign_in_waits_fifteen_minutes() {
    let server = start().await;
    server.set_now(NOW);
    new_user(&server.store, "ada@example.com", false, &[]).await;
    for _ in 0..10 {
        assert_eq!(login(&server, "ada@example.com", "wrong").await.status, StatusCode::UNAUTHORIZED);
    }
    // Refused before the password is checked, the right one included.
    let reply = login(&server, "ADA@example.com", PASSWORD).await;
    assert_eq!(reply.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(reply.body, json!({"error": "Too many sign-in attempts", "retryAfter": 900}));
    assert_eq!(reply.headers.get("retry-after").and_then(|value| value.to_str().ok()), Some("900"));
    // Another email is not held back.
    assert_eq!(login(&server, "bob@example.com", "wrong").await.status, StatusCode::UNAUTHORIZED);
    server.set_now(NOW + 15 * 60 * 1000);
    assert_eq!(login(&server, "ada@example.com", PASSWORD).await.status, StatusCode::OK);
    server.stop().await;
}

#[actix_web::test]
async fn a_cookie_alone_changes_nothing_without_proof_it_comes_from_this_site() {
    let server = start().await;
    new_user(&server.store, "ada@example.com", false, &[(server.workspace.id, Role::Member)]).await;
    let token = server.sign_in("ada@example.com").await;
    let cookie = format!("sluice_session={token}");
    let host = server.base.trim_start_matches("http://").to_owned();
    let body = || json!({"logs": [entry("by cookie")]}).to_string().into_bytes();
    let post = |extra: Vec<(&'static str, String)>| {
        let mut headers = vec![("Cookie", cookie.clone()), ("Content-Type", "application/json".to_owned())];
        headers.extend(extra);
        let server = &server;
        async move {
            let headers: Vec<(&str, &str)> = headers.iter().map(|(name, value)| (*name, value.as_str())).collect();
            server.request("POST", "/v1/logs", &headers, body()).await
        }
    };
    let refused = post(vec![]).await;
    assert_eq!((refused.status, refused.error()), (StatusCode::FORBIDDEN, "Cross-site request refused"));
    let elsewhere = post(vec![("Origin", "https://evil.example".into())]).await;
    assert_eq!(elsewhere.status, StatusCode::FORBIDDEN);
    assert_eq!(post(vec![("X-Requested-With", "sluice".into())]).await.status, StatusCode::OK);
    assert_eq!(post(vec![("Origin", format!("http://{host}"))]).await.status, StatusCode::OK);
    // Reading needs no proof; a bearer token is no cookie and needs none either.
    let read = server.request("GET", "/v1/logs", &[("Cookie", &cookie)], Vec::new()).await;
    assert_eq!(read.status, StatusCode::OK);
    assert_eq!(read.body["logs"].as_array().map(Vec::len), Some(2));
    let bearer = server.as_user(&token, "POST", "/v1/logs", Some(json!({"logs": [entry("by bearer")]}))).await;
    assert_eq!(bearer.status, StatusCode::OK, "{}", bearer.body);
    // Nothing refused was stored.
    let listed = server.get("/v1/logs").await;
    let messages: Vec<&str> =
        listed.body["logs"].as_array().into_iter().flatten().filter_map(|log| log["message"].as_str()).collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    server.stop().await;
}

/// Each role against the log routes and each management route: the status docs/API.md gives.
#[actix_web::test]
async fn each_role_may_do_what_its_role_allows_and_nothing_more() {
    let server = start().await;
    let workspace = server.workspace.id;
    let owner = new_user(&server.store, "owner@example.com", false, &[(workspace, Role::Owner)]).await;
    new_user(&server.store, "member@example.com", false, &[(workspace, Role::Member)]).await;
    new_user(&server.store, "viewer@example.com", false, &[(workspace, Role::Viewer)]).await;
    new_user(&server.store, "other@example.com", false, &[]).await;
    let tokens = [
        (Role::Owner, server.sign_in("owner@example.com").await),
        (Role::Member, server.sign_in("member@example.com").await),
        (Role::Viewer, server.sign_in("viewer@example.com").await),
    ];
    let owner_id = owner.id.to_string();
    for (role, token) in &tokens {
        let allowed = |needed: Role| if *role >= needed { "allowed" } else { "refused" };
        let checks: Vec<(&str, String, Option<Value>, Role)> = vec![
            ("GET", "/v1/logs".into(), None, Role::Viewer),
            ("GET", "/v1/stats/summary".into(), None, Role::Viewer),
            ("POST", "/v1/logs".into(), Some(json!({"logs": [entry("from a session")]})), Role::Member),
            ("POST", "/v1/flows".into(), Some(json!({"name": "checkout"})), Role::Member),
            ("GET", "/v1/members".into(), None, Role::Viewer),
            ("GET", "/v1/workspace".into(), None, Role::Viewer),
            ("GET", "/v1/keys".into(), None, Role::Member),
            ("POST", "/v1/keys".into(), Some(json!({"name": "ci", "scopes": ["ingest"]})), Role::Member),
            ("POST", "/v1/members".into(), Some(json!({"email": "other@example.com", "role": "viewer"})), Role::Owner),
            ("PATCH", format!("/v1/members/{owner_id}"), Some(json!({"role": "owner"})), Role::Owner),
        ];
        for (method, path, body, needed) in checks {
            let reply = server.as_user(token, method, &path, body).await;
            let outcome = if reply.status.is_success() { "allowed" } else { "refused" };
            assert_eq!(outcome, allowed(needed), "{role:?} {method} {path}: {} {}", reply.status, reply.body);
            if outcome == "refused" {
                assert_eq!((reply.status, reply.error()), (StatusCode::FORBIDDEN, "Your role does not allow this"));
            }
            if method == "POST" && path == "/v1/members" && reply.status.is_success() {
                let id = reply.body["userId"].as_str().unwrap_or_default().to_owned();
                let removed = server.as_user(token, "DELETE", &format!("/v1/members/{id}"), None).await;
                assert_eq!(removed.status, StatusCode::NO_CONTENT);
            }
        }
        // Revoking a key needs `member`; removing a member needs `owner`.
        let (_, key_id) = crate::common::new_key(&server.store, workspace, sluice_model::Scopes::ALL, None).await;
        let revoke = server.as_user(token, "DELETE", &format!("/v1/keys/{key_id}"), None).await;
        assert_eq!(revoke.status.is_success(), *role >= Role::Member, "{role:?} revoking a key: {}", revoke.status);
        let extra =
            new_user(&server.store, &format!("extra-{role:?}@example.com"), false, &[(workspace, Role::Viewer)]).await;
        let remove = server.as_user(token, "DELETE", &format!("/v1/members/{}", extra.id), None).await;
        assert_eq!(remove.status.is_success(), *role == Role::Owner, "{role:?} removing a member: {}", remove.status);
        for refused in [&revoke, &remove].into_iter().filter(|reply| !reply.status.is_success()) {
            assert_eq!((refused.status, refused.error()), (StatusCode::FORBIDDEN, "Your role does not allow this"));
        }
        // Every role sees its own sessions and workspaces.
        for path in ["/v1/sessions", "/v1/workspaces", "/v1/me"] {
            assert_eq!(server.as_user(token, "GET", path, None).await.status, StatusCode::OK, "{role:?} {path}");
        }
        // Plans are for instance admins only, whatever the role.
        let plan = server.as_user(token, "PUT", "/v1/workspace/plan", Some(json!({"plan": "pro"}))).await;
        assert_eq!((plan.status, plan.error()), (StatusCode::FORBIDDEN, "Your role does not allow this"));
    }
    // The management routes take no API key.
    for (method, path) in [("GET", "/v1/me"), ("GET", "/v1/keys"), ("POST", "/v1/workspaces")] {
        let auth = format!("Bearer {}", server.key);
        let reply = server.request(method, path, &[("Authorization", &auth)], Vec::new()).await;
        assert_eq!((reply.status, reply.error()), (StatusCode::FORBIDDEN, "This endpoint needs a signed-in user"));
    }
    let missing = server.request("GET", "/v1/me", &[], Vec::new()).await;
    assert_eq!((missing.status, missing.error()), (StatusCode::UNAUTHORIZED, "Missing session"));
    let bogus = server.as_user("slc_sess_nope", "GET", "/v1/me", None).await;
    assert_eq!((bogus.status, bogus.error()), (StatusCode::UNAUTHORIZED, "Invalid session"));
    server.stop().await;
}

#[actix_web::test]
async fn an_instance_admin_sets_plans_and_a_workspace_keeps_its_last_owner() {
    let server = start().await;
    let workspace = server.workspace.id;
    let admin = new_user(&server.store, "root@example.com", true, &[(workspace, Role::Owner)]).await;
    let second = new_user(&server.store, "second@example.com", false, &[(workspace, Role::Member)]).await;
    let token = server.sign_in("root@example.com").await;
    let plan =
        server.as_user(&token, "PUT", "/v1/workspace/plan", Some(json!({"plan": "pro", "retentionDays": 45}))).await;
    assert_eq!(plan.status, StatusCode::OK, "{}", plan.body);
    let shown = server.as_user(&token, "GET", "/v1/workspace", None).await;
    assert_eq!((shown.body["plan"].clone(), shown.body["limits"]["retentionDays"].clone()), (json!("pro"), json!(45)));
    assert_eq!(shown.body["limits"]["requestsPerMinute"], 600);

    let admin_path = format!("/v1/members/{}", admin.id);
    for (method, body) in [("PATCH", Some(json!({"role": "member"}))), ("DELETE", None)] {
        let reply = server.as_user(&token, method, &admin_path, body).await;
        assert_eq!((reply.status, reply.error()), (StatusCode::CONFLICT, "A workspace needs an owner"));
    }
    let promote =
        server.as_user(&token, "PATCH", &format!("/v1/members/{}", second.id), Some(json!({"role": "owner"}))).await;
    assert_eq!(promote.status, StatusCode::OK, "{}", promote.body);
    let leave = server.as_user(&token, "DELETE", &admin_path, None).await;
    assert_eq!(leave.status, StatusCode::NO_CONTENT);
    // Gone at once on this node: the admin now has no workspace.
    let logs = server.as_user(&token, "GET", "/v1/logs", None).await;
    assert_eq!((logs.status, logs.error()), (StatusCode::FORBIDDEN, "User has no workspace"));
    let me = server.as_user(&token, "GET", "/v1/me", None).await;
    assert_eq!(me.body["workspaces"], json!([]));
    let unknown = server.as_user(&token, "POST", "/v1/workspaces", Some(json!({"name": ""}))).await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    let made = server.as_user(&token, "POST", "/v1/workspaces", Some(json!({"name": "Alpha"}))).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    assert_eq!((made.body["name"].clone(), made.body["role"].clone()), (json!("Alpha"), json!("owner")));
    let listed = server.as_user(&token, "GET", "/v1/workspaces", None).await;
    assert_eq!(listed.body["workspaces"].as_array().map(Vec::len), Some(1));
    server.stop().await;
}

#[actix_web::test]
async fn a_session_targets_its_workspaces_by_header_and_else_the_first_by_name() {
    let server = start().await;
    let zulu = new_workspace(&server.store, "zulu").await;
    let alpha = new_workspace(&server.store, "alpha").await;
    let stranger = new_workspace(&server.store, "stranger").await;
    new_user(&server.store, "ada@example.com", false, &[(zulu.id, Role::Owner), (alpha.id, Role::Viewer)]).await;
    let token = server.sign_in("ada@example.com").await;
    let shown = server.as_user(&token, "GET", "/v1/workspace", None).await;
    assert_eq!((shown.body["name"].clone(), shown.body["role"].clone()), (json!("alpha"), json!("viewer")));
    let auth = format!("Bearer {token}");
    let aimed = |target: String| {
        let auth = auth.clone();
        let server = &server;
        async move {
            server
                .request("GET", "/v1/workspace", &[("Authorization", &auth), ("X-Workspace-Id", &target)], Vec::new())
                .await
        }
    };
    assert_eq!(aimed(zulu.id.to_string()).await.body["role"], "owner");
    let denied = aimed(stranger.id.to_string()).await;
    assert_eq!((denied.status, denied.error()), (StatusCode::FORBIDDEN, "Access denied to workspace"));
    let missing = aimed(sluice_model::WorkspaceId::generate().to_string()).await;
    assert_eq!((missing.status, missing.error()), (StatusCode::NOT_FOUND, "Workspace not found"));
    server.stop().await;
}

#[actix_web::test]
async fn keys_are_made_listed_and_revoked_through_the_api() {
    let server = start().await;
    let other = new_workspace(&server.store, "other").await;
    new_user(&server.store, "ada@example.com", false, &[(server.workspace.id, Role::Member), (other.id, Role::Member)])
        .await;
    let token = server.sign_in("ada@example.com").await;
    let made = server
        .as_user(
            &token,
            "POST",
            "/v1/keys",
            Some(json!({"name": "ci", "env": "test", "scopes": "ingest", "expiresIn": 3600})),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let key = made.body["apiKey"].as_str().unwrap_or_default().to_owned();
    assert!(key.starts_with("slc_test_"), "{key}");
    assert_eq!(made.body["scopes"], json!(["ingest"]));
    assert_eq!(made.body["workspaceId"], json!(server.workspace.id.to_string()));
    let key_id = made.body["keyId"].as_str().unwrap_or_default().to_owned();
    let bad = server
        .as_user(&token, "POST", "/v1/keys", Some(json!({"env": "prod", "scopes": ["write"], "expiresIn": -1})))
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad.issues().len(), 3, "{}", bad.body);

    let posted = server
        .request(
            "POST",
            "/v1/logs",
            &[("X-API-Key", &key), ("Content-Type", "application/json")],
            entry("via key").to_string().into_bytes(),
        )
        .await;
    assert_eq!(posted.status, StatusCode::OK, "{}", posted.body);
    let listed = server.as_user(&token, "GET", "/v1/keys", None).await;
    let ours: Vec<&Value> =
        listed.body["keys"].as_array().into_iter().flatten().filter(|k| k["keyId"] == key_id.as_str()).collect();
    assert_eq!(ours.len(), 1);
    assert_eq!(ours[0]["state"], "active");
    assert!(ours[0].get("apiKey").is_none() && !listed.body.to_string().contains(&key), "never the key's text");

    // Another workspace's key is not found from this one.
    let foreign = server.as_user(&token, "DELETE", &format!("/v1/keys/{}", server_key_id(&server).await), None).await;
    assert_eq!(foreign.status, StatusCode::OK, "the main key is this workspace's");
    let auth = format!("Bearer {token}");
    let elsewhere = server
        .request(
            "DELETE",
            &format!("/v1/keys/{key_id}"),
            &[("Authorization", &auth), ("X-Workspace-Id", &other.id.to_string())],
            Vec::new(),
        )
        .await;
    assert_eq!((elsewhere.status, elsewhere.error()), (StatusCode::NOT_FOUND, "Key not found"));
    let revoked = server.as_user(&token, "DELETE", &format!("/v1/keys/{key_id}"), None).await;
    assert_eq!(revoked.body, json!({"keyId": key_id, "state": "revoked"}));
    // Refused at once on this node.
    let after = server
        .request(
            "POST",
            "/v1/logs",
            &[("X-API-Key", &key), ("Content-Type", "application/json")],
            entry("late").to_string().into_bytes(),
        )
        .await;
    assert_eq!((after.status, after.error()), (StatusCode::UNAUTHORIZED, "API key has been revoked"));
    server.stop().await;
}

/// The id of the test server's own key.
async fn server_key_id(server: &TestServer) -> String {
    let keys = server.store.list_keys(server.workspace.id).await.expect("keys");
    keys.first().map(|key| key.id.to_string()).unwrap_or_default()
}

#[actix_web::test]
async fn sessions_are_listed_revoked_at_once_and_expire_after_thirty_idle_days() {
    let server = start().await;
    server.set_now(NOW);
    new_user(&server.store, "ada@example.com", false, &[(server.workspace.id, Role::Viewer)]).await;
    let first = server.sign_in("ada@example.com").await;
    let second = server.sign_in("ada@example.com").await;
    let listed = server.as_user(&first, "GET", "/v1/sessions", None).await;
    let sessions = listed.body["sessions"].as_array().cloned().unwrap_or_default();
    assert_eq!(sessions.len(), 2, "{}", listed.body);
    let current: Vec<bool> = sessions.iter().map(|session| session["current"] == true).collect();
    assert_eq!(current.iter().filter(|current| **current).count(), 1);
    let second_id = sessions
        .iter()
        .find(|session| session["current"] == false)
        .map(|session| session["sessionId"].clone())
        .unwrap_or_default();
    let second_id = second_id.as_str().unwrap_or_default().to_owned();
    assert_eq!(server.as_user(&second, "GET", "/v1/logs", None).await.status, StatusCode::OK);
    let revoked = server.as_user(&first, "DELETE", &format!("/v1/sessions/{second_id}"), None).await;
    assert_eq!(revoked.status, StatusCode::NO_CONTENT);
    let refused = server.as_user(&second, "GET", "/v1/logs", None).await;
    assert_eq!((refused.status, refused.error()), (StatusCode::UNAUTHORIZED, "Invalid session"));
    let again = server.as_user(&first, "DELETE", &format!("/v1/sessions/{second_id}"), None).await;
    assert_eq!(again.status, StatusCode::NO_CONTENT, "a second revoke is no error");
    let unknown = server.as_user(&first, "DELETE", "/v1/sessions/not-an-id", None).await;
    assert_eq!((unknown.status, unknown.error()), (StatusCode::NOT_FOUND, "Session not found"));

    // Used within 30 days it lives on; 30 idle days end it.
    server.set_now(NOW + SESSION_IDLE_MS - 1);
    assert_eq!(server.as_user(&first, "GET", "/v1/me", None).await.status, StatusCode::OK);
    server.set_now(NOW + 2 * SESSION_IDLE_MS - 2);
    assert_eq!(server.as_user(&first, "GET", "/v1/me", None).await.status, StatusCode::OK);
    server.set_now(NOW + 3 * SESSION_IDLE_MS);
    let expired = server.as_user(&first, "GET", "/v1/me", None).await;
    assert_eq!((expired.status, expired.error()), (StatusCode::UNAUTHORIZED, "Session has expired"));

    // Signing out ends the session and clears the cookie.
    server.set_now(NOW);
    let third = server.sign_in("ada@example.com").await;
    let out = server
        .request(
            "POST",
            "/v1/auth/logout",
            &[("Cookie", &format!("sluice_session={third}")), ("X-Requested-With", "sluice")],
            Vec::new(),
        )
        .await;
    assert_eq!(out.status, StatusCode::NO_CONTENT);
    assert_eq!(session_cookie(&out.headers).as_deref(), Some(""));
    assert_eq!(server.as_user(&third, "GET", "/v1/me", None).await.status, StatusCode::UNAUTHORIZED);
    server.stop().await;
}

/// DECISIONS: a revoked session stops working on every node within 5 s, like a key.
#[actix_web::test]
async fn a_session_revoked_on_one_node_is_refused_on_another_within_five_seconds() {
    let first = start().await;
    let second = start_over(first.store.clone()).await;
    for server in [&first, &second] {
        server.set_now(NOW);
    }
    new_user(&first.store, "ada@example.com", false, &[(first.workspace.id, Role::Viewer)]).await;
    let token = first.sign_in("ada@example.com").await;
    let other = first.sign_in("ada@example.com").await;
    // The second node has the session cached.
    assert_eq!(second.as_user(&token, "GET", "/v1/logs", None).await.status, StatusCode::OK);
    let id = first.as_user(&token, "GET", "/v1/sessions", None).await.body["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|session| session["current"] == true)
        .map(|session| session["sessionId"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default();
    assert_eq!(
        first.as_user(&other, "DELETE", &format!("/v1/sessions/{id}"), None).await.status,
        StatusCode::NO_CONTENT
    );
    second.set_now(NOW + 5_000);
    let refused = second.as_user(&token, "GET", "/v1/logs", None).await;
    assert_eq!((refused.status, refused.error()), (StatusCode::UNAUTHORIZED, "Invalid session"));
    second.stop().await;
    first.stop().await;
}
