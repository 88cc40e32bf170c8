//! Retention: which logs each workspace keeps, and the sweep that deletes the rest
//! (docs/API.md, "Plans: rate limits, quotas, retention").

use sluice_model::{Workspace, WorkspaceId};

use crate::{Store, StoreError};

/// A day, in ms.
const DAY_MS: i64 = 86_400_000;

/// Each workspace's cutoff at `now_ms`: its logs with a `timestamp` before it are past their
/// retention.
pub fn cutoffs(workspaces: &[Workspace], now_ms: i64) -> Vec<(WorkspaceId, i64)> {
    workspaces
        .iter()
        .map(|workspace| (workspace.id, now_ms - i64::from(workspace.limits.retention_days) * DAY_MS))
        .collect()
}

/// One sweep: deletes every workspace's logs older than its retention at `now_ms`, keeping
/// the search index and the counters in step. Returns how many logs went.
pub async fn sweep(store: &dyn Store, now_ms: i64) -> Result<u64, StoreError> {
    let workspaces = store.list_workspaces().await?;
    store.sweep(&cutoffs(&workspaces, now_ms)).await
}
