//! Handlers, one module per resource, the route table that lists them, and the JSON answers
//! for unknown routes and methods.

pub(crate) mod flows;
pub(crate) mod health;
pub(crate) mod logs;
pub(crate) mod stats;
pub(crate) mod tail;

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
    /// Whether the handler needs an API key; the key's scope then follows the method
    /// ([`Route::scope`]).
    pub authenticated: bool,
    /// Attaches the handler to an actix route already guarded by `method`.
    handler: fn(ActixRoute) -> ActixRoute,
}

impl Route {
    /// The scope a key needs here (`ingest` for `POST`, `read` otherwise), `None` on a route
    /// that needs no key.
    pub fn scope(&self) -> Option<Scope> {
        self.authenticated.then(|| crate::extract::scope_for(&self.method))
    }

    /// The actix route: the method guard and the handler.
    pub(crate) fn to_actix(&self) -> ActixRoute {
        (self.handler)(web::route().method(self.method.clone()))
    }
}

/// Every route of the service, in the order actix tries them: `/v1/logs/search` and
/// `/v1/logs/tail` come before `/v1/logs/{id}`, which would otherwise take them for an id.
pub const ROUTES: &[Route] = &[
    Route { method: Method::GET, path: "/healthz", authenticated: false, handler: |route| route.to(health::healthz) },
    Route { method: Method::GET, path: "/readyz", authenticated: false, handler: |route| route.to(health::readyz) },
    Route { method: Method::GET, path: "/v1/logs", authenticated: true, handler: |route| route.to(logs::list) },
    Route { method: Method::POST, path: "/v1/logs", authenticated: true, handler: |route| route.to(logs::ingest) },
    Route {
        method: Method::GET,
        path: "/v1/logs/search",
        authenticated: true,
        handler: |route| route.to(logs::search),
    },
    Route { method: Method::GET, path: "/v1/logs/tail", authenticated: true, handler: |route| route.to(tail::tail) },
    Route { method: Method::GET, path: "/v1/stats", authenticated: true, handler: |route| route.to(stats::stats) },
    Route {
        method: Method::GET,
        path: "/v1/stats/summary",
        authenticated: true,
        handler: |route| route.to(stats::summary_today),
    },
    Route { method: Method::GET, path: "/v1/flows", authenticated: true, handler: |route| route.to(flows::list) },
    Route { method: Method::POST, path: "/v1/flows", authenticated: true, handler: |route| route.to(flows::create) },
    Route {
        method: Method::GET,
        path: "/v1/flows/{flowId}",
        authenticated: true,
        handler: |route| route.to(flows::timeline),
    },
    Route { method: Method::GET, path: "/v1/logs/{id}", authenticated: true, handler: |route| route.to(logs::get) },
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
