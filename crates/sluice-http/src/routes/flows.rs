//! `POST /v1/flows`, `GET /v1/flows`, `GET /v1/flows/{flowId}` (docs/API.md, "Flows").

use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::Value;
use sluice_model::{FlowId, Issue, PathSegment, json_type_name};
use sluice_store::flows::{FlowFilter, FlowSummary, FlowsRead, NewFlow};

use crate::params::Params;
use crate::routes::reading::{page_of, pagination};
use crate::{ApiError, AppState, Authed, body};

/// Default and largest page of `GET /v1/flows`.
const DEFAULT_LIMIT: i64 = 50;
const MAX_LIMIT: i64 = 500;

/// The longest flow name, and the longest flow id a log may carry (DECISIONS, Flows).
const MAX_FLOW_CHARS: usize = 100;

/// The largest body `POST /v1/flows` reads: a name of 100 characters needs far less.
const MAX_CREATE_BODY: usize = 16 * 1024;

/// A flow as the API shows it.
fn flow_of(flow: &FlowSummary) -> sluice_api::Flow {
    let levels = flow.levels;
    sluice_api::Flow {
        flow_id: flow.flow_id.clone(),
        name: flow.name.clone(),
        steps: flow.steps,
        logs: levels.total(),
        first_timestamp: flow.first_timestamp,
        last_timestamp: flow.last_timestamp,
        duration_ms: flow.last_timestamp.saturating_sub(flow.first_timestamp),
        levels: sluice_api::Counts {
            debug: levels.debug,
            info: levels.info,
            warn: levels.warn,
            error: levels.error,
            total: levels.total(),
        },
        sources: flow.sources.clone(),
    }
}

/// The name a create body gives, or the issues with it. An empty body is `{}`.
fn name_of(body: &[u8]) -> Result<Option<String>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let value: Value =
        serde_json::from_slice(body).map_err(|error| ApiError::Parse(format!("Invalid JSON body: {error}")))?;
    let Value::Object(mut object) = value else {
        let kind = json_type_name(&value);
        return Err(ApiError::Validation(vec![Issue::new(Vec::new(), format!("Expected object, received {kind}"))]));
    };
    match object.remove("name") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(name)) if name.chars().count() > MAX_FLOW_CHARS => {
            Err(ApiError::invalid("name", format!("String must contain at most {MAX_FLOW_CHARS} character(s)")))
        }
        Some(Value::String(name)) if name.is_empty() => {
            Err(ApiError::invalid("name", "String must contain at least 1 character(s)"))
        }
        Some(Value::String(name)) => Ok(Some(name)),
        Some(other) => Err(ApiError::Validation(vec![Issue::new(
            vec![PathSegment::from("name")],
            format!("Expected string, received {}", json_type_name(&other)),
        )])),
    }
}

/// Makes a flow before its logs: 201 with its new id.
#[utoipa::path(post, path = "/v1/flows", tag = "flows", summary = "Create a flow (needs `ingest`)", request_body = sluice_api::CreateFlow,
    responses((status = 201, description = "Created", body = sluice_api::CreatedFlow), crate::error::Errors))]
pub(crate) async fn create(
    Authed(principal): Authed,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    Params::parse(request.query_string())?.finish()?;
    let body = body::read_capped(payload, request.headers(), MAX_CREATE_BODY, state.body_timeout).await?;
    let asked = sluice_api::CreateFlow { name: name_of(&body)? };
    let flow = NewFlow { flow_id: FlowId::generate().to_string(), name: asked.name, created_at: state.now_ms() };
    state.store.create_flow(principal.workspace.id, &flow).await?;
    Ok(HttpResponse::Created().json(sluice_api::CreatedFlow {
        flow_id: flow.flow_id,
        name: flow.name,
        created_at: flow.created_at,
    }))
}

/// A page of the workspace's flows, the most recently active first.
#[utoipa::path(get, path = "/v1/flows", tag = "flows", summary = "The workspace's flows, most recently active first", params(sluice_api::FlowParams),
    responses((status = 200, description = "A page of flows", body = sluice_api::FlowPage), crate::error::Errors))]
pub(crate) async fn list(
    Authed(principal): Authed,
    request: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let mut params = Params::parse(request.query_string())?;
    let page = page_of(&mut params, DEFAULT_LIMIT, MAX_LIMIT);
    let has_errors = match params.text("hasErrors").as_deref() {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            params.push(Issue::at(
                "hasErrors",
                format!("Expected 'true' or 'false', received '{}'", sluice_model::echo(other)),
            ));
            false
        }
    };
    let filter = FlowFilter {
        from: params.integer("from", 0),
        to: params.integer("to", 0),
        source: params.text("source"),
        environment: params.vocabulary("environment"),
        has_errors,
    };
    params.finish()?;

    let found = state.store.list_flows(principal.workspace.id, FlowsRead { filter: &filter, page }).await?;
    let pagination = pagination(page, found.flows.len(), found.has_more);
    Ok(HttpResponse::Ok().json(sluice_api::FlowPage { flows: found.flows.iter().map(flow_of).collect(), pagination }))
}

/// One flow: its summary, gaps and duplicates, and its logs in step order.
#[utoipa::path(get, path = "/v1/flows/{flowId}", tag = "flows", summary = "A flow's timeline", params(("flowId" = String, Path, description = "The flow id (1-100 characters)")),
    responses((status = 200, description = "The flow and its logs by step", body = sluice_api::FlowTimeline), crate::error::Errors))]
pub(crate) async fn timeline(
    Authed(principal): Authed,
    flow_id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    const NOT_FOUND: ApiError = ApiError::NotFound("Flow not found");
    let flow_id = flow_id.into_inner();
    if flow_id.is_empty() || flow_id.chars().count() > MAX_FLOW_CHARS {
        return Err(NOT_FOUND);
    }
    let found = state.store.flow_timeline(principal.workspace.id, &flow_id).await?.ok_or(NOT_FOUND)?;
    let flow = sluice_api::FlowDetail {
        summary: flow_of(&found.summary),
        missing_steps: found.missing_steps,
        duplicate_steps: found.duplicate_steps,
    };
    Ok(HttpResponse::Ok().json(sluice_api::FlowTimeline { flow, logs: found.logs, truncated: found.truncated }))
}
