//! `POST /v1/logs`, `GET /v1/logs`, `GET /v1/logs/search`, `GET /v1/logs/{id}`; the live tail
//! is `tail.rs`.

use actix_web::http::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, ResponseError, web};
use sluice_auth::{Actor, Principal};
use sluice_ingest::{Defaults, Format, Options, otlp};
use sluice_model::{KeyEnv, Log, LogId};
use sluice_store::{Search, StoreError};

use crate::params::Params;
use crate::routes::reading::{fields_of, filter_of, page_of, pagination, query_of};
use crate::{ApiError, AppState, Authed, MAX_BODY_BYTES, body};

/// Default and largest page of `GET /v1/logs`.
const LIST_DEFAULT_LIMIT: i64 = 100;
const LIST_MAX_LIMIT: i64 = 1000;
/// Default and largest page of `GET /v1/logs/search`.
const SEARCH_DEFAULT_LIMIT: i64 = 50;
const SEARCH_MAX_LIMIT: i64 = 500;

/// The format of a body: the `format` parameter, else a known `Content-Type`, else a guess;
/// OTLP when the `Content-Type` is protobuf (and no `format` is named) or when a JSON body's
/// top level has `resourceLogs` (DECISIONS, "OTLP/HTTP").
fn resolve_format(params: &mut Params, request: &HttpRequest, body: &[u8]) -> (Format, Option<otlp::Encoding>) {
    let named = params.vocabulary::<Format>("format");
    let content_type = request.headers().get(CONTENT_TYPE).and_then(|value| value.to_str().ok());
    if named.is_none() && content_type.and_then(otlp::Encoding::from_content_type).is_some() {
        return (Format::Otlp, Some(otlp::Encoding::Protobuf));
    }
    let format =
        named.or_else(|| content_type.and_then(Format::from_content_type)).unwrap_or_else(|| Format::sniff(body));
    if format == Format::Json && otlp::is_otlp_json(body) {
        return (Format::Otlp, Some(otlp::Encoding::Json));
    }
    (format, None)
}

/// The environment of an OTLP record that names none and whose query gives none: the key's
/// (`live` production, `test` development).
fn key_environment(principal: &Principal) -> Option<String> {
    match &principal.actor {
        Actor::Key(key) => Some(match key.env {
            KeyEnv::Live => "production".to_owned(),
            KeyEnv::Test => "development".to_owned(),
        }),
        Actor::User(..) => None,
    }
}

/// Ingests one batch, all or nothing. In a workspace with a rate limit the request is counted
/// first, and every answer, refusals and errors included, carries the `X-RateLimit-*` headers.
#[utoipa::path(post, path = "/v1/logs", tag = "logs", summary = "Ingest logs: JSON, JSONL, syslog, text, CSV, OBL or OTLP", params(sluice_api::IngestParams), request_body(content((sluice_api::IngestBody = "application/json"), (String = "application/x-ndjson"), (String = "text/plain"), (String = "text/csv"), (String = "application/x-obl"), (Vec<u8> = "application/x-protobuf")), description = "A batch of 1-100 entries (OTLP: 1,000 records), up to 5 MiB after decompression"),
    responses((status = 200, description = "Stored (OTLP: an ExportLogsServiceResponse in the request's encoding)", content((sluice_api::IngestReply = "application/json"), (Vec<u8> = "application/x-protobuf")), headers(("X-RateLimit-Limit" = u32, description = "Requests a minute the plan allows (plans with a limit)"), ("X-RateLimit-Remaining" = u32, description = "Requests left in the window"), ("X-RateLimit-Reset" = u64, description = "Seconds until the oldest request leaves the window"))), crate::error::Errors))]
pub(crate) async fn ingest(
    Authed(principal): Authed,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    let workspace = &principal.workspace;
    let now = state.now_ms();
    let decision = match workspace.limits.requests_per_minute {
        Some(limit) => Some(state.limiter.acquire(workspace.id, limit, now).await),
        None => None,
    };
    let mut response = match decision {
        Some(decision) if !decision.allowed => {
            ApiError::RateLimited { retry_after: decision.retry_after_seconds() }.error_response()
        }
        _ => match ingest_batch(&principal, &request, payload, &state, now).await {
            Ok(response) => response,
            Err(error) => error.error_response(),
        },
    };
    if let Some(decision) = decision {
        let headers = response.headers_mut();
        for (name, value) in [
            ("x-ratelimit-limit", u64::from(decision.limit)),
            ("x-ratelimit-remaining", u64::from(decision.remaining)),
            ("x-ratelimit-reset", decision.reset_seconds),
        ] {
            headers.insert(HeaderName::from_static(name), HeaderValue::from(value));
        }
    }
    response
}

