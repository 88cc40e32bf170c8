//! Handlers, one module per resource, the route table that lists them, and the JSON answers
//! for unknown routes and methods.

pub(crate) mod account;
pub(crate) mod device;
pub(crate) mod flows;
pub(crate) mod health;
pub(crate) mod logs;
pub(crate) mod stats;
pub(crate) mod tail;
pub(crate) mod team;

use actix_web::http::Method;
use actix_web::{HttpResponse, ResponseError, Route as ActixRoute, web};
use sluice_model::Scope;

use crate::ApiError;

/// One route the service serves: a method on a path pattern, and the handler that answers it.
/// [`ROUTES`] lists them all, and [`crate::configure`] registers exactly those, so whatever
/// reads the table (the tenant matrix of `tests/api/tenants.rs`) sees what the app serves.
pub struct Route {
    /// The method it answers; other methods on the same path get 405.
    pub method: Method,
    /// The path pattern, actix style: `{id}` is a path parameter.
    pub path: &'static str,
    /// Who may call it.
    pub access: Access,
    /// Attaches the handler to an actix route already guarded by `method`.
    handler: fn(ActixRoute) -> ActixRoute,
}

/// Who may call a route, from anyone to a member of a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    /// Anyone: health, sign-in, the device grant and its page.
    Public,
    /// An API key, whose scope follows the method ([`Route::scope`]), or a signed-in user whose
    /// role allows it (`member` to `POST`, any role to read): the log routes.
    Logs,
    /// Only a signed-in user (a session), about themselves: `/v1/me`, their workspaces and
    /// sessions, signing out, deciding a device sign-in.
    User,
    /// Only a signed-in user, acting on a workspace they are a member of (`X-Workspace-Id`,
    /// else their first): its keys, members, plan and usage.
    Workspace,
}

impl Route {
    /// The scope a key needs here (`ingest` for `POST`, `read` otherwise), `None` on a route
    /// that takes no key.
    pub fn scope(&self) -> Option<Scope> {
        (self.access == Access::Logs).then(|| crate::extract::scope_for(&self.method))
    }

    /// The actix route: the method guard and the handler.
    pub(crate) fn to_actix(&self) -> ActixRoute {
        (self.handler)(web::route().method(self.method.clone()))
    }
}

