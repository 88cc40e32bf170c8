//! Tenancy: workspaces, their plans and API keys, and the first run's bootstrap.

use async_trait::async_trait;
use diesel::prelude::*;
use sluice_model::{ApiKeyRecord, KeyId, Limits, Plan, Workspace, WorkspaceId};
use sluice_store::{NewApiKey, StoreError, TenantStore};

use crate::connection::SqliteStore;
use crate::error::from_diesel;
use sluice_store_diesel::DbId;
use sluice_store_diesel::rows::{KeyRow, NewKeyRow, PlanChange, WorkspaceRow};
use sluice_store_diesel::schema::{api_keys, workspaces};

#[async_trait]
impl TenantStore for SqliteStore {
    async fn create_workspace(&self, workspace: &Workspace) -> Result<(), StoreError> {
        let row = WorkspaceRow::from(workspace);
        self.with_connection(move |connection| {
            diesel::insert_into(workspaces::table).values(&row).execute(connection).map_err(from_diesel)?;
            Ok(())
        })
        .await
    }

    async fn list_workspaces(&self) -> Result<Vec<Workspace>, StoreError> {
        self.with_connection(|connection| {
            let rows: Vec<WorkspaceRow> = workspaces::table
                .order((workspaces::created_at.asc(), workspaces::id.asc()))
                .select(WorkspaceRow::as_select())
                .load(connection)
                .map_err(from_diesel)?;
            rows.into_iter().map(Workspace::try_from).collect()
        })
        .await
    }

    async fn get_workspace(&self, id: WorkspaceId) -> Result<Option<Workspace>, StoreError> {
        self.with_connection(move |connection| {
            workspaces::table
                .find(DbId::from(id))
                .select(WorkspaceRow::as_select())
                .first(connection)
                .optional()
                .map_err(from_diesel)?
                .map(Workspace::try_from)
                .transpose()
        })
        .await
    }

    async fn set_plan(&self, id: WorkspaceId, plan: Plan, limits: Limits) -> Result<(), StoreError> {
        let change = PlanChange::new(plan, &limits);
        self.with_connection(move |connection| {
            let changed = diesel::update(workspaces::table.find(DbId::from(id)))
                .set(change)
                .execute(connection)
                .map_err(from_diesel)?;
            if changed == 0 { Err(StoreError::NotFound("workspace")) } else { Ok(()) }
        })
        .await
    }

    async fn create_key(&self, key: &NewApiKey) -> Result<(), StoreError> {
        let row = NewKeyRow::from(key);
        self.with_connection(move |connection| {
            diesel::insert_into(api_keys::table).values(&row).execute(connection).map_err(from_diesel)?;
            Ok(())
        })
        .await
    }

    async fn list_keys(&self, workspace: WorkspaceId) -> Result<Vec<ApiKeyRecord>, StoreError> {
        self.with_connection(move |connection| {
            let rows: Vec<KeyRow> = api_keys::table
                .filter(api_keys::workspace_id.eq(DbId::from(workspace)))
                .order((api_keys::created_at.asc(), api_keys::id.asc()))
                .select(KeyRow::as_select())
                .load(connection)
                .map_err(from_diesel)?;
            rows.into_iter().map(ApiKeyRecord::try_from).collect()
        })
        .await
    }

    async fn revoke_key(&self, id: KeyId, now_ms: i64) -> Result<(), StoreError> {
        self.with_connection(move |connection| {
            let key = api_keys::table.find(DbId::from(id));
            let exists: Option<Option<i64>> =
                key.select(api_keys::revoked_at).first(connection).optional().map_err(from_diesel)?;
            match exists {
                None => Err(StoreError::NotFound("key")),
                Some(Some(_)) => Ok(()),
                Some(None) => {
                    diesel::update(key.filter(api_keys::revoked_at.is_null()))
                        .set(api_keys::revoked_at.eq(now_ms))
                        .execute(connection)
                        .map_err(from_diesel)?;
                    Ok(())
                }
            }
        })
        .await
    }

    async fn find_key(&self, hash: &[u8; 32]) -> Result<Option<(ApiKeyRecord, Workspace)>, StoreError> {
        let hash = hash.to_vec();
        self.with_connection(move |connection| {
            let found: Option<(KeyRow, WorkspaceRow)> = api_keys::table
                .inner_join(workspaces::table)
                .filter(api_keys::hash.eq(hash))
                .select((KeyRow::as_select(), WorkspaceRow::as_select()))
                .first(connection)
                .optional()
                .map_err(from_diesel)?;
            found.map(|(key, workspace)| Ok((key.try_into()?, workspace.try_into()?))).transpose()
        })
        .await
    }

    async fn bootstrap(&self, workspace: &Workspace, key: &NewApiKey) -> Result<bool, StoreError> {
        let workspace = WorkspaceRow::from(workspace);
        let key = NewKeyRow::from(key);
        self.with_connection(move |connection| {
            connection
                .immediate_transaction(|connection| {
                    let existing: i64 = workspaces::table.count().get_result(connection)?;
                    if existing > 0 {
                        return Ok(false);
                    }
                    diesel::insert_into(workspaces::table).values(&workspace).execute(connection)?;
                    diesel::insert_into(api_keys::table).values(&key).execute(connection)?;
                    Ok(true)
                })
                .map_err(from_diesel)
        })
        .await
    }
}
