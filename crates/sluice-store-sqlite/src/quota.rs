//! The monthly quota: each insert counts its logs in its workspace's usage of their months,
//! refused when that would pass the quota, and the usage read back.

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{BigInt, Binary};
use sluice_model::WorkspaceId;

/// Counts `?3` logs in the workspace's usage of month `?2`, unless that would pass its quota
/// (as stored now; no workspace row means no quota): then nothing is counted and no row comes
/// back. Run under the write lock, so batches are counted one after another. Public for the
/// benchmark of what the check costs an insert.
pub const COUNT_USAGE: &str = "INSERT INTO usage_monthly AS u (workspace_id, month, logs) \
     SELECT ?1, ?2, ?3 FROM (SELECT (SELECT monthly_quota FROM workspaces WHERE id = ?1) AS q) AS quota \
     WHERE q IS NULL OR ?3 <= q \
     ON CONFLICT (workspace_id, month) DO UPDATE SET logs = u.logs + excluded.logs \
     WHERE (SELECT monthly_quota FROM workspaces WHERE id = ?1) IS NULL \
     OR u.logs + excluded.logs <= (SELECT monthly_quota FROM workspaces WHERE id = ?1) \
     RETURNING logs";

/// A row of [`COUNT_USAGE`]'s answer.
#[derive(QueryableByName)]
struct Counted {
    #[diesel(sql_type = BigInt)]
    #[diesel(column_name = logs)]
    _logs: i64,
}

/// Counts a batch's logs in its workspace's usage of each month (see [`COUNT_USAGE`]); false,
/// with nothing counted, when that would pass the quota. A batch of one month (nearly all) is
/// one statement that changes nothing when refused; one that spans months counts them inside a
/// savepoint, undone when a later month refuses.
pub(crate) fn count_usage(
    connection: &mut SqliteConnection,
    workspace: &WorkspaceId,
    months: &[(i64, i64)],
) -> Result<bool, DieselError> {
    let count = |connection: &mut SqliteConnection| -> Result<bool, DieselError> {
        for (month, count) in months {
            let counted: Vec<Counted> = diesel::sql_query(COUNT_USAGE)
                .bind::<Binary, _>(workspace.as_bytes().as_slice())
                .bind::<BigInt, _>(*month)
                .bind::<BigInt, _>(*count)
                .load(connection)?;
            if counted.is_empty() {
                return Ok(false);
            }
        }
        Ok(true)
    };
    if months.len() <= 1 {
        return count(connection);
    }
    match connection
        .transaction(|connection| if count(connection)? { Ok(()) } else { Err(DieselError::RollbackTransaction) })
    {
        Ok(()) => Ok(true),
        Err(DieselError::RollbackTransaction) => Ok(false),
        Err(error) => Err(error),
    }
}