/// Every route of the service, in the order actix tries them: `/v1/logs/search` and
/// `/v1/logs/tail` come before `/v1/logs/{id}`, which would otherwise take them for an id.
pub const ROUTES: &[Route] = &[
    Route { method: Method::GET, path: "/healthz", access: Access::Public, handler: |route| route.to(health::healthz) },
    Route {
        method: Method::GET,
        path: "/openapi.json",
        access: Access::Public,
        handler: |route| route.to(crate::openapi::openapi_json),
    },
    Route {
        method: Method::GET,
        path: "/docs",
        access: Access::Public,
        handler: |route| route.to(crate::openapi::docs),
    },
    Route {
        method: Method::GET,
        path: "/docs/swagger-ui-bundle.js",
        access: Access::Public,
        handler: |route| route.to(crate::openapi::docs_bundle),
    },
    Route {
        method: Method::GET,
        path: "/docs/swagger-ui.css",
        access: Access::Public,
        handler: |route| route.to(crate::openapi::docs_css),
    },
    Route {
        method: Method::GET,
        path: "/docs/docs.js",
        access: Access::Public,
        handler: |route| route.to(crate::openapi::docs_init),
    },
    Route {
        method: Method::GET,
        path: "/metrics",
        access: Access::Public,
        handler: |route| route.to(crate::metrics::scrape),
    },
    Route { method: Method::GET, path: "/readyz", access: Access::Public, handler: |route| route.to(health::readyz) },
    // The web dashboard: one shell for every page, and its script and style.
    Route { method: Method::GET, path: "/", access: Access::Public, handler: |route| route.to(crate::dashboard::page) },
    Route {
        method: Method::GET,
        path: "/login",
        access: Access::Public,
        handler: |route| route.to(crate::dashboard::page),
    },
    Route {
        method: Method::GET,
        path: "/logs/{id}",
        access: Access::Public,
        handler: |route| route.to(crate::dashboard::page),
    },
    Route {
        method: Method::GET,
        path: "/flows",
        access: Access::Public,
        handler: |route| route.to(crate::dashboard::page),
    },
    Route {
        method: Method::GET,
        path: "/flows/{flowId}",
        access: Access::Public,
        handler: |route| route.to(crate::dashboard::page),
    },
    Route {
        method: Method::GET,
        path: "/tail",
        access: Access::Public,
        handler: |route| route.to(crate::dashboard::page),
    },
    Route {
        method: Method::GET,
        path: "/settings",
        access: Access::Public,
        handler: |route| route.to(crate::dashboard::page),
    },
    Route {
        method: Method::GET,
        path: "/assets/app.js",
        access: Access::Public,
        handler: |route| route.to(crate::dashboard::script),
    },
    Route {
        method: Method::GET,
        path: "/assets/app.css",
        access: Access::Public,
        handler: |route| route.to(crate::dashboard::style),
    },
    Route { method: Method::GET, path: "/v1/logs", access: Access::Logs, handler: |route| route.to(logs::list) },
    Route { method: Method::POST, path: "/v1/logs", access: Access::Logs, handler: |route| route.to(logs::ingest) },
    Route {
        method: Method::GET,
        path: "/v1/logs/search",
        access: Access::Logs,
        handler: |route| route.to(logs::search),
    },
    Route { method: Method::GET, path: "/v1/logs/tail", access: Access::Logs, handler: |route| route.to(tail::tail) },
    Route { method: Method::GET, path: "/v1/stats", access: Access::Logs, handler: |route| route.to(stats::stats) },
    Route {
        method: Method::GET,
        path: "/v1/stats/summary",
        access: Access::Logs,
        handler: |route| route.to(stats::summary_today),
    },
    Route { method: Method::GET, path: "/v1/flows", access: Access::Logs, handler: |route| route.to(flows::list) },
    Route { method: Method::POST, path: "/v1/flows", access: Access::Logs, handler: |route| route.to(flows::create) },
    Route {
        method: Method::GET,
        path: "/v1/flows/{flowId}",
        access: Access::Logs,
        handler: |route| route.to(flows::timeline),
    },
    Route { method: Method::GET, path: "/v1/logs/{id}", access: Access::Logs, handler: |route| route.to(logs::get) },
    Route {
        method: Method::POST,
        path: "/v1/auth/login",
        access: Access::Public,
        handler: |route| route.to(account::login),
    },
    Route {
        method: Method::POST,
        path: "/v1/auth/logout",
        access: Access::User,
        handler: |route| route.to(account::logout),
    },
    Route {
        method: Method::POST,
        path: "/oauth/device/code",
        access: Access::Public,
        handler: |route| route.to(device::device_code),
    },
    Route {
        method: Method::POST,
        path: "/oauth/token",
        access: Access::Public,
        handler: |route| route.to(device::token),
    },
    Route { method: Method::GET, path: "/device", access: Access::Public, handler: |route| route.to(device::page) },
    Route {
        method: Method::POST,
        path: "/device",
        access: Access::Public,
        handler: |route| route.to(device::page_post),
    },
    Route {
        method: Method::POST,
        path: "/v1/device/approve",
        access: Access::User,
        handler: |route| route.to(device::approve),
    },
    Route {
        method: Method::POST,
        path: "/v1/device/deny",
        access: Access::User,
        handler: |route| route.to(device::deny),
    },
    Route { method: Method::GET, path: "/v1/me", access: Access::User, handler: |route| route.to(account::me) },
    Route {
        method: Method::GET,
        path: "/v1/workspaces",
        access: Access::User,
        handler: |route| route.to(account::workspaces),
    },
    Route {
        method: Method::POST,
        path: "/v1/workspaces",
        access: Access::User,
        handler: |route| route.to(account::create_workspace),
    },
    Route {
        method: Method::GET,
        path: "/v1/workspace",
        access: Access::Workspace,
        handler: |route| route.to(account::workspace),
    },
    Route {
        method: Method::PUT,
        path: "/v1/workspace/plan",
        access: Access::Workspace,
        handler: |route| route.to(account::set_plan),
    },
    Route { method: Method::GET, path: "/v1/keys", access: Access::Workspace, handler: |route| route.to(team::keys) },
    Route {
        method: Method::POST,
        path: "/v1/keys",
        access: Access::Workspace,
        handler: |route| route.to(team::create_key),
    },
    Route {
        method: Method::DELETE,
        path: "/v1/keys/{keyId}",
        access: Access::Workspace,
        handler: |route| route.to(team::revoke_key),
    },
    Route {
        method: Method::GET,
        path: "/v1/members",
        access: Access::Workspace,
        handler: |route| route.to(team::members),
    },
    Route {
        method: Method::POST,
        path: "/v1/members",
        access: Access::Workspace,
        handler: |route| route.to(team::add_member),
    },
    Route {
        method: Method::PATCH,
        path: "/v1/members/{userId}",
        access: Access::Workspace,
        handler: |route| route.to(team::set_role),
    },
    Route {
        method: Method::DELETE,
        path: "/v1/members/{userId}",
        access: Access::Workspace,
        handler: |route| route.to(team::remove_member),
    },
    Route {
        method: Method::GET,
        path: "/v1/sessions",
        access: Access::User,
        handler: |route| route.to(account::sessions),
    },
    Route {
        method: Method::DELETE,
        path: "/v1/sessions/{sessionId}",
        access: Access::User,
        handler: |route| route.to(account::revoke_session),
    },
];

/// Any path no route knows.
pub(crate) async fn not_found() -> HttpResponse {
    ApiError::NotFound("Not found").error_response()
}

/// A known path with a method it does not answer.
pub(crate) async fn method_not_allowed() -> HttpResponse {
    ApiError::MethodNotAllowed.error_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_method_and_path_is_listed_once() {
        for (index, route) in ROUTES.iter().enumerate() {
            let again =
                ROUTES[index + 1..].iter().any(|other| other.method == route.method && other.path == route.path);
            assert!(!again, "{} {} is listed twice", route.method, route.path);
        }
    }
}
