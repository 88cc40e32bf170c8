//! Handlers, one module per resource, the route table that lists them (and from which the
//! OpenAPI document is made), and the JSON answers for unknown routes and methods.

pub(crate) mod account;
pub(crate) mod device;
pub(crate) mod docs;
pub(crate) mod flows;
pub(crate) mod health;
pub(crate) mod logs;
mod reading;
mod session;
pub(crate) mod stats;
pub(crate) mod tail;
pub(crate) mod team;

use std::sync::LazyLock;

use actix_web::http::Method;
use actix_web::{HttpResponse, ResponseError, Route as ActixRoute, web};
use sluice_model::Scope;
use utoipa::openapi::OpenApi;
use utoipa::openapi::path::HttpMethod;

use crate::ApiError;

/// One route the service serves: a method on a path pattern, the handler that answers it, and
/// (for all but static files and the dashboard's other pages) its OpenAPI operation.
/// [`routes`] lists them all; [`crate::configure`] registers exactly those and
/// [`crate::openapi::document`] describes exactly those, so whatever reads the table (the tenant
/// matrix of `tests/api/tenants.rs`) sees what the app serves and the document shows.
pub struct Route {
    /// The method it answers; other methods on the same path get 405.
    pub method: Method,
    /// The path pattern, actix style: `{id}` is a path parameter.
    pub path: &'static str,
    /// Who may call it.
    pub access: Access,
    /// Attaches the handler to an actix route already guarded by `method`.
    handler: fn(ActixRoute) -> ActixRoute,
    /// Adds its operation, and the schemas that operation names, to a document.
    describe: Option<fn(&mut OpenApi)>,
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

    /// Adds this route's operation to `document`, when it has one.
    pub(crate) fn describe(&self, document: &mut OpenApi) {
        if let Some(describe) = self.describe {
            describe(document);
        }
    }

    /// A route its handler's `#[utoipa::path]` describes: the method and path are read from
    /// there, so they are written once.
    fn described<P: utoipa::Path + utoipa::__dev::SchemaReferences + utoipa::__dev::Tags<'static>>(
        access: Access,
        handler: fn(ActixRoute) -> ActixRoute,
    ) -> Route {
        let method = match P::methods().first() {
            Some(HttpMethod::Post) => Method::POST,
            Some(HttpMethod::Put) => Method::PUT,
            Some(HttpMethod::Patch) => Method::PATCH,
            Some(HttpMethod::Delete) => Method::DELETE,
            _ => Method::GET,
        };
        let path: &'static str = Box::leak(P::path().into_boxed_str());
        Route { method, path, access, handler, describe: Some(describe::<P>) }
    }

    /// A route the document leaves out: the reference page's files, the dashboard's files and
    /// its pages but the first (one shell, described once at `/`).
    fn undescribed(path: &'static str, handler: fn(ActixRoute) -> ActixRoute) -> Route {
        Route { method: Method::GET, path, access: Access::Public, handler, describe: None }
    }
}

/// Adds `P`'s operation and the schemas it names to a document.
fn describe<P: utoipa::Path + utoipa::__dev::SchemaReferences + utoipa::__dev::Tags<'static>>(document: &mut OpenApi) {
    let mut operation = P::operation();
    let tags = <P as utoipa::__dev::Tags<'static>>::tags();
    if !tags.is_empty() {
        operation.tags.get_or_insert_with(Vec::new).extend(tags.into_iter().map(str::to_owned));
    }
    document.paths.add_path_operation(P::path(), P::methods(), operation);
    let mut schemas = Vec::new();
    P::schemas(&mut schemas);
    let components = document.components.get_or_insert_with(Default::default);
    components.schemas.extend(schemas);
}

/// Every route of the service, in the order actix tries them: `/v1/logs/search` and
/// `/v1/logs/tail` come before `/v1/logs/{id}`, which would otherwise take them for an id.
pub fn routes() -> &'static [Route] {
    static ROUTES: LazyLock<Vec<Route>> = LazyLock::new(table);
    &ROUTES
}