/// Reads, parses and stores one batch (within the workspace's monthly quota).
async fn ingest_batch(
    principal: &Principal,
    request: &HttpRequest,
    payload: web::Payload,
    state: &AppState,
    received_at: i64,
) -> Result<HttpResponse, ApiError> {
    let mut params = Params::parse(request.query_string())?;
    let defaults = Defaults {
        source: params.text("source").map(Into::into),
        environment: params.text("environment"),
        level: params.text("level"),
        dataset: params.text("dataset").map(Into::into),
    };
    let body = body::read_capped(payload, request.headers(), MAX_BODY_BYTES, state.body_timeout).await?;
    let (format, otlp_encoding) = resolve_format(&mut params, request, &body);
    params.finish()?;

    let mut options = Options { defaults, received_at_ms: received_at, ..Options::new(received_at) };
    let (entries, otlp_answer) = match otlp_encoding {
        Some(encoding) => {
            if options.defaults.environment.is_none() {
                options.defaults.environment = key_environment(principal);
            }
            let mut batch = otlp::parse_otlp(encoding, &body, &options)?;
            let entries = std::mem::take(&mut batch.entries);
            (entries, Some((batch.response(encoding), batch.rejected)))
        }
        None => (sluice_ingest::parse(format, &body, &options)?.entries, None),
    };
    let rejected = otlp_answer.as_ref().map_or(0, |(_, rejected)| *rejected);
    let workspace = principal.workspace.id;
    let client = state.origins.resolve(request.peer_addr(), request.headers());
    let ip_address = client.ip.map(|ip| ip.to_string());
    let ids = LogId::batch(entries.len());
    let logs: Vec<Log> = entries
        .into_iter()
        .zip(ids)
        .map(|(entry, id)| Log { id, entry, country: client.country.clone(), ip_address: ip_address.clone() })
        .collect();
    let count = logs.len();
    // The tails open now get the logs once they are committed, encoded here once for all.
    let tailed = state.tails.prepare(workspace, &logs);
    let announced = state.tails.announces().then(|| logs.iter().map(|log| (log.id, log.entry.timestamp)).collect());
    // An OTLP request whose every record was refused (or that held none) stores nothing.
    if count > 0 {
        match state.writer.insert(workspace, logs).await {
            Err(StoreError::QuotaExceeded) => return Err(ApiError::quota_exceeded(received_at)),
            other => other?,
        }
    }
    state.metrics.ingested(format.as_str(), count, body.len());
    if rejected > 0 {
        state.metrics.rejected("otlp_record", rejected as u64);
    }
    if let Some(tailed) = tailed {
        tailed.publish();
    }
    if let Some(logs) = announced {
        state.tails.announce(workspace, logs);
    }
    Ok(match otlp_answer {
        Some(((content_type, answer), _)) => HttpResponse::Ok().content_type(content_type).body(answer),
        None => {
            HttpResponse::Ok().json(sluice_api::Ingested { success: true, count: count as u64, timestamp: received_at })
        }
    })
}

/// A page of the workspace's logs, newest first.
#[utoipa::path(get, path = "/v1/logs", tag = "logs", summary = "List logs, newest first", params(sluice_api::ListParams),
    responses((status = 200, description = "A page of logs", body = sluice_api::LogPage), crate::error::Errors))]
pub(crate) async fn list(
    Authed(principal): Authed,
    request: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let mut params = Params::parse(request.query_string())?;
    let page = page_of(&mut params, LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT);
    let filter = filter_of(&mut params, true);
    params.finish()?;

    let found = state.store.list_logs(principal.workspace.id, &filter, page).await?;
    let pagination = pagination(page, found.logs.len(), found.has_more);
    Ok(HttpResponse::Ok().json(sluice_api::LogPage { logs: found.logs, pagination }))
}

/// A page of the workspace's logs matching a search query, newest first.
#[utoipa::path(get, path = "/v1/logs/search", tag = "logs", summary = "Search logs (case-insensitive substrings)", params(sluice_api::SearchParams, sluice_api::ListParams),
    responses((status = 200, description = "A page of matches", body = sluice_api::SearchPage), crate::error::Errors))]
pub(crate) async fn search(
    Authed(principal): Authed,
    request: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let mut params = Params::parse(request.query_string())?;
    // A missing `q` is an empty one; its own message comes before any other complaint
    // (docs/API.md, search).
    let raw = params.text("q").unwrap_or_default();
    let query = query_of(&mut params, &raw)?;
    let fields = fields_of(&mut params);
    let page = page_of(&mut params, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT);
    let filter = filter_of(&mut params, false);
    params.finish()?;
    // A refused query pushed its issue above, so `finish` has already answered for it.
    let query = query.ok_or(ApiError::Internal)?;

    let search = Search { query, fields };
    let found =
        state.store.search_logs(principal.workspace.id, &search, &filter, page).await.map_err(ApiError::from_search)?;
    let pagination = pagination(page, found.logs.len(), found.has_more);
    let query = sluice_api::QueryEcho {
        raw: search.query.raw().to_owned(),
        parsed: search.query.parsed(),
        fields: search.fields.iter().map(|field| field.as_str().to_owned()).collect(),
    };
    Ok(HttpResponse::Ok().json(sluice_api::SearchPage { logs: found.logs, query, pagination }))
}

/// One log of the workspace.
#[utoipa::path(get, path = "/v1/logs/{id}", tag = "logs", summary = "One log", params(("id" = String, Path, description = "The log's id")),
    responses((status = 200, description = "The log", body = sluice_api::OneLog), crate::error::Errors))]
pub(crate) async fn get(
    Authed(principal): Authed,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let id: LogId = id.parse().map_err(|_| ApiError::NotFound("Log not found"))?;
    let log = state.store.get_log(principal.workspace.id, id).await?.ok_or(ApiError::NotFound("Log not found"))?;
    Ok(HttpResponse::Ok().json(sluice_api::OneLog { log }))
}
