//! Tenancy: workspaces, their plans and API keys, and the first workspace of a new server.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use sluice_model::{ApiKeyRecord, KeyId, Limits, Plan, Workspace, WorkspaceId};
use sluice_store::{NewApiKey, StoreError, TenantStore};

use crate::PgStore;
use crate::error::from_diesel;
use sluice_store_diesel::DbId;
use sluice_store_diesel::rows::{KeyRow, NewKeyRow, PlanChange, WorkspaceRow};
use sluice_store_diesel::schema::{api_keys, workspaces};

#[async_trait]
impl TenantStore for PgStore {
    async fn create_workspace(&self, workspace: &Workspace) -> Result<(), StoreError> {
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            diesel::insert_into(workspaces::table)
                .values(&WorkspaceRow::from(workspace))
                .execute(&mut connection)
                .await
                .map_err(from_diesel)?;
            Ok(())
        })
        .await
    }

    async fn list_workspaces(&self) -> Result<Vec<Workspace>, StoreError> {
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            let rows: Vec<WorkspaceRow> = workspaces::table
                .order((workspaces::created_at.asc(), workspaces::id.asc()))
                .select(WorkspaceRow::as_select())
                .load(&mut connection)
                .await
                .map_err(from_diesel)?;
            rows.into_iter().map(Workspace::try_from).collect()
        })
        .await
    }

    async fn get_workspace(&self, id: WorkspaceId) -> Result<Option<Workspace>, StoreError> {
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            workspaces::table
                .find(DbId::from(id))
                .select(WorkspaceRow::as_select())
                .first(&mut connection)
                .await
                .optional()
                .map_err(from_diesel)?
                .map(Workspace::try_from)
                .transpose()
        })
        .await
    }

    async fn set_plan(&self, id: WorkspaceId, plan: Plan, limits: Limits) -> Result<(), StoreError> {
        let row = PlanChange::new(plan, &limits);
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            let changed = diesel::update(workspaces::table.find(DbId::from(id)))
                .set(row)
                .execute(&mut connection)
                .await
                .map_err(from_diesel)?;
            if changed == 0 { Err(StoreError::NotFound("workspace")) } else { Ok(()) }
        })
        .await
    }

    async fn create_key(&self, key: &NewApiKey) -> Result<(), StoreError> {
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            diesel::insert_into(api_keys::table)
                .values(&NewKeyRow::from(key))
                .execute(&mut connection)
                .await
                .map_err(from_diesel)?;
            Ok(())
        })
        .await
    }

    async fn list_keys(&self, workspace: WorkspaceId) -> Result<Vec<ApiKeyRecord>, StoreError> {
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            let rows: Vec<KeyRow> = api_keys::table
                .filter(api_keys::workspace_id.eq(DbId::from(workspace)))
                .order((api_keys::created_at.asc(), api_keys::id.asc()))
                .select(KeyRow::as_select())
                .load(&mut connection)
                .await
                .map_err(from_diesel)?;
            rows.into_iter().map(ApiKeyRecord::try_from).collect()
        })
        .await
    }

    async fn revoke_key(&self, id: KeyId, now_ms: i64) -> Result<(), StoreError> {
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            // A key is found by id alone (the caller may not know its workspace).
            let existing: Option<Option<i64>> = api_keys::table
                .filter(api_keys::id.eq(DbId::from(id)))
                .select(api_keys::revoked_at)
                .first(&mut connection)
                .await
                .optional()
                .map_err(from_diesel)?;
            match existing {
                None => Err(StoreError::NotFound("key")),
                Some(Some(_)) => Ok(()),
                Some(None) => {
                    diesel::update(
                        api_keys::table.filter(api_keys::id.eq(DbId::from(id))).filter(api_keys::revoked_at.is_null()),
                    )
                    .set(api_keys::revoked_at.eq(now_ms))
                    .execute(&mut connection)
                    .await
                    .map_err(from_diesel)?;
                    Ok(())
                }
            }
        })
        .await
    }

    async fn find_key(&self, hash: &[u8; 32]) -> Result<Option<(ApiKeyRecord, Workspace)>, StoreError> {
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            let found: Option<(KeyRow, WorkspaceRow)> = api_keys::table
                .inner_join(workspaces::table)
                .filter(api_keys::hash.eq(hash.to_vec()))
                .select((KeyRow::as_select(), WorkspaceRow::as_select()))
                .first(&mut connection)
                .await
                .optional()
                .map_err(from_diesel)?;
            found.map(|(key, workspace)| Ok((key.try_into()?, workspace.try_into()?))).transpose()
        })
        .await
    }

    async fn bootstrap(&self, workspace: &Workspace, key: &NewApiKey) -> Result<bool, StoreError> {
        self.with_deadline(async move {
            let workspace = WorkspaceRow::from(workspace);
            let key = NewKeyRow::from(key);
            let mut connection = self.connection().await?;
            (*connection)
                .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                    // Two servers starting together: the second waits here, then sees one.
                    diesel::sql_query("LOCK TABLE workspaces IN EXCLUSIVE MODE").execute(connection).await?;
                    let existing: i64 = workspaces::table.count().get_result(connection).await?;
                    if existing > 0 {
                        return Ok(false);
                    }
                    diesel::insert_into(workspaces::table).values(&workspace).execute(connection).await?;
                    diesel::insert_into(api_keys::table).values(&key).execute(connection).await?;
                    Ok(true)
                })
                .await
                .map_err(from_diesel)
        })
        .await
    }
}
