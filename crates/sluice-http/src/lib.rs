//! The HTTP API of sluice on actix-web.
//!
//! Routes are listed in one table ([`routes()`]) that [`configure`] registers and
//! [`openapi::document`] describes; each resource has
//! its own module of small handlers. Authentication and the target workspace reach a handler
//! through the [`Authed`] extractor, every failure leaves through [`ApiError`] in the error
//! envelope of docs/API.md (Errors), and every body is read through one capped, decompressing
//! helper ([`body::read_capped`]).
//!
//! Architecture invariant: this crate knows HTTP and the store traits, never SQL or a backend.

pub mod body;
pub mod dashboard;
mod error;
mod extract;
mod fields;
pub mod limits;
pub mod metrics;
pub mod openapi;
pub mod origin;
mod params;
mod routes;
mod state;
pub mod tail;
pub mod views;

pub use error::ApiError;
pub use extract::{Authed, InWorkspace, SESSION_COOKIE, User};
pub use origin::{Origin, OriginResolver};
pub use routes::device::{CLIENT_ID, DEVICE_GRANT};
pub use routes::{Access, Route, routes};
pub use sluice_store::{Clock, system_clock, unix_now_ms};
pub use state::{AppState, DEFAULT_BODY_TIMEOUT};

use actix_web::web;

/// Largest request body, counted after decompression.
pub const MAX_BODY_BYTES: usize = 5 * 1024 * 1024;

/// The whole service as an actix `App`: counted for `/metrics` ([`metrics::track`], outermost,
/// so refusals by the limits count too), the limits every request meets first ([`limits`]),
/// then every route ([`configure`]). `HttpServer::new(move || sluice_http::app(state.clone()))`.
pub fn app(
    state: AppState,
) -> actix_web::App<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    metrics::observe_commits(&state);
    actix_web::App::new()
        .wrap(actix_web::middleware::from_fn(limits::limit_headers))
        .wrap(actix_web::middleware::from_fn(metrics::track))
        .configure(configure(state))
}

/// Registers every route of [`routes()`] (one resource per path, answering its other methods
/// with 405) and the JSON 404 for unknown paths on an actix `App` (without the limits [`app`]
/// adds): `App::new().configure(sluice_http::configure(state))`.
pub fn configure(state: AppState) -> impl FnOnce(&mut web::ServiceConfig) {
    move |config| {
        config.app_data(web::Data::new(state));
        config.app_data(web::Data::new(routes::docs::Document(openapi::document())));
        let routes = routes();
        for (index, route) in routes.iter().enumerate() {
            // A path's resource is made at its first route, with every route of that path.
            if routes[..index].iter().any(|earlier| earlier.path == route.path) {
                continue;
            }
            let resource = routes
                .iter()
                .filter(|other| other.path == route.path)
                .fold(web::resource(route.path), |resource, other| resource.route(other.to_actix()));
            config.service(resource.default_service(web::to(routes::method_not_allowed)));
        }
        config.default_service(web::to(routes::not_found));
    }
}
