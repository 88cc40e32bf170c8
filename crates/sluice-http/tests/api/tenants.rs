//! Issue 25, item 7: tenant isolation route by route. Every route of the router's own table
//! (`sluice_http::routes()`, which `configure` registers, so a new route joins by itself) is
//! asked about workspace A with credentials that are not A's: B's keys (every scope, ingest
//! only, read only; as `Authorization` or `X-API-Key`; aimed at A with `X-Workspace-Id`), A's
//! revoked and expired keys, keys that are malformed or one character off A's, and none, with
//! A's log ids in the path and A's search token and field values in the query.
//!
//! Sessions join the keys: B's owner's and viewer's (as bearer and as cookie), aimed at A or
//! not, A's revoked session, and a token one character off, on the log routes and on the
//! management routes, with A's key, user and session ids in the paths.
//!
//! Each answer has the status docs/API.md (Authentication) gives that credential on that
//! route (401, 403, or a 2xx for B's own workspace and the health routes), and carries nothing
//! of A's (its log ids, messages, field values, key) that the request did not itself send. The
//! same requests with A's own key do reveal A's data, so the check can see a leak; and after
//! all of it, A holds exactly its own logs and the counters of each workspace count its own.

use std::collections::BTreeSet;

use awc::http::StatusCode;
use serde_json::{Value, json};
use sluice_http::{Access, Route, routes};
use sluice_model::{Role, Scope, Scopes};

use crate::common::{PASSWORD, TestServer, new_key, new_user, new_workspace, start};

/// B's users: its owner and viewer, and one who is no member until the matrix adds them.
const BRAVO_OWNER: &str = "bravo-owner@example.com";
const BRAVO_VIEWER: &str = "bravo-viewer@example.com";
const BRAVO_EXTRA: &str = "bravo-extra@example.com";

/// A's user, whose email must never reach B.
const ALPHA_USER: &str = "alpha-user@alpha.example";

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

/// What a credential is to a route that needs one.
#[derive(Debug, Clone, Copy)]
enum Holds {
    /// No valid key or session: 401.
    Nothing,
    /// A key of B's, acting on B.
    Bravo(Scopes),
    /// A valid key of B's aimed at A with `X-Workspace-Id`: 403.
    AimedAtAlpha,
    /// A session of B's owner aimed at A with `X-Workspace-Id`: 403 where a workspace is
    /// acted on; the routes about the user themselves take no workspace.
    UserAimedAtAlpha,
    /// A session of a member of B (and of no workspace of A's), with what its role allows on
    /// the log routes (`owner`: both scopes; `viewer`: reading).
    BravoUser(Scopes),
}

/// What a route must answer a credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// A 2xx.
    Success,
    /// Exactly this status.
    Status(StatusCode),
    /// 401 or 403: a key, valid or not, on a route only a signed-in user may call is refused
    /// as "needs a signed-in user", anything else as no credential.
    Refused,
    /// A 2xx or this status (a viewer may list members, not keys).
    SuccessOr(StatusCode),
    /// Any answer but a 5xx: a public route sent a body it was not made for, or a signed-in
    /// user's change whose outcome depends on what the matrix did before (a member added once,
    /// then already one).
    NoServerError,
}

impl Want {
    fn fits(self, status: StatusCode) -> bool {
        match self {
            Want::Success => status.is_success(),
            Want::Status(want) => status == want,
            Want::SuccessOr(want) => status.is_success() || status == want,
            Want::Refused => status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN,
            Want::NoServerError => !status.is_server_error(),
        }
    }
}

