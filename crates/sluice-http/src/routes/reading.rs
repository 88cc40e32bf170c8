//! What the list, search, tail and flow routes read from their query strings, with the
//! contract's issue for each refusal: the page, the filter, the search query and its fields;
//! and what a list answers about its page.

use sluice_model::Issue;
use sluice_query::{Query, QueryError, SearchField};
use sluice_store::{LogFilter, Page};

use crate::ApiError;
use crate::params::Params;

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

/// What a list answers about the page it returns: `count` items, and whether more follow.
pub(crate) fn pagination(page: Page, count: usize, has_more: bool) -> sluice_api::Pagination {
    sluice_api::Pagination {
        limit: page.limit,
        offset: page.offset,
        count: u32::try_from(count).unwrap_or(u32::MAX),
        has_more,
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
