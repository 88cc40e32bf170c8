//! `GET /openapi.json`: the OpenAPI 3.1 document of every route ([`crate::openapi`], made once
//! a process and given to the app as app data); and `GET /docs`: Swagger UI rendering it, from
//! files inside the binary (`assets/swagger-ui/SOURCE.md`). Neither needs a key.

use actix_web::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, X_CONTENT_TYPE_OPTIONS};
use actix_web::{HttpResponse, web};

/// The document `/openapi.json` serves ([`crate::openapi::document`]).
pub(crate) struct Document(pub(crate) &'static str);

/// The OpenAPI document.
#[utoipa::path(get, path = "/openapi.json", tag = "health", summary = "This document (OpenAPI 3.1)", security(()),
    responses((status = 200, description = "The document", content_type = "application/json")))]
pub(crate) async fn openapi_json(document: web::Data<Document>) -> HttpResponse {
    HttpResponse::Ok().content_type("application/json").body(document.0)
}

const DOCS_PAGE: &str = r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>sluice API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/docs.js"></script>
</body>
</html>
"#;

/// Scripts from this server only; Swagger UI sets inline styles and shows inline images.
const DOCS_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";

fn asset(content_type: &str, body: &'static [u8]) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header((CONTENT_SECURITY_POLICY, DOCS_POLICY))
        .insert_header((X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((CACHE_CONTROL, "public, max-age=86400"))
        .body(body)
}

/// The API reference, rendered in the browser from `/openapi.json`.
#[utoipa::path(get, path = "/docs", tag = "health", summary = "The API reference (Swagger UI)", security(()),
    responses((status = 200, description = "The page", content_type = "text/html")))]
pub(crate) async fn docs() -> HttpResponse {
    asset("text/html; charset=utf-8", DOCS_PAGE.as_bytes())
}

pub(crate) async fn docs_bundle() -> HttpResponse {
    asset("text/javascript; charset=utf-8", include_bytes!("../../assets/swagger-ui/swagger-ui-bundle.js"))
}

pub(crate) async fn docs_css() -> HttpResponse {
    asset("text/css; charset=utf-8", include_bytes!("../../assets/swagger-ui/swagger-ui.css"))
}

pub(crate) async fn docs_init() -> HttpResponse {
    asset("text/javascript; charset=utf-8", include_bytes!("../../assets/swagger-ui/docs.js"))
}
