//! The OpenAPI 3.1 document of the service, made by `utoipa` from the route table
//! ([`crate::routes`]): each route's `#[utoipa::path]` operation, and the schemas of the
//! `sluice-api` types it names. `GET /openapi.json` serves it (`routes/docs.rs`).

use std::sync::LazyLock;

use utoipa::openapi::security::{ApiKey, ApiKeyValue, Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

/// The credentials: an API key (`Authorization: Bearer` or `X-API-Key`), or a session (the
/// same bearer header, or the `sluice_session` cookie).
struct Credentials;

impl Modify for Credentials {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme("bearer", SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)));
        components.add_security_scheme("apiKey", SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("X-API-Key"))));
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new(crate::SESSION_COOKIE))),
        );
    }
}

#[derive(OpenApi)]
#[openapi(
    info(title = "sluice", description = "Multi-tenant structured logs: ingest, list, search, count, follow. The contract as built is docs/API.md."),
    modifiers(&Credentials),
    components(schemas(sluice_api::ErrorBody, sluice_api::Issue)),
    security(("bearer" = []), ("apiKey" = []), ("session" = [])),
    tags(
        (name = "logs", description = "Ingest, list, search, fetch and follow logs"),
        (name = "stats", description = "Counts by level"),
        (name = "flows", description = "Logs that share a flowId, by step"),
        (name = "accounts", description = "Sign-in, sessions, workspaces (signed-in users)"),
        (name = "team", description = "API keys and members (signed-in users)"),
        (name = "device", description = "Sign-in from the CLI (RFC 8628)"),
        (name = "health", description = "Liveness, readiness, metrics, this document"),
        (name = "dashboard", description = "The web dashboard's pages"),
    )
)]
struct ApiDoc;

/// The document, as `/openapi.json` serves it (pretty, so its snapshot diffs well): the
/// operations of every route of [`crate::routes::routes`], made once per process.
pub fn document() -> &'static str {
    static DOCUMENT: LazyLock<String> = LazyLock::new(|| {
        let mut document = ApiDoc::openapi();
        for route in crate::routes::routes() {
            route.describe(&mut document);
        }
        document.to_pretty_json().unwrap_or_else(|_| "{}".to_owned())
    });
    &DOCUMENT
}
