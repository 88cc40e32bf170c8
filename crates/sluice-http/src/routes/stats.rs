//! `GET /v1/stats` and `GET /v1/stats/summary`, answered from the store's rollup counters.

use actix_web::{HttpRequest, HttpResponse, web};
use sluice_query::stats::{CountBy, RollupFilter, StatsRequest, summary, summary_range_ms};

use crate::params::Params;
use crate::{ApiError, AppState, Authed};
use sluice_store::CountsRead;

/// Level counts of the workspace by day, hour or source.
#[utoipa::path(get, path = "/v1/stats", tag = "stats", summary = "Counts by level per day, hour or source", params(sluice_api::StatsParams),
    responses((status = 200, description = "The counts", body = sluice_api::Stats), crate::error::Errors))]
pub(crate) async fn stats(
    Authed(principal): Authed,
    request: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let mut params = Params::parse(request.query_string())?;
    let filter = RollupFilter {
        source: params.text("source"),
        environment: params.vocabulary("environment"),
        dataset: params.text("dataset"),
    };
    let parsed = StatsRequest::parse(
        params.text("from").as_deref(),
        params.text("to").as_deref(),
        params.text("groupBy").as_deref(),
        state.now_ms(),
    );
    let stats_request = match parsed {
        Ok(stats_request) => Some(stats_request),
        Err(issues) => {
            issues.into_iter().for_each(|issue| params.push(issue));
            None
        }
    };
    params.finish()?;
    // Issues were pushed above, so `finish` has already answered when the request is refused.
    let stats_request = stats_request.ok_or(ApiError::Internal)?;

    let (from_ms, to_ms) = stats_request.range_ms();
    let counts = state
        .store
        .level_counts(
            principal.workspace.id,
            CountsRead { from_ms, to_ms, filter: &filter, by: stats_request.count_by() },
        )
        .await?;
    Ok(HttpResponse::Ok().json(stats_request.answer(&counts)))
}

/// Today against yesterday, UTC.
#[utoipa::path(get, path = "/v1/stats/summary", tag = "stats", summary = "Today against yesterday",
    responses((status = 200, description = "The summary", body = sluice_api::Summary), crate::error::Errors))]
pub(crate) async fn summary_today(
    Authed(principal): Authed,
    request: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    // No parameters; a malformed query string is still refused like everywhere else.
    Params::parse(request.query_string())?.finish()?;
    let now = state.now_ms();
    let (from_ms, to_ms) = summary_range_ms(now);
    let counts = state
        .store
        .level_counts(
            principal.workspace.id,
            CountsRead { from_ms, to_ms, filter: &RollupFilter::default(), by: CountBy::Day },
        )
        .await?;
    Ok(HttpResponse::Ok().json(summary(now, &counts)))
}
