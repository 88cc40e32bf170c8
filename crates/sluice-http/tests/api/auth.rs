//! Every authentication outcome of docs/API.md (Authentication), with its status and exact message.

use awc::http::StatusCode;
use sluice_model::Scopes;

use crate::common::{NOW, entry, new_key, new_workspace, start};

/// Method, headers, expected status, expected message.
type Case<'a> = (&'a str, Vec<(&'a str, String)>, StatusCode, &'a str);

#[actix_web::test]
async fn each_auth_failure_has_its_status_and_message() {
    let server = start().await;
    let (revoked, revoked_id) = new_key(&server.store, server.workspace.id, Scopes::ALL, None).await;
    server.store.revoke_key(revoked_id, NOW).await.expect("revoke");
    let (expired, _) = new_key(&server.store, server.workspace.id, Scopes::ALL, Some(NOW)).await;
    let (read_only, _) = new_key(&server.store, server.workspace.id, Scopes { ingest: false, read: true }, None).await;
    let (ingest_only, _) =
        new_key(&server.store, server.workspace.id, Scopes { ingest: true, read: false }, None).await;
    let other = new_workspace(&server.store, "other").await;
    let unknown = sluice_auth::generate_key(sluice_model::KeyEnv::Live).expect("csprng").text;
    let body = entry("x").to_string().into_bytes();
    let bearer = |key: &str| format!("Bearer {key}");

    let cases: Vec<Case> = vec![
        ("GET", vec![], StatusCode::UNAUTHORIZED, "Missing API key"),
        ("POST", vec![], StatusCode::UNAUTHORIZED, "Missing API key"),
        ("GET", vec![("Authorization", "Bearer ".into())], StatusCode::UNAUTHORIZED, "Missing API key"),
        ("GET", vec![("Authorization", bearer("slc_live_short"))], StatusCode::UNAUTHORIZED, "Invalid API key"),
        ("GET", vec![("X-API-Key", "not-a-key".into())], StatusCode::UNAUTHORIZED, "Invalid API key"),
        ("GET", vec![("Authorization", bearer(&unknown))], StatusCode::UNAUTHORIZED, "Invalid API key"),
        ("GET", vec![("Authorization", bearer(&revoked))], StatusCode::UNAUTHORIZED, "API key has been revoked"),
        ("POST", vec![("X-API-Key", revoked.clone())], StatusCode::UNAUTHORIZED, "API key has been revoked"),
        ("GET", vec![("Authorization", bearer(&expired))], StatusCode::UNAUTHORIZED, "API key has expired"),
        (
            "GET",
            vec![("Authorization", bearer(&server.key)), ("X-Workspace-Id", other.id.to_string())],
            StatusCode::FORBIDDEN,
            "Access denied to workspace",
        ),
        (
            "GET",
            vec![
                ("Authorization", bearer(&server.key)),
                ("X-Workspace-Id", sluice_model::WorkspaceId::generate().to_string()),
            ],
            StatusCode::NOT_FOUND,
            "Workspace not found",
        ),
        (
            "GET",
            vec![("Authorization", bearer(&server.key)), ("X-Workspace-Id", "ws_nonsense".into())],
            StatusCode::NOT_FOUND,
            "Workspace not found",
        ),
        ("POST", vec![("Authorization", bearer(&read_only))], StatusCode::FORBIDDEN, "API key lacks the ingest scope"),
        ("GET", vec![("Authorization", bearer(&ingest_only))], StatusCode::FORBIDDEN, "API key lacks the read scope"),
        // Authentication comes first: an unknown key targeting another workspace is a 401.
        (
            "GET",
            vec![("Authorization", bearer(&unknown)), ("X-Workspace-Id", other.id.to_string())],
            StatusCode::UNAUTHORIZED,
            "Invalid API key",
        ),
    ];
    for (method, headers, status, message) in cases {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(name, value)| (*name, value.as_str())).collect();
        let path = "/v1/logs";
        let reply =
            server.request(method, path, &headers, if method == "POST" { body.clone() } else { Vec::new() }).await;
        assert_eq!((reply.status, reply.error()), (status, message), "{method} with {headers:?}");
        assert_eq!(reply.body.as_object().map(|o| o.len()), Some(1), "only `error`: {}", reply.body);
    }

    // The get endpoint authenticates the same way, before it looks for the log.
    let reply = server.request("GET", "/v1/logs/whatever", &[], Vec::new()).await;
    assert_eq!((reply.status, reply.error()), (StatusCode::UNAUTHORIZED, "Missing API key"));
    server.stop().await;
}

#[actix_web::test]
async fn both_key_headers_and_own_workspace_target_work() {
    let server = start().await;
    let own = server.workspace.id.to_string();
    let bearer = format!("Bearer {}", server.key);
    for headers in [
        vec![("Authorization", bearer.as_str())],
        vec![("X-API-Key", server.key.as_str())],
        vec![("Authorization", bearer.as_str()), ("X-Workspace-Id", own.as_str())],
        // An empty target is no target; a non-Bearer Authorization does not hide X-API-Key.
        vec![("Authorization", bearer.as_str()), ("X-Workspace-Id", "")],
        vec![("Authorization", "Basic dXNlcjpwYXNz"), ("X-API-Key", server.key.as_str())],
    ] {
        let reply = server.request("GET", "/v1/logs", &headers, Vec::new()).await;
        assert_eq!(reply.status, StatusCode::OK, "{headers:?}: {}", reply.body);
    }
    let (read_only, _) = new_key(&server.store, server.workspace.id, Scopes { ingest: false, read: true }, None).await;
    let reply = server.request("GET", "/v1/logs", &[("X-API-Key", &read_only)], Vec::new()).await;
    assert_eq!(reply.status, StatusCode::OK);
    server.stop().await;
}
