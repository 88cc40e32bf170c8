//! Test support (feature `testing`): a database as the build before blocks left it, its logs
//! kept as rows, for the upgrade's tests.

use std::path::Path;

use diesel::prelude::*;
use diesel::sql_types::{Binary, Integer, Nullable, Text};
use diesel_migrations::MigrationHarness;
use sluice_model::{JsonObject, Log, WorkspaceId};
use sluice_store::StoreError;
use sluice_store::rows::{step_index_column, tags_column};

use crate::connection::MIGRATIONS;
use crate::error::backend;

/// The first migration of the block layout: a database made before it keeps logs as rows.
const BLOCKS_MIGRATION: &str = "2026-12-08-000000_blocks";

/// Makes a database at `path` with the schema of the build before blocks, holding `logs` as
/// rows of `logs` (each with its workspace), as that build wrote them.
pub fn rows_database(path: &Path, logs: &[(WorkspaceId, Log)]) -> Result<(), StoreError> {
    let url = path.to_str().ok_or_else(|| backend("the database path is not UTF-8"))?;
    let mut connection = SqliteConnection::establish(url).map_err(backend)?;
    diesel::migration::MigrationConnection::setup(&mut connection).map_err(backend)?;
    let migrations = diesel::migration::MigrationSource::<diesel::sqlite::Sqlite>::migrations(&MIGRATIONS)
        .map_err(|error| backend(error.to_string()))?;
    for migration in migrations {
        if migration.name().to_string().as_str() >= BLOCKS_MIGRATION {
            break;
        }
        connection.run_migration(&*migration).map_err(|error| backend(error.to_string()))?;
    }
    connection
        .transaction(|connection| {
            for (workspace, log) in logs {
                let entry = &log.entry;
                diesel::sql_query(
                    "INSERT INTO logs (workspace_id, id, ts, level, environment, source, dataset, message, \
                     version, user_id, session_id, request_id, data, error_name, error_stack, tags, flow_id, \
                     step_index, country, ip_address) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
                )
                .bind::<Binary, _>(workspace.as_bytes().as_slice())
                .bind::<Binary, _>(log.id.as_bytes().as_slice())
                .bind::<diesel::sql_types::BigInt, _>(entry.timestamp)
                .bind::<Text, _>(entry.level.as_str())
                .bind::<Text, _>(entry.environment.as_str())
                .bind::<Text, _>(entry.source.as_str())
                .bind::<Text, _>(entry.dataset.as_str())
                .bind::<Text, _>(entry.message.as_str())
                .bind::<Nullable<Text>, _>(entry.version.as_deref())
                .bind::<Nullable<Text>, _>(entry.user_id.as_deref())
                .bind::<Nullable<Text>, _>(entry.session_id.as_deref())
                .bind::<Nullable<Text>, _>(entry.request_id.as_deref())
                .bind::<Nullable<Text>, _>(entry.data.as_ref().map(JsonObject::as_str))
                .bind::<Nullable<Text>, _>(entry.error_name.as_deref())
                .bind::<Nullable<Text>, _>(entry.error_stack.as_deref())
                .bind::<Nullable<Text>, _>(tags_column(entry))
                .bind::<Nullable<Text>, _>(entry.flow_id.as_deref())
                .bind::<Nullable<Integer>, _>(step_index_column(entry))
                .bind::<Nullable<Text>, _>(log.country.as_deref())
                .bind::<Nullable<Text>, _>(log.ip_address.as_deref())
                .execute(connection)?;
            }
            Ok::<_, diesel::result::Error>(())
        })
        .map_err(|error| backend(error.to_string()))
}

/// Logs kept in blocks and logs still kept as rows, counted in the file at `path`.
pub fn stored_logs(path: &Path) -> Result<(u64, u64), StoreError> {
    let url = path.to_str().ok_or_else(|| backend("the database path is not UTF-8"))?;
    let mut connection = SqliteConnection::establish(url).map_err(backend)?;
    let in_blocks: Option<i64> = crate::schema::blocks::table
        .select(diesel::dsl::sum(crate::schema::blocks::rows))
        .first(&mut connection)
        .map_err(backend)?;
    let as_rows = crate::upgrade::rows_left(&mut connection)?;
    Ok((u64::try_from(in_blocks.unwrap_or(0)).unwrap_or(0), as_rows))
}

/// The logs of each block in the file at `path`, in block order.
pub fn block_sizes(path: &Path) -> Result<Vec<u32>, StoreError> {
    let url = path.to_str().ok_or_else(|| backend("the database path is not UTF-8"))?;
    let mut connection = SqliteConnection::establish(url).map_err(backend)?;
    let sizes: Vec<i32> = crate::schema::blocks::table
        .order(crate::schema::blocks::id)
        .select(crate::schema::blocks::rows)
        .load(&mut connection)
        .map_err(backend)?;
    Ok(sizes.into_iter().map(|rows| rows.max(0) as u32).collect())
}
