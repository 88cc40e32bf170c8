//! Issue 25, item 7: tenant isolation route by route. Every route of the router's own table
//! (`sluice_http::ROUTES`, which `configure` registers, so a new route joins by itself) is
//! asked about workspace A with credentials that are not A's: B's keys (every scope, ingest
//! only, read only; as `Authorization` or `X-API-Key`; aimed at A with `X-Workspace-Id`), A's
//! revoked and expired keys, keys that are malformed or one character off A's, and none, with
//! A's log ids in the path and A's search token and field values in the query.
//!
//! Each answer has the status docs/API.md (Authentication) gives that credential on that
//! route (401, 403, or a 2xx for B's own workspace and the health routes), and carries nothing
//! of A's (its log ids, messages, field values, key) that the request did not itself send. The
//! same requests with A's own key do reveal A's data, so the check can see a leak; and after
//! all of it, A holds exactly its own logs and the counters of each workspace count its own.

use std::collections::BTreeSet;

use awc::http::StatusCode;
use serde_json::{Value, json};
use sluice_http::{ROUTES, Route};
use sluice_model::{Scope, Scopes};

use crate::common::{TestServer, new_key, new_workspace, start};

/// The server's clock: 2026-11-22T00:00:00Z. A's logs are stamped with it, so they are in the
/// default period of the stats and in today's summary.
const CLOCK: i64 = 1_795_305_600_000;

/// The word every message of A's holds, searched for by B; the messages themselves are longer,
/// so the search's echo of `q` is not taken for a leak.
const TOKEN: &str = "alphaledger7f3c";

/// A's logs: every field set, each value found nowhere else.
fn alpha_entries() -> Vec<Value> {
    (1..=3)
        .map(|n| {
            json!({
                "level": "error",
                "message": format!("{TOKEN} payment {n} declined at alpha-till-{n}"),
                "source": "alpha-billing",
                "environment": "production",
                "dataset": "alpha-dataset",
                "userId": format!("alpha-user-{n}"),
                "sessionId": "alpha-session",
                "flowId": "alpha-flow",
                "requestId": format!("alpha-request-{n}"),
                "errorName": "AlphaDeclinedError",
                "errorStack": format!("at alpha_checkout_{n}"),
                "tags": ["alpha-tag"],
                "stepIndex": n,
                "data": {"alphaCard": format!("alpha-card-{n}")},
            })
        })
        .collect()
}

/// What B posts: every field its own, so the query defaults naming A's values fill nothing.
fn bravo_body() -> Vec<u8> {
    json!([{
        "level": "info",
        "message": "bravo entry",
        "source": "bravo-source",
        "environment": "staging",
        "dataset": "bravo-dataset",
        "userId": "bravo-user",
        "sessionId": "bravo-session",
        "flowId": "bravo-flow",
    }])
    .to_string()
    .into_bytes()
}

/// The query every route gets: A's search token, the fields to search, a grouping by source
/// (so stats would name A's source if they counted A's logs).
const PLAIN_QUERY: &str = "q=alphaledger7f3c&fields=message,data,errorName,errorStack&groupBy=source";

/// [`PLAIN_QUERY`] and filters naming A's values.
const NAMING_QUERY: &str = "q=alphaledger7f3c&fields=message,data,errorName,errorStack&groupBy=source\
    &source=alpha-billing&dataset=alpha-dataset&userId=alpha-user-1&sessionId=alpha-session\
    &flowId=alpha-flow&level=error&environment=production";

/// What a credential is to a route that needs a key.
#[derive(Debug, Clone, Copy)]
enum Holds {
    /// No valid key: 401.
    Nothing,
    /// A key of B's, acting on B.
    Bravo(Scopes),
    /// A valid key of B's aimed at A with `X-Workspace-Id`: 403.
    AimedAtAlpha,
}

