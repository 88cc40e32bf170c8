//! The web dashboard (docs/API.md, "Web dashboard"): one page shell and its script and style,
//! embedded in the binary and served at `/`, `/login`, `/logs/{id}`, `/flows`,
//! `/flows/{flowId}`, `/tail` and `/settings`.
//!
//! The pages hold no data: the script (`assets/dashboard/app.js`) reads everything from the
//! JSON API as the signed-in user, so the dashboard can show nothing the API would not, and
//! every rule of the API (roles, the workspace, validation, the cross-site rule) is the
//! dashboard's too. A log's text reaches the page only as text nodes. Every answer here carries
//! a Content Security Policy that allows scripts and styles from this server alone, no inline
//! script, and no framing.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::LazyLock;

use actix_web::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, ETAG, IF_NONE_MATCH, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use actix_web::{HttpRequest, HttpResponse};

/// What a dashboard page may load and do: this server's script, style and API, nothing
/// inline, never framed.
pub const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The dashboard's pages, each served the shell (the route table makes a route of each).
pub const PAGES: &[&str] = &["/", "/login", "/logs/{id}", "/flows", "/flows/{flowId}", "/tail", "/settings"];

const SHELL: &str = include_str!("../assets/dashboard/index.html");
const SCRIPT: &str = include_str!("../assets/dashboard/app.js");
const STYLE: &str = include_str!("../assets/dashboard/app.css");

/// An entity tag per embedded file, so a browser revalidates and gets `304` until the binary
/// changes.
fn tag(body: &str) -> String {
    let mut hasher = DefaultHasher::new();
    body.hash(&mut hasher);
    format!("\"{:016x}\"", hasher.finish())
}

static TAGS: LazyLock<[String; 3]> = LazyLock::new(|| [tag(SHELL), tag(SCRIPT), tag(STYLE)]);

fn serve(request: &HttpRequest, content_type: &str, body: &'static str, etag: &str) -> HttpResponse {
    let fresh = request
        .headers()
        .get(IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|candidate| candidate.trim() == etag));
    let mut answer = if fresh { HttpResponse::NotModified() } else { HttpResponse::Ok() };
    answer
        .insert_header((CONTENT_SECURITY_POLICY, POLICY))
        .insert_header((X_FRAME_OPTIONS, "DENY"))
        .insert_header((X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((REFERRER_POLICY, "same-origin"))
        .insert_header((CACHE_CONTROL, "no-cache"))
        .insert_header((ETAG, etag.to_owned()));
    if fresh { answer.finish() } else { answer.content_type(content_type).body(body) }
}

/// A page of the dashboard: the shell, which the script fills in for its address.
#[utoipa::path(get, path = "/", tag = "dashboard", summary = "The web dashboard (also /login, /logs/{id}, /flows, /flows/{flowId}, /tail, /settings)", security(()),
    responses((status = 200, description = "The page", content_type = "text/html")))]
pub(crate) async fn page(request: HttpRequest) -> HttpResponse {
    serve(&request, "text/html; charset=utf-8", SHELL, &TAGS[0])
}

/// The dashboard's script.
pub(crate) async fn script(request: HttpRequest) -> HttpResponse {
    serve(&request, "text/javascript; charset=utf-8", SCRIPT, &TAGS[1])
}

/// The dashboard's style.
pub(crate) async fn style(request: HttpRequest) -> HttpResponse {
    serve(&request, "text/css; charset=utf-8", STYLE, &TAGS[2])
}