/// A credential: its name, the headers that carry it, and what it is to a route.
type Credential<'a> = (&'a str, Vec<(&'a str, String)>, Holds);

/// The answer docs/API.md gives. A credential allowed to act on B, asked for one of A's
/// objects by its id in the path, finds none in B: 404.
fn expected(route: &Route, holds: Holds) -> Want {
    let by_id = route.path.contains('{');
    match (route.access, holds) {
        (Access::Public, _) if route.path.starts_with("/healthz") || route.path.starts_with("/readyz") => Want::Success,
        (Access::Public, _) => Want::NoServerError,
        (_, Holds::Nothing) => Want::Refused,
        (Access::User | Access::Workspace, Holds::Bravo(_) | Holds::AimedAtAlpha) => {
            Want::Status(StatusCode::FORBIDDEN)
        }
        // A route about the user themselves takes no workspace: aimed anywhere, it is B's user's.
        (Access::User, Holds::BravoUser(_) | Holds::UserAimedAtAlpha) => match () {
            () if by_id => Want::Status(StatusCode::NOT_FOUND),
            () if route.method == awc::http::Method::GET => Want::Success,
            () => Want::NoServerError,
        },
        (_, Holds::AimedAtAlpha | Holds::UserAimedAtAlpha) => Want::Status(StatusCode::FORBIDDEN),
        // B's viewer: refused every change; may list members and see the workspace, not keys.
        (Access::Workspace, Holds::BravoUser(scopes)) if !scopes.ingest => match route.method {
            awc::http::Method::GET => Want::SuccessOr(StatusCode::FORBIDDEN),
            _ => Want::Status(StatusCode::FORBIDDEN),
        },
        (Access::Workspace, Holds::BravoUser(_)) if by_id => Want::Status(StatusCode::NOT_FOUND),
        (Access::Workspace, Holds::BravoUser(_)) if route.method == awc::http::Method::GET => Want::Success,
        (Access::Workspace, Holds::BravoUser(_)) => Want::NoServerError,
        (Access::Logs, Holds::Bravo(scopes) | Holds::BravoUser(scopes)) => match route.scope() {
            Some(scope) if !scopes.allows(scope) => Want::Status(StatusCode::FORBIDDEN),
            _ if by_id => Want::Status(StatusCode::NOT_FOUND),
            _ => Want::Success,
        },
    }
}

/// A's workspace as the test knows it: its key, ids and every value of its logs.
struct Alpha {
    log_ids: Vec<String>,
    /// A's key, user and session ids, for the management routes' paths.
    key_id: String,
    user_id: String,
    session_id: String,
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
        "keyId" => vec![alpha.key_id.clone()],
        "userId" => vec![alpha.user_id.clone()],
        "sessionId" => vec![alpha.session_id.clone()],
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
    if route.method != awc::http::Method::GET {
        // A cookie alone changes nothing without it (the cross-site rule); keys ignore it.
        all.push(("X-Requested-With", "sluice"));
    }
    let body = if [awc::http::Method::POST, awc::http::Method::PATCH, awc::http::Method::PUT].contains(&route.method) {
        // Each route gets a body of its own kind, so B's own requests succeed.
        let form = ["/oauth/device/code", "/oauth/token", "/device"].contains(&route.path);
        all.push(("Content-Type", if form { "application/x-www-form-urlencoded" } else { "application/json" }));
        match route.path {
            "/v1/flows" => json!({"name": "bravo flow"}).to_string().into_bytes(),
            "/v1/auth/login" => json!({"email": BRAVO_OWNER, "password": PASSWORD}).to_string().into_bytes(),
            "/oauth/device/code" => b"client_id=sluice-cli".to_vec(),
            "/oauth/token" | "/device" => b"client_id=sluice-cli&device_code=x&action=approve&code=BCDF-GHJK".to_vec(),
            "/v1/device/approve" | "/v1/device/deny" => json!({"userCode": "BCDF-GHJK"}).to_string().into_bytes(),
            "/v1/workspaces" => json!({"name": "zz bravo extra"}).to_string().into_bytes(),
            "/v1/workspace/plan" => json!({"plan": "free"}).to_string().into_bytes(),
            "/v1/keys" => json!({"name": "bravo key"}).to_string().into_bytes(),
            "/v1/members" => json!({"email": BRAVO_EXTRA, "role": "viewer"}).to_string().into_bytes(),
            "/v1/members/{userId}" => json!({"role": "viewer"}).to_string().into_bytes(),
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

    // People: A's owner, B's owner and viewer, and a user of no workspace yet.
    let alpha_user = new_user(store, ALPHA_USER, false, &[(a, Role::Owner)]).await;
    new_user(store, BRAVO_OWNER, false, &[(b, Role::Owner)]).await;
    new_user(store, BRAVO_VIEWER, false, &[(b, Role::Viewer)]).await;
    new_user(store, BRAVO_EXTRA, false, &[]).await;
    let a_session = server.sign_in(ALPHA_USER).await;
    let a_revoked_session = server.sign_in(ALPHA_USER).await;
    let b_owner = server.sign_in(BRAVO_OWNER).await;
    let b_viewer = server.sign_in(BRAVO_VIEWER).await;
    let a_sessions = server.as_user(&a_session, "GET", "/v1/sessions", None).await;
    let session_ids: Vec<(bool, String)> = a_sessions.body["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|session| (session["current"] == true, session["sessionId"].as_str().unwrap_or_default().to_owned()))
        .collect();
    let a_session_id = session_ids.iter().find(|(current, _)| *current).map(|(_, id)| id.clone()).unwrap_or_default();
    let a_revoked_id = session_ids.iter().find(|(current, _)| !*current).map(|(_, id)| id.clone()).unwrap_or_default();
    let revoked = server.as_user(&a_session, "DELETE", &format!("/v1/sessions/{a_revoked_id}"), None).await;
    assert_eq!(revoked.status, StatusCode::NO_CONTENT);

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
    let a_key_id = store.list_keys(a).await.expect("keys").first().map(|key| key.id.to_string()).unwrap_or_default();
    markers.extend([ALPHA_USER.to_owned(), alpha_user.id.to_string(), a_session.clone(), a_session_id.clone()]);
    markers.push(a_key_id.clone());
    let alpha =
        Alpha { log_ids, key_id: a_key_id, user_id: alpha_user.id.to_string(), session_id: a_session_id, markers };

    let a_id = a.to_string();
    let bearer = |key: &str| format!("Bearer {key}");
    // The last character replaced by another (never by itself: a token may end in any letter).
    let one_off = |token: &str| {
        let mut token = token.to_owned();
        let last = if token.ends_with('A') { "B" } else { "A" };
        token.pop();
        token + last
    };
    let owner_scopes = Scopes::ALL;
    let viewer_scopes = Scopes { ingest: false, read: true };
    let credentials: Vec<Credential> = vec![
        ("B's owner's session", vec![("Authorization", bearer(&b_owner))], Holds::BravoUser(owner_scopes)),
        (
            "B's owner's session as a cookie",
            vec![("Cookie", format!("sluice_session={b_owner}"))],
            Holds::BravoUser(owner_scopes),
        ),
        ("B's viewer's session", vec![("Authorization", bearer(&b_viewer))], Holds::BravoUser(viewer_scopes)),
        (
            "B's owner's session aimed at A",
            vec![("Authorization", bearer(&b_owner)), ("X-Workspace-Id", a_id.clone())],
            Holds::UserAimedAtAlpha,
        ),
        ("A's revoked session", vec![("Authorization", bearer(&a_revoked_session))], Holds::Nothing),
        (
            "A's revoked session as a cookie aimed at A",
            vec![("Cookie", format!("sluice_session={a_revoked_session}")), ("X-Workspace-Id", a_id.clone())],
            Holds::Nothing,
        ),
        ("a session token one character off", vec![("Authorization", bearer(&one_off(&a_session)))], Holds::Nothing),
        ("no key", vec![], Holds::Nothing),
        ("an empty Bearer", vec![("Authorization", "Bearer ".to_owned())], Holds::Nothing),
        ("a malformed key", vec![("X-API-Key", "not-a-key".to_owned())], Holds::Nothing),
        ("A's key one character off", vec![("Authorization", bearer(&one_off(&a_key)))], Holds::Nothing),
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
    for route in routes() {
        for path in paths(route, &alpha) {
            for query in [PLAIN_QUERY, NAMING_QUERY] {
                let path = format!("{path}{}{query}", if path.contains('?') { '&' } else { '?' });
                for (label, headers, holds) in &credentials {
                    // Signing out would end B's sessions for the rest of the matrix.
                    if route.path == "/v1/auth/logout" && label.starts_with("B's") && label.contains("session") {
                        continue;
                    }
                    requests += 1;
                    let (status, answer, request) = send(&server, route, &path, headers).await;
                    let want = expected(route, *holds);
                    let fits = want.fits(status);
                    let what = format!("{} {path} with {label}", route.method);
                    if !fits {
                        let short: String = answer.chars().take(200).collect();
                        failures.push(format!("{what}: {status} {short}, expected {want:?}"));
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
    for route in routes().iter().filter(|route| route.scope() != Some(Scope::Ingest)) {
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
    // And the signed-in user's reads with A's own session.
    let a_bearer = bearer(&a_session);
    for route in routes().iter().filter(|route| route.access >= Access::User && route.method == awc::http::Method::GET)
    {
        let (status, answer, request) = send(&server, route, route.path, &[("Authorization", a_bearer.clone())]).await;
        if !status.is_success() {
            failures.push(format!("{} {} with A's own session: {status} {answer}", route.method, route.path));
        }
        if !alpha.leaked(&request, &answer).is_empty() {
            revealing.insert(format!("{} {}", route.method, route.path));
        }
    }
    for route in [
        "GET /v1/logs",
        "GET /v1/logs/search",
        "GET /v1/logs/{id}",
        "GET /v1/stats",
        "GET /v1/flows",
        "GET /v1/flows/{flowId}",
        "GET /v1/me",
        "GET /v1/keys",
        "GET /v1/members",
        "GET /v1/sessions",
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

    // A's key and session still work, and A's people are as they were: B revoked or changed
    // nothing of A's.
    let still = server.as_user(&a_session, "GET", "/v1/members", None).await;
    let members: Vec<&str> =
        still.body["members"].as_array().into_iter().flatten().filter_map(|m| m["email"].as_str()).collect();
    if still.status != StatusCode::OK || members != [ALPHA_USER] {
        failures.push(format!("A's session or members changed: {} {}", still.status, still.body));
    }
    let keys = server.as_user(&a_session, "GET", "/v1/keys", None).await;
    if !keys.body["keys"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|key| key["keyId"] == alpha.key_id.as_str() && key["state"] == "active")
    {
        failures.push(format!("A's key is no longer active: {}", keys.body));
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