/// A credential: its name, the headers that carry it, and what it is to a route.
type Credential<'a> = (&'a str, Vec<(&'a str, String)>, Holds);

/// The answer docs/API.md gives: `None` for a 2xx, else the status. A key allowed to act on
/// B, asked for one of A's objects by its id in the path, finds none in B: 404.
fn expected(route: &Route, holds: Holds) -> Option<StatusCode> {
    match (route.scope(), holds) {
        (None, _) => None,
        (Some(_), Holds::Nothing) => Some(StatusCode::UNAUTHORIZED),
        (Some(_), Holds::AimedAtAlpha) => Some(StatusCode::FORBIDDEN),
        (Some(scope), Holds::Bravo(scopes)) if !scopes.allows(scope) => Some(StatusCode::FORBIDDEN),
        (Some(_), Holds::Bravo(_)) => route.path.contains('{').then_some(StatusCode::NOT_FOUND),
    }
}

/// A's workspace as the test knows it: its key, ids and every value of its logs.
struct Alpha {
    log_ids: Vec<String>,
    /// Everything of A's that must never reach another credential.
    markers: Vec<String>,
}

impl Alpha {
    /// The markers in `answer` that `request` (path, headers and body as text) did not carry.
    fn leaked(&self, request: &str, answer: &str) -> Vec<String> {
        self.markers
            .iter()
            .filter(|marker| !request.contains(marker.as_str()) && answer.contains(marker.as_str()))
            .cloned()
            .collect()
    }
}

/// The paths a route pattern gives with A's ids in its parameters.
fn paths(route: &Route, alpha: &Alpha) -> Vec<String> {
    if route.path == "/v1/logs/tail" {
        // A live tail asked to replay what followed A's oldest log.
        return vec![format!("{}?lastEventId={}", route.path, alpha.log_ids[0])];
    }
    let Some((head, rest)) = route.path.split_once('{') else { return vec![route.path.to_owned()] };
    let (name, tail) = rest.split_once('}').unwrap_or((rest, ""));
    assert!(!tail.contains('{'), "{}: the matrix fills one path parameter; give it the others", route.path);
    let ids: Vec<String> = match name {
        // Each of A's logs, and one in capitals (the same UUID to a parser).
        "id" => alpha.log_ids.iter().cloned().chain(alpha.log_ids.first().map(|id| id.to_uppercase())).collect(),
        // A's flow, named by its logs.
        "flowId" => vec!["alpha-flow".to_owned()],
        other => panic!("{}: no id of A's for the path parameter {{{other}}}; add it to the matrix", route.path),
    };
    ids.iter().map(|id| format!("{head}{id}{tail}")).collect()
}

/// Sends one request; returns its status, its answer as text, and the request as text.
async fn send(
    server: &TestServer,
    route: &Route,
    path: &str,
    headers: &[(&str, String)],
) -> (StatusCode, String, String) {
    let headers: Vec<(&str, &str)> = headers.iter().map(|(name, value)| (*name, value.as_str())).collect();
    let mut all = headers.clone();
    let body = if route.method == awc::http::Method::POST {
        all.push(("Content-Type", "application/json"));
        // Each POST route gets a body of its own kind, so B's own requests succeed.
        match route.path {
            "/v1/flows" => json!({"name": "bravo flow"}).to_string().into_bytes(),
            _ => bravo_body(),
        }
    } else {
        Vec::new()
    };
    let request = format!("{path} {headers:?} {}", String::from_utf8_lossy(&body));
    if route.path == "/v1/logs/tail" {
        // A tail never ends: its answer is what it sends up to its first heartbeat (the
        // replay, and any log published meanwhile).
        let (status, tail) = server.tail_with(path, &headers).await;
        let answer = match tail {
            Ok(mut tail) => {
                let mut events = Vec::new();
                while let Some(event) = tail.next().await {
                    if event.event == "comment" {
                        break;
                    }
                    events.push(format!("{event:?}"));
                }
                events.join("\n")
            }
            Err(error) => error.to_string(),
        };
        return (status, answer, request);
    }
    let reply = server.request_raw(route.method.as_str(), path, &all, body).await;
    (reply.status, String::from_utf8_lossy(&reply.bytes).into_owned(), request)
}

/// The logs a key lists, as (id, message) pairs.
async fn listed(server: &TestServer, key: &str) -> BTreeSet<(String, String)> {
    let reply = server.request("GET", "/v1/logs?limit=1000", &[("X-API-Key", key)], Vec::new()).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let logs = reply.body["logs"].as_array().cloned().unwrap_or_default();
    logs.iter()
        .map(|log| (log["id"].as_str().unwrap_or("").to_owned(), log["message"].as_str().unwrap_or("").to_owned()))
        .collect()
}

#[actix_web::test]
async fn no_route_answers_another_workspace_with_workspace_a_data() {
    let server = start().await;
    server.set_now(CLOCK);
    let store = &server.store;
    let a = server.workspace.id;
    let a_key = server.key.clone();
    let reply = server.post_json("/v1/logs", &json!({ "logs": alpha_entries() })).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let before = listed(&server, &a_key).await;
    assert_eq!(before.len(), 3);
    let (a_revoked, a_revoked_id) = new_key(store, a, Scopes::ALL, None).await;
    store.revoke_key(a_revoked_id, CLOCK).await.expect("revoke");
    let (a_expired, a_expired_id) = new_key(store, a, Scopes::ALL, Some(CLOCK - 1)).await;

    let b = new_workspace(store, "bravo").await.id;
    let (b_key, _) = new_key(store, b, Scopes::ALL, None).await;
    let (b_ingest, _) = new_key(store, b, Scopes { ingest: true, read: false }, None).await;
    let (b_read, _) = new_key(store, b, Scopes { ingest: false, read: true }, None).await;
    let (b_revoked, b_revoked_id) = new_key(store, b, Scopes::ALL, None).await;
    store.revoke_key(b_revoked_id, CLOCK).await.expect("revoke");
    let reply = server
        .request("POST", "/v1/logs", &[("X-API-Key", &b_key), ("Content-Type", "application/json")], bravo_body())
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);

    let log_ids: Vec<String> = before.iter().map(|(id, _)| id.clone()).collect();
    let mut markers: Vec<String> = before.iter().flat_map(|(id, message)| [id.clone(), message.clone()]).collect();
    for entry in alpha_entries() {
        for field in ["userId", "requestId", "errorStack"] {
            markers.push(entry[field].as_str().unwrap_or_default().to_owned());
        }
        markers.push(entry["data"]["alphaCard"].as_str().unwrap_or_default().to_owned());
    }
    let fixed = ["alpha-billing", "alpha-dataset", "alpha-session", "alpha-flow", "AlphaDeclinedError", "alpha-tag"];
    markers.extend(fixed.map(str::to_owned));
    markers.extend([a_key.clone(), a_revoked_id.to_string(), a_expired_id.to_string()]);
    let alpha = Alpha { log_ids, markers };

    let a_id = a.to_string();
    let bearer = |key: &str| format!("Bearer {key}");
    let one_off = {
        let mut key = a_key.clone();
        let last = if key.ends_with('A') { "B" } else { "A" };
        key.pop();
        key + last
    };
    let credentials: Vec<Credential> = vec![
        ("no key", vec![], Holds::Nothing),
        ("an empty Bearer", vec![("Authorization", "Bearer ".to_owned())], Holds::Nothing),
        ("a malformed key", vec![("X-API-Key", "not-a-key".to_owned())], Holds::Nothing),
        ("A's key one character off", vec![("Authorization", bearer(&one_off))], Holds::Nothing),
        ("A's key and one more character", vec![("Authorization", bearer(&format!("{a_key}x")))], Holds::Nothing),
        ("A's revoked key", vec![("Authorization", bearer(&a_revoked))], Holds::Nothing),
        (
            "A's revoked key aimed at A",
            vec![("X-API-Key", a_revoked.clone()), ("X-Workspace-Id", a_id.clone())],
            Holds::Nothing,
        ),
        ("A's expired key", vec![("X-API-Key", a_expired.clone())], Holds::Nothing),
        ("B's revoked key", vec![("Authorization", bearer(&b_revoked))], Holds::Nothing),
        ("B's key", vec![("Authorization", bearer(&b_key))], Holds::Bravo(Scopes::ALL)),
        ("B's key as X-API-Key", vec![("X-API-Key", b_key.clone())], Holds::Bravo(Scopes::ALL)),
        // Bearer wins: B's key, whatever the other header holds.
        (
            "B's key as Bearer and A's revoked key as X-API-Key",
            vec![("Authorization", bearer(&b_key)), ("X-API-Key", a_revoked.clone())],
            Holds::Bravo(Scopes::ALL),
        ),
        (
            "B's ingest-only key",
            vec![("X-API-Key", b_ingest.clone())],
            Holds::Bravo(Scopes { ingest: true, read: false }),
        ),
        ("B's read-only key", vec![("X-API-Key", b_read.clone())], Holds::Bravo(Scopes { ingest: false, read: true })),
        (
            "B's key aimed at A",
            vec![("Authorization", bearer(&b_key)), ("X-Workspace-Id", a_id.clone())],
            Holds::AimedAtAlpha,
        ),
        (
            "B's key aimed at A in capitals",
            vec![("X-API-Key", b_key.clone()), ("X-Workspace-Id", a_id.to_uppercase())],
            Holds::AimedAtAlpha,
        ),
        (
            "B's ingest-only key aimed at A",
            vec![("X-API-Key", b_ingest.clone()), ("X-Workspace-Id", a_id.clone())],
            Holds::AimedAtAlpha,
        ),
        (
            "B's read-only key aimed at A",
            vec![("X-API-Key", b_read.clone()), ("X-Workspace-Id", a_id.clone())],
            Holds::AimedAtAlpha,
        ),
    ];

    let mut failures = Vec::new();
    let mut requests = 0;
    for route in ROUTES {
        for path in paths(route, &alpha) {
            for query in [PLAIN_QUERY, NAMING_QUERY] {
                let path = format!("{path}{}{query}", if path.contains('?') { '&' } else { '?' });
                for (label, headers, holds) in &credentials {
                    requests += 1;
                    let (status, answer, request) = send(&server, route, &path, headers).await;
                    let want = expected(route, *holds);
                    let fits = match want {
                        None => status.is_success(),
                        Some(want) => status == want,
                    };
                    let what = format!("{} {path} with {label}", route.method);
                    if !fits {
                        let short: String = answer.chars().take(200).collect();
                        failures.push(format!(
                            "{what}: {status} {short}, expected {}",
                            want.map_or("2xx".to_owned(), |s| s.to_string())
                        ));
                    }
                    let leaked = alpha.leaked(&request, &answer);
                    if !leaked.is_empty() {
                        failures.push(format!("{what}: the answer holds A's {leaked:?}"));
                    }
                }
            }
        }
    }

    // The same reads with A's own key reveal A's data: the check above could see a leak.
    let mut revealing = BTreeSet::new();
    for route in ROUTES.iter().filter(|route| route.scope() != Some(Scope::Ingest)) {
        for path in paths(route, &alpha) {
            let path = format!("{path}{}{PLAIN_QUERY}", if path.contains('?') { '&' } else { '?' });
            let (status, answer, request) = send(&server, route, &path, &[("X-API-Key", a_key.clone())]).await;
            if route.scope().is_some() && !status.is_success() {
                failures.push(format!("{} {path} with A's own key: {status} {answer}", route.method));
            }
            if !alpha.leaked(&request, &answer).is_empty() {
                revealing.insert(format!("{} {}", route.method, route.path));
            }
        }
    }
    for route in [
        "GET /v1/logs",
        "GET /v1/logs/search",
        "GET /v1/logs/{id}",
        "GET /v1/stats",
        "GET /v1/flows",
        "GET /v1/flows/{flowId}",
    ] {
        if !revealing.contains(route) {
            failures.push(format!("{route} does not show A's data to A's own key: the matrix cannot see a leak there"));
        }
    }

    // B sends entries naming A's log id and workspace as their own: stored in B, A untouched.
    let claim = json!([{"id": alpha.log_ids[0], "workspaceId": a_id, "level": "info", "message": "bravo entry",
        "source": "bravo-source", "environment": "staging"}]);
    let reply = server.request("POST", "/v1/logs", &[("X-API-Key", &b_key)], claim.to_string().into_bytes()).await;
    if reply.status != StatusCode::OK {
        failures.push(format!("B's entry naming A's ids: {} {}", reply.status, reply.body));
    }

    // No POST wrote into A, and each workspace's counters count its own logs.
    let after = listed(&server, &a_key).await;
    if after != before {
        failures.push(format!("A's logs changed: {before:?} became {after:?}"));
    }
    let bravo = listed(&server, &b_key).await;
    if bravo.len() < 2 || bravo.iter().any(|(_, message)| message != "bravo entry") {
        failures.push(format!("B's own posts are not all in B: {bravo:?}"));
    }
    for (name, key, count) in [("A", &a_key, after.len()), ("B", &b_key, bravo.len())] {
        let summary = server.request("GET", "/v1/stats/summary", &[("X-API-Key", key)], Vec::new()).await;
        let stats = server.request("GET", "/v1/stats", &[("X-API-Key", key)], Vec::new()).await;
        if summary.body["today"]["total"] != json!(count) || stats.body["totals"]["total"] != json!(count) {
            failures.push(format!("{name}'s {count} logs counted as {} and {}", summary.body, stats.body));
        }
    }
    server.stop().await;
    assert!(failures.is_empty(), "{} failures ({requests} requests):\n{}", failures.len(), failures.join("\n"));
}
