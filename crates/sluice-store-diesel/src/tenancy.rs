//! The queries of tenancy (workspaces, plans, API keys), written once for both stores
//! ([`tenancy!`](crate::tenancy)).

/// Implements `TenantStore` for `store`, a [`Calls`](crate::Calls) whose connection is
/// `connection`. `bootstrap_lock` is a statement that makes two servers' first starts take
/// turns, where the write transaction alone does not (PostgreSQL's; SQLite's locks the file).
///
/// diesel checks a query against one concrete connection type, so the queries both stores
/// share are macros each store expands with its own: every statement is written once and
/// type-checked against both backends.
#[macro_export]
macro_rules! tenancy {
    (store: $store:ty, connection: $connection:ty, bootstrap_lock: $bootstrap_lock:expr $(,)?) => {
        const _: () = {
            use $crate::__private::diesel::prelude::*;
            use $crate::__private::diesel::result::Error as DieselError;
            use $crate::__private::diesel_async::RunQueryDsl;
            use $crate::__private::sluice_model::{ApiKeyRecord, KeyId, Limits, Plan, Workspace, WorkspaceId};
            use $crate::__private::sluice_store::{NewApiKey, StoreError, TenantStore};
            use $crate::rows::{KeyRow, NewKeyRow, PlanChange, WorkspaceRow};
            use $crate::schema::{api_keys, workspaces};
            use $crate::{Calls, DbId};

            fn from_diesel(error: DieselError) -> StoreError {
                <$store as Calls>::from_diesel(error)
            }

            #[$crate::__private::async_trait::async_trait]
            impl TenantStore for $store {
                async fn create_workspace(&self, workspace: &Workspace) -> Result<(), StoreError> {
                    let row = WorkspaceRow::from(workspace);
                    self.write(move |connection: &mut $connection| {
                        Box::pin(async move {
                            diesel::insert_into(workspaces::table)
                                .values(&row)
                                .execute(connection)
                                .await
                                .map_err(from_diesel)?;
                            Ok(())
                        })
                    })
                    .await
                }

                async fn list_workspaces(&self) -> Result<Vec<Workspace>, StoreError> {
                    self.read(move |connection: &mut $connection| {
                        Box::pin(async move {
                            let rows: Vec<WorkspaceRow> = workspaces::table
                                .order((workspaces::created_at.asc(), workspaces::id.asc()))
                                .select(WorkspaceRow::as_select())
                                .load(connection)
                                .await
                                .map_err(from_diesel)?;
                            rows.into_iter().map(Workspace::try_from).collect()
                        })
                    })
                    .await
                }

                async fn get_workspace(&self, id: WorkspaceId) -> Result<Option<Workspace>, StoreError> {
                    self.read(move |connection: &mut $connection| {
                        Box::pin(async move {
                            let row: Option<WorkspaceRow> = workspaces::table
                                .find(DbId::from(id))
                                .select(WorkspaceRow::as_select())
                                .first(connection)
                                .await
                                .optional()
                                .map_err(from_diesel)?;
                            row.map(Workspace::try_from).transpose()
                        })
                    })
                    .await
                }

                async fn set_plan(&self, id: WorkspaceId, plan: Plan, limits: Limits) -> Result<(), StoreError> {
                    let change = PlanChange::new(plan, &limits);
                    self.write(move |connection: &mut $connection| {
                        Box::pin(async move {
                            let changed = diesel::update(workspaces::table.find(DbId::from(id)))
                                .set(change)
                                .execute(connection)
                                .await
                                .map_err(from_diesel)?;
                            if changed == 0 { Err(StoreError::NotFound("workspace")) } else { Ok(()) }
                        })
                    })
                    .await
                }

                async fn create_key(&self, key: &NewApiKey) -> Result<(), StoreError> {
                    let row = NewKeyRow::from(key);
                    self.write(move |connection: &mut $connection| {
                        Box::pin(async move {
                            diesel::insert_into(api_keys::table)
                                .values(&row)
                                .execute(connection)
                                .await
                                .map_err(from_diesel)?;
                            Ok(())
                        })
                    })
                    .await
                }

                async fn list_keys(&self, workspace: WorkspaceId) -> Result<Vec<ApiKeyRecord>, StoreError> {
                    self.read(move |connection: &mut $connection| {
                        Box::pin(async move {
                            let rows: Vec<KeyRow> = api_keys::table
                                .filter(api_keys::workspace_id.eq(DbId::from(workspace)))
                                .order((api_keys::created_at.asc(), api_keys::id.asc()))
                                .select(KeyRow::as_select())
                                .load(connection)
                                .await
                                .map_err(from_diesel)?;
                            rows.into_iter().map(ApiKeyRecord::try_from).collect()
                        })
                    })
                    .await
                }

                async fn revoke_key(&self, id: KeyId, now_ms: i64) -> Result<(), StoreError> {
                    self.write(move |connection: &mut $connection| {
                        Box::pin(async move {
                            // A key is found by id alone (the caller may not know its workspace).
                            let key = api_keys::table.filter(api_keys::id.eq(DbId::from(id)));
                            let existing: Option<Option<i64>> = key
                                .select(api_keys::revoked_at)
                                .first(connection)
                                .await
                                .optional()
                                .map_err(from_diesel)?;
                            match existing {
                                None => Err(StoreError::NotFound("key")),
                                Some(Some(_)) => Ok(()),
                                Some(None) => {
                                    diesel::update(key.filter(api_keys::revoked_at.is_null()))
                                        .set(api_keys::revoked_at.eq(now_ms))
                                        .execute(connection)
                                        .await
                                        .map_err(from_diesel)?;
                                    Ok(())
                                }
                            }
                        })
                    })
                    .await
                }

                async fn find_key(&self, hash: &[u8; 32]) -> Result<Option<(ApiKeyRecord, Workspace)>, StoreError> {
                    let hash = hash.to_vec();
                    self.read(move |connection: &mut $connection| {
                        Box::pin(async move {
                            let found: Option<(KeyRow, WorkspaceRow)> = api_keys::table
                                .inner_join(workspaces::table)
                                .filter(api_keys::hash.eq(hash))
                                .select((KeyRow::as_select(), WorkspaceRow::as_select()))
                                .first(connection)
                                .await
                                .optional()
                                .map_err(from_diesel)?;
                            found.map(|(key, workspace)| Ok((key.try_into()?, workspace.try_into()?))).transpose()
                        })
                    })
                    .await
                }

                async fn bootstrap(&self, workspace: &Workspace, key: &NewApiKey) -> Result<bool, StoreError> {
                    let (workspace, key) = (WorkspaceRow::from(workspace), NewKeyRow::from(key));
                    self.transaction(move |connection: &mut $connection| {
                        Box::pin(async move {
                            // Two servers starting together: the second waits here, then sees one.
                            let lock: Option<&str> = $bootstrap_lock;
                            if let Some(lock) = lock {
                                diesel::sql_query(lock).execute(connection).await?;
                            }
                            let existing: i64 = workspaces::table.count().get_result(connection).await?;
                            if existing > 0 {
                                return Ok(false);
                            }
                            diesel::insert_into(workspaces::table).values(&workspace).execute(connection).await?;
                            diesel::insert_into(api_keys::table).values(&key).execute(connection).await?;
                            Ok(true)
                        })
                    })
                    .await
                }
            }
        };
    };
}
