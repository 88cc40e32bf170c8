//! `GET /v1/logs/tail`: the workspace's logs as they are ingested, as Server-Sent Events
//! (docs/API.md, "Live tail"; the hub and the stream are `crate::tail`).

use actix_web::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use actix_web::{HttpRequest, HttpResponse, web};
use sluice_model::LogId;
use sluice_store::Search;

use crate::params::Params;
use crate::routes::reading::{fields_of, filter_of, query_of};
use crate::tail::{Refused, TailStream};
use crate::{ApiError, AppState, Authed};

/// The most logs a `Last-Event-ID` replays.
const MAX_REPLAY: u32 = 1_000;

/// Opens a live tail: the replay after `Last-Event-ID` (header, else `lastEventId`), then every
/// matching log as it is committed.
#[utoipa::path(get, path = "/v1/logs/tail", tag = "logs", summary = "Live tail (Server-Sent Events)", params(sluice_api::SearchParams, sluice_api::ListParams, ("lastEventId" = Option<String>, Query, description = "Replay after this log (else the Last-Event-ID header)"), ("Last-Event-ID" = Option<String>, Header, description = "Replay after this log")),
    responses((status = 200, description = "`event: log` per matching log, `event: dropped` after a full queue, `: heartbeat` comments", content_type = "text/event-stream"), crate::error::Errors))]
pub(crate) async fn tail(
    Authed(principal): Authed,
    request: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let mut params = Params::parse(request.query_string())?;
    // `q` is optional here, but searched by the search rules when sent.
    let query = match params.text("q") {
        Some(raw) => query_of(&mut params, &raw)?,
        None => None,
    };
    let fields = fields_of(&mut params);
    let filter = filter_of(&mut params, true);
    let header = request.headers().get("last-event-id").and_then(|value| value.to_str().ok()).map(str::to_owned);
    let last_event = header.or_else(|| params.text("lastEventId"));
    params.finish()?;
    let search = query.map(|query| Search { query, fields });

    let workspace = principal.workspace.id;
    // Open first, then read the replay: a log committed in between is in both, and the stream
    // shows it once.
    let subscription =
        state.tails.subscribe(workspace, filter.clone(), search.clone()).map_err(|refused| match refused {
            Refused::TooMany => ApiError::TooManyTails,
            Refused::Closed => ApiError::Unavailable,
        })?;
    // The other servers sharing the database announce this workspace's logs from now on.
    state.tails.watch(workspace).await?;
    let mut replay = Vec::new();
    // An id this workspace never stored (or not an id) replays nothing.
    if let Some(after) = last_event.and_then(|text| text.trim().parse::<LogId>().ok())
        && state.store.get_log(workspace, after).await?.is_some()
    {
        replay = state.store.logs_after(workspace, after, MAX_REPLAY).await?;
        replay.retain(|log| crate::tail::admits(&filter, search.as_ref(), log));
    }
    let stream = TailStream::new(subscription, replay, state.heartbeat);
    Ok(HttpResponse::Ok()
        .insert_header((CONTENT_TYPE, "text/event-stream"))
        .insert_header((CACHE_CONTROL, "no-cache"))
        .insert_header(("X-Accel-Buffering", "no"))
        .streaming(stream))
}