fn table() -> Vec<Route> {
    use Access::{Logs, Public, User, Workspace};
    let mut routes = vec![
        Route::described::<health::__path_healthz>(Public, |route| route.to(health::healthz)),
        Route::described::<docs::__path_openapi_json>(Public, |route| route.to(docs::openapi_json)),
        Route::described::<docs::__path_docs>(Public, |route| route.to(docs::docs)),
        Route::undescribed("/docs/swagger-ui-bundle.js", |route| route.to(docs::docs_bundle)),
        Route::undescribed("/docs/swagger-ui.css", |route| route.to(docs::docs_css)),
        Route::undescribed("/docs/docs.js", |route| route.to(docs::docs_init)),
        Route::described::<crate::metrics::__path_scrape>(Public, |route| route.to(crate::metrics::scrape)),
        Route::described::<health::__path_readyz>(Public, |route| route.to(health::readyz)),
        // The web dashboard: one shell for every page, and its script and style.
        Route::described::<crate::dashboard::__path_page>(Public, |route| route.to(crate::dashboard::page)),
    ];
    let other_pages = crate::dashboard::PAGES.iter().filter(|page| **page != "/");
    routes.extend(other_pages.map(|page| Route::undescribed(page, |route| route.to(crate::dashboard::page))));
    routes.extend([
        Route::undescribed("/assets/app.js", |route| route.to(crate::dashboard::script)),
        Route::undescribed("/assets/app.css", |route| route.to(crate::dashboard::style)),
        Route::described::<logs::__path_list>(Logs, |route| route.to(logs::list)),
        Route::described::<logs::__path_ingest>(Logs, |route| route.to(logs::ingest)),
        Route::described::<logs::__path_search>(Logs, |route| route.to(logs::search)),
        Route::described::<tail::__path_tail>(Logs, |route| route.to(tail::tail)),
        Route::described::<stats::__path_stats>(Logs, |route| route.to(stats::stats)),
        Route::described::<stats::__path_summary_today>(Logs, |route| route.to(stats::summary_today)),
        Route::described::<flows::__path_list>(Logs, |route| route.to(flows::list)),
        Route::described::<flows::__path_create>(Logs, |route| route.to(flows::create)),
        Route::described::<flows::__path_timeline>(Logs, |route| route.to(flows::timeline)),
        Route::described::<logs::__path_get>(Logs, |route| route.to(logs::get)),
        Route::described::<account::__path_login>(Public, |route| route.to(account::login)),
        Route::described::<account::__path_logout>(User, |route| route.to(account::logout)),
        Route::described::<device::__path_device_code>(Public, |route| route.to(device::device_code)),
        Route::described::<device::__path_token>(Public, |route| route.to(device::token)),
        Route::described::<device::__path_page>(Public, |route| route.to(device::page)),
        Route::described::<device::__path_page_post>(Public, |route| route.to(device::page_post)),
        Route::described::<device::__path_approve>(User, |route| route.to(device::approve)),
        Route::described::<device::__path_deny>(User, |route| route.to(device::deny)),
        Route::described::<account::__path_me>(User, |route| route.to(account::me)),
        Route::described::<account::__path_workspaces>(User, |route| route.to(account::workspaces)),
        Route::described::<account::__path_create_workspace>(User, |route| route.to(account::create_workspace)),
        Route::described::<account::__path_workspace>(Workspace, |route| route.to(account::workspace)),
        Route::described::<account::__path_set_plan>(Workspace, |route| route.to(account::set_plan)),
        Route::described::<team::__path_keys>(Workspace, |route| route.to(team::keys)),
        Route::described::<team::__path_create_key>(Workspace, |route| route.to(team::create_key)),
        Route::described::<team::__path_revoke_key>(Workspace, |route| route.to(team::revoke_key)),
        Route::described::<team::__path_members>(Workspace, |route| route.to(team::members)),
        Route::described::<team::__path_add_member>(Workspace, |route| route.to(team::add_member)),
        Route::described::<team::__path_set_role>(Workspace, |route| route.to(team::set_role)),
        Route::described::<team::__path_remove_member>(Workspace, |route| route.to(team::remove_member)),
        Route::described::<account::__path_sessions>(User, |route| route.to(account::sessions)),
        Route::described::<account::__path_revoke_session>(User, |route| route.to(account::revoke_session)),
    ]);
    routes
}

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
        let routes = routes();
        for (index, route) in routes.iter().enumerate() {
            let again =
                routes[index + 1..].iter().any(|other| other.method == route.method && other.path == route.path);
            assert!(!again, "{} {} is listed twice", route.method, route.path);
        }
    }
}
