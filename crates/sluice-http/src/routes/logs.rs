//! `POST /v1/logs`, `GET /v1/logs`, `GET /v1/logs/search`, `GET /v1/logs/{id}`; the live tail
//! is `tail.rs`.

use actix_web::http::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, ResponseError, web};
use serde::Serialize;
use sluice_auth::{Actor, Principal};
use sluice_ingest::{Defaults, Format, Options, otlp};
use sluice_model::{Issue, KeyEnv, Log, LogId};
use sluice_query::{Parsed, Query, QueryError, SearchField};
use sluice_store::{LogFilter, LogPage, Page, Search, StoreError};

use crate::params::Params;
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
#[utoipa::path(post, path = "/v1/logs", tag = "logs", summary = "Ingest logs: JSON, JSONL, syslog, text, CSV, OBL or OTLP", params(crate::openapi::schemas::IngestParams), request_body(content((crate::openapi::schemas::IngestBody = "application/json"), (String = "application/x-ndjson"), (String = "text/plain"), (String = "text/csv"), (String = "application/x-obl"), (Vec<u8> = "application/x-protobuf")), description = "A batch of 1-100 entries (OTLP: 1,000 records), up to 5 MiB after decompression"),
    responses((status = 200, description = "Stored (OTLP: an ExportLogsServiceResponse in the request's encoding)", content((crate::openapi::schemas::IngestReply = "application/json"), (Vec<u8> = "application/x-protobuf")), headers(("X-RateLimit-Limit" = u32, description = "Requests a minute the plan allows (plans with a limit)"), ("X-RateLimit-Remaining" = u32, description = "Requests left in the window"), ("X-RateLimit-Reset" = u64, description = "Seconds until the oldest request leaves the window"))), crate::openapi::Errors))]
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
        None => HttpResponse::Ok().json(IngestResponse { success: true, count, timestamp: received_at }),
    })
}

#[derive(Serialize)]
struct IngestResponse {
    success: bool,
    count: usize,
    timestamp: i64,
}

#[derive(Serialize)]
struct ListResponse<'a> {
    logs: &'a [Log],
    pagination: Pagination,
}

#[derive(Serialize)]
struct GetResponse<'a> {
    log: &'a Log,
}

/// What a list answers about the page it returns (logs, searches, flows).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Pagination {
    limit: u32,
    offset: u64,
    count: usize,
    has_more: bool,
}

impl Pagination {
    /// What a list answers about the page it returns: `count` items, and whether more follow.
    pub(crate) fn new(page: Page, count: usize, has_more: bool) -> Self {
        Pagination { limit: page.limit, offset: page.offset, count, has_more }
    }

    /// What a list or search of logs answers about the page it returns.
    fn of(page: Page, found: &LogPage) -> Self {
        Pagination::new(page, found.logs.len(), found.has_more)
    }
}

/// The filter of a list (`with_ids`: also by user, session and flow) or of a search, read in
/// the order their issues are listed.
pub(crate) fn filter_of(params: &mut Params, with_ids: bool) -> LogFilter {
    let level = params.vocabulary("level");
    let source = params.text("source");
    let environment = params.vocabulary("environment");
    let dataset = params.text("dataset");
    let id = |name: &str| if with_ids { params.text(name) } else { None };
    let (user_id, session_id, flow_id) = (id("userId"), id("sessionId"), id("flowId"));
    LogFilter {
        level,
        source,
        environment,
        dataset,
        user_id,
        session_id,
        flow_id,
        from: params.integer("from", 0),
        to: params.integer("to", 0),
    }
}

/// The deepest a page may reach, `offset + limit` (docs/API.md, GET /v1/logs): past it a
/// list, search or flow list would read and skip that many rows to answer.
const MAX_RESULT_WINDOW: i64 = 100_000;

/// The page `limit` (at least 1, `default` when absent, at most `max`) and `offset` ask for;
/// an `offset` whose page would reach past [`MAX_RESULT_WINDOW`] is an issue.
pub(crate) fn page_of(params: &mut Params, default: i64, max: i64) -> Page {
    let limit = params.integer("limit", 1).unwrap_or(default).min(max);
    let offset = params.integer("offset", 0).unwrap_or(0);
    if offset.saturating_add(limit) > MAX_RESULT_WINDOW {
        params.push(Issue::at("offset", "Offset too large: narrow the time range with from/to"));
    }
    Page { limit: u32::try_from(limit).unwrap_or(1), offset: u64::try_from(offset).unwrap_or(0) }
}

/// A page of the workspace's logs, newest first.
#[utoipa::path(get, path = "/v1/logs", tag = "logs", summary = "List logs, newest first", params(crate::openapi::schemas::ListParams),
    responses((status = 200, description = "A page of logs", body = crate::openapi::schemas::LogPage), crate::openapi::Errors))]
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
    let pagination = Pagination::of(page, &found);
    Ok(HttpResponse::Ok().json(ListResponse { logs: &found.logs, pagination }))
}

#[derive(Serialize)]
struct SearchResponse<'a> {
    logs: &'a [Log],
    query: QueryEcho<'a>,
    pagination: Pagination,
}

#[derive(Serialize)]
struct QueryEcho<'a> {
    raw: &'a str,
    parsed: Parsed,
    fields: Vec<&'static str>,
}

/// `q` by the search rules: a query too short is the search's own 400 at once (before any
/// other complaint, docs/API.md); any other refusal is an issue pushed, and `None`.
pub(crate) fn query_of(params: &mut Params, raw: &str) -> Result<Option<Query>, ApiError> {
    match Query::parse(raw) {
        Ok(query) => Ok(Some(query)),
        Err(QueryError::TooShort) => Err(ApiError::BadRequest(sluice_query::TOO_SHORT)),
        Err(error) => {
            params.push(error.issue().unwrap_or_else(|| Issue::at("q", error.to_string())));
            Ok(None)
        }
    }
}

/// The `fields` a search looks in (all by default); unknown names are an issue pushed.
pub(crate) fn fields_of(params: &mut Params) -> Vec<SearchField> {
    SearchField::parse_list(params.text("fields").as_deref()).unwrap_or_else(|issue| {
        params.push(issue);
        Vec::new()
    })
}

/// A page of the workspace's logs matching a search query, newest first.
#[utoipa::path(get, path = "/v1/logs/search", tag = "logs", summary = "Search logs (case-insensitive substrings)", params(crate::openapi::schemas::SearchParams, crate::openapi::schemas::ListParams),
    responses((status = 200, description = "A page of matches", body = crate::openapi::schemas::SearchPage), crate::openapi::Errors))]
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
    let pagination = Pagination::of(page, &found);
    let query = QueryEcho {
        raw: search.query.raw(),
        parsed: search.query.parsed(),
        fields: search.fields.iter().map(|field| field.as_str()).collect(),
    };
    Ok(HttpResponse::Ok().json(SearchResponse { logs: &found.logs, query, pagination }))
}

/// One log of the workspace.
#[utoipa::path(get, path = "/v1/logs/{id}", tag = "logs", summary = "One log", params(("id" = String, Path, description = "The log's id")),
    responses((status = 200, description = "The log", body = crate::openapi::schemas::OneLog), crate::openapi::Errors))]
pub(crate) async fn get(
    Authed(principal): Authed,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let id: LogId = id.parse().map_err(|_| ApiError::NotFound("Log not found"))?;
    let log = state.store.get_log(principal.workspace.id, id).await?.ok_or(ApiError::NotFound("Log not found"))?;
    Ok(HttpResponse::Ok().json(GetResponse { log: &log }))
}
