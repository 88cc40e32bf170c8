//! The queries of accounts (users, memberships, sessions, device sign-ins), written once for
//! both stores ([`accounts!`](crate::accounts)).

/// Implements `AccountStore` for `store`, a [`Calls`](crate::Calls) whose connection is
/// `connection`. `lock_rows` is what a transaction's `SELECT` adds to lock the rows it read
/// until it ends: `.for_update()` on PostgreSQL, nothing on SQLite (whose write transaction
/// locks the file). See [`tenancy!`](crate::tenancy) for why this is a macro.
#[macro_export]
macro_rules! accounts {
    (store: $store:ty, connection: $connection:ty, lock_rows: [$($lock:tt)*] $(,)?) => {
        const _: () = {
            use $crate::__private::diesel::prelude::*;
            use $crate::__private::diesel::result::{DatabaseErrorKind, Error as DieselError};
            use $crate::__private::diesel_async::RunQueryDsl;
            use $crate::__private::sluice_model::{
                DeviceGrant, Role, SessionId, SessionRecord, User, UserId, Workspace, WorkspaceId,
            };
            use $crate::__private::sluice_store::StoreError;
            use $crate::__private::sluice_store::accounts::{
                self, AccountStore, DevicePoll, Member, MemberChange, NewDeviceCode, NewSession, NewUser,
                SessionSeed,
            };
            use $crate::__private::sluice_store::rows::parse_column;
            use $crate::rows::{DeviceRow, SessionRow, UserRow, WorkspaceRow};
            use $crate::schema::{device_codes, memberships, sessions, users, workspaces};
            use $crate::{Calls, DbId, TransactionError};

            fn from_diesel(error: DieselError) -> StoreError {
                <$store as Calls>::from_diesel(error)
            }

            /// A membership change in its transaction: the workspace row locked (so two changes
            /// of one workspace's owners take turns), the last-owner rule, then the change.
            async fn change_member_in(
                connection: &mut $connection,
                workspace: DbId,
                user: DbId,
                change: MemberChange,
                keep_an_owner: bool,
                now_ms: i64,
            ) -> Result<(), TransactionError> {
                let locked: Option<DbId> = workspaces::table
                    .find(workspace)
                    .select(workspaces::id)
                    $($lock)*
                    .first(connection)
                    .await
                    .optional()?;
                if locked.is_none() {
                    return Err(StoreError::NotFound("workspace").into());
                }
                let exists: i64 = users::table.filter(users::id.eq(user)).count().get_result(connection).await?;
                if exists == 0 {
                    return Err(StoreError::NotFound("user").into());
                }
                let membership = memberships::table
                    .filter(memberships::workspace_id.eq(workspace))
                    .filter(memberships::user_id.eq(user));
                let current: Option<String> =
                    membership.select(memberships::role).first(connection).await.optional()?;
                let current: Option<Role> =
                    current.as_deref().map(|role| parse_column(role, "member role")).transpose()?;
                let owners = if accounts::counts_owners(current, keep_an_owner) {
                    let owners: i64 = memberships::table
                        .filter(memberships::workspace_id.eq(workspace))
                        .filter(memberships::role.eq(Role::Owner.as_str()))
                        .count()
                        .get_result(connection)
                        .await?;
                    Some(owners)
                } else {
                    None
                };
                if let Some(refused) = accounts::refusal(change, current, owners) {
                    return Err(refused.into());
                }
                match change {
                    MemberChange::Remove => {
                        diesel::delete(membership).execute(connection).await?;
                    }
                    MemberChange::Add(role) | MemberChange::Set(role) | MemberChange::Role(role) => {
                        diesel::insert_into(memberships::table)
                            .values((
                                memberships::workspace_id.eq(workspace),
                                memberships::user_id.eq(user),
                                memberships::role.eq(role.as_str()),
                                memberships::created_at.eq(now_ms),
                            ))
                            .on_conflict((memberships::workspace_id, memberships::user_id))
                            .do_update()
                            .set(memberships::role.eq(role.as_str()))
                            .execute(connection)
                            .await?;
                    }
                }
                Ok(())
            }

            #[$crate::__private::async_trait::async_trait]
            impl AccountStore for $store {
                async fn create_user(&self, user: &NewUser) -> Result<(), StoreError> {
                    let row = UserRow::from(&user.user);
                    let email_key = accounts::email_key(&user.user.email);
                    let password_hash = user.password_hash.clone();
                    self.write(move |connection: &mut $connection| {
                        Box::pin(async move {
                            diesel::insert_into(users::table)
                                .values((&row, users::email_key.eq(email_key), users::password_hash.eq(password_hash)))
                                .execute(connection)
                                .await
                                .map_err(|error| match error {
                                    DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _) => {
                                        StoreError::Conflict(accounts::EMAIL_TAKEN)
                                    }
                                    other => from_diesel(other),
                                })?;
                            Ok(())
                        })
                    })
                    .await
                }

                async fn get_user(&self, id: UserId) -> Result<Option<User>, StoreError> {
                    self.read(move |connection: &mut $connection| {
                        Box::pin(async move {
                            let row: Option<UserRow> = users::table
                                .find(DbId::from(id))
                                .select(UserRow::as_select())
                                .first(connection)
                                .await
                                .optional()
                                .map_err(from_diesel)?;
                            Ok(row.map(User::from))
                        })
                    })
                    .await
                }

                async fn find_user_by_email(&self, email: &str) -> Result<Option<(User, String)>, StoreError> {
                    let key = accounts::email_key(email);
                    self.read(move |connection: &mut $connection| {
                        Box::pin(async move {
                            let row: Option<(UserRow, String)> = users::table
                                .filter(users::email_key.eq(key))
                                .select((UserRow::as_select(), users::password_hash))
                                .first(connection)
                                .await
                                .optional()
                                .map_err(from_diesel)?;
                            Ok(row.map(|(user, hash)| (User::from(user), hash)))
                        })
                    })
                    .await
                }

                async fn change_member(
                    &self,
                    workspace: WorkspaceId,
                    user: UserId,
                    change: MemberChange,
                    keep_an_owner: bool,
                    now_ms: i64,
                ) -> Result<(), StoreError> {
                    let (workspace, user) = (DbId::from(workspace), DbId::from(user));
                    self.transaction(move |connection: &mut $connection| {
                        Box::pin(change_member_in(connection, workspace, user, change, keep_an_owner, now_ms))
                    })
                    .await
                }

                async fn members(&self, workspace: WorkspaceId) -> Result<Vec<Member>, StoreError> {
                    self.read(move |connection: &mut $connection| {
                        Box::pin(async move {
                            let rows: Vec<(UserRow, String, i64)> = memberships::table
                                .inner_join(users::table)
                                .filter(memberships::workspace_id.eq(DbId::from(workspace)))
                                .order((users::email_key.asc(), users::id.asc()))
                                .select((UserRow::as_select(), memberships::role, memberships::created_at))
                                .load(connection)
                                .await
                                .map_err(from_diesel)?;
                            rows.into_iter()
                                .map(|(user, role, since)| {
                                    Ok(Member { user: user.into(), role: parse_column(&role, "member role")?, since })
                                })
                                .collect()
                        })
                    })
                    .await
                }

                async fn memberships(&self, user: UserId) -> Result<Vec<(Workspace, Role)>, StoreError> {
                    self.read(move |connection: &mut $connection| {
                        Box::pin(async move {
                            let rows: Vec<(WorkspaceRow, String)> = memberships::table
                                .inner_join(workspaces::table)
                                .filter(memberships::user_id.eq(DbId::from(user)))
                                .order((workspaces::name.asc(), workspaces::id.asc()))
                                .select((WorkspaceRow::as_select(), memberships::role))
                                .load(connection)
                                .await
                                .map_err(from_diesel)?;
                            rows.into_iter()
                                .map(|(workspace, role)| Ok((workspace.try_into()?, parse_column(&role, "member role")?)))
                                .collect()
                        })
                    })
                    .await
                }

                async fn create_session(&self, session: &NewSession) -> Result<(), StoreError> {
                    let (row, hash) = (SessionRow::from(&session.record), session.hash.to_vec());
                    self.write(move |connection: &mut $connection| {
                        Box::pin(async move {
                            diesel::insert_into(sessions::table)
                                .values((&row, sessions::hash.eq(hash)))
                                .execute(connection)
                                .await
                                .map_err(from_diesel)?;
                            Ok(())
                        })
                    })
                    .await
                }

                async fn find_session(&self, hash: &[u8; 32]) -> Result<Option<(SessionRecord, User)>, StoreError> {
                    let hash = hash.to_vec();
                    self.read(move |connection: &mut $connection| {
                        Box::pin(async move {
                            let row: Option<(SessionRow, UserRow)> = sessions::table
                                .inner_join(users::table)
                                .filter(sessions::hash.eq(hash))
                                .select((SessionRow::as_select(), UserRow::as_select()))
                                .first(connection)
                                .await
                                .optional()
                                .map_err(from_diesel)?;
                            Ok(row.map(|(session, user)| (session.into(), user.into())))
                        })
                    })
                    .await
                }

                async fn touch_session(&self, id: SessionId, now_ms: i64) -> Result<(), StoreError> {
                    self.write(move |connection: &mut $connection| {
                        Box::pin(async move {
                            let session = sessions::table.find(DbId::from(id));
                            diesel::update(session.filter(sessions::last_used_at.lt(now_ms)))
                                .set(sessions::last_used_at.eq(now_ms))
                                .execute(connection)
                                .await
                                .map_err(from_diesel)?;
                            Ok(())
                        })
                    })
                    .await
                }

                async fn sessions(&self, user: UserId) -> Result<Vec<SessionRecord>, StoreError> {
                    self.read(move |connection: &mut $connection| {
                        Box::pin(async move {
                            let rows: Vec<SessionRow> = sessions::table
                                .filter(sessions::user_id.eq(DbId::from(user)))
                                .filter(sessions::revoked_at.is_null())
                                .order((sessions::created_at.desc(), sessions::id.desc()))
                                .select(SessionRow::as_select())
                                .load(connection)
                                .await
                                .map_err(from_diesel)?;
                            Ok(rows.into_iter().map(SessionRecord::from).collect())
                        })
                    })
                    .await
                }

                async fn revoke_session(&self, user: UserId, id: SessionId, now_ms: i64) -> Result<(), StoreError> {
                    self.write(move |connection: &mut $connection| {
                        Box::pin(async move {
                            let session = sessions::table
                                .find(DbId::from(id))
                                .filter(sessions::user_id.eq(DbId::from(user)));
                            let found: Option<Option<i64>> = session
                                .select(sessions::revoked_at)
                                .first(connection)
                                .await
                                .optional()
                                .map_err(from_diesel)?;
                            match found {
                                None => Err(StoreError::NotFound("session")),
                                Some(Some(_)) => Ok(()),
                                Some(None) => {
                                    diesel::update(session.filter(sessions::revoked_at.is_null()))
                                        .set(sessions::revoked_at.eq(now_ms))
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

                async fn create_device_code(&self, code: &NewDeviceCode) -> Result<(), StoreError> {
                    let (row, hash, now_ms) = (DeviceRow::from(&code.grant), code.hash.to_vec(), code.grant.created_at);
                    self.write(move |connection: &mut $connection| {
                        Box::pin(async move {
                            // Codes a day past their expiry are of no use to anyone: they go as new ones come.
                            diesel::delete(device_codes::table.filter(device_codes::expires_at.lt(now_ms - 86_400_000)))
                                .execute(connection)
                                .await
                                .map_err(from_diesel)?;
                            diesel::insert_into(device_codes::table)
                                .values((&row, device_codes::hash.eq(hash)))
                                .execute(connection)
                                .await
                                .map_err(from_diesel)?;
                            Ok(())
                        })
                    })
                    .await
                }

                async fn pending_device_code(
                    &self,
                    user_code: &str,
                    now_ms: i64,
                ) -> Result<Option<DeviceGrant>, StoreError> {
                    let user_code = user_code.to_owned();
                    self.read(move |connection: &mut $connection| {
                        Box::pin(async move {
                            let row: Option<DeviceRow> = device_codes::table
                                .filter(device_codes::user_code.eq(user_code))
                                .filter(device_codes::state.eq("pending"))
                                .filter(device_codes::expires_at.gt(now_ms))
                                .select(DeviceRow::as_select())
                                .first(connection)
                                .await
                                .optional()
                                .map_err(from_diesel)?;
                            row.map(DeviceGrant::try_from).transpose()
                        })
                    })
                    .await
                }

                async fn decide_device_code(
                    &self,
                    user_code: &str,
                    approver: Option<UserId>,
                    now_ms: i64,
                ) -> Result<(), StoreError> {
                    let user_code = user_code.to_owned();
                    let (state, user) = match approver {
                        Some(user) => ("approved", Some(DbId::from(user))),
                        None => ("denied", None),
                    };
                    self.write(move |connection: &mut $connection| {
                        Box::pin(async move {
                            let changed = diesel::update(
                                device_codes::table
                                    .filter(device_codes::user_code.eq(user_code))
                                    .filter(device_codes::state.eq("pending"))
                                    .filter(device_codes::expires_at.gt(now_ms)),
                            )
                            .set((device_codes::state.eq(state), device_codes::user_id.eq(user)))
                            .execute(connection)
                            .await
                            .map_err(from_diesel)?;
                            if changed == 0 { Err(StoreError::NotFound("device code")) } else { Ok(()) }
                        })
                    })
                    .await
                }

                async fn poll_device_code(
                    &self,
                    hash: &[u8; 32],
                    now_ms: i64,
                    seed: &SessionSeed,
                ) -> Result<DevicePoll, StoreError> {
                    let (hash, seed) = (hash.to_vec(), seed.clone());
                    self.transaction(move |connection: &mut $connection| {
                        Box::pin(async move {
                            // Locked where the database locks rows: two polls of one code at once
                            // take turns, so it is handed out once.
                            let row: Option<DeviceRow> = device_codes::table
                                .find(hash.clone())
                                .select(DeviceRow::as_select())
                                $($lock)*
                                .first(connection)
                                .await
                                .optional()?;
                            let Some(row) = row else {
                                return Ok(DevicePoll::Invalid);
                            };
                            let grant = DeviceGrant::try_from(row)?;
                            let (answer, next) = accounts::poll(&grant, now_ms);
                            if next != grant {
                                diesel::update(device_codes::table.find(hash))
                                    .set(DeviceRow::from(&next))
                                    .execute(connection)
                                    .await?;
                            }
                            if let DevicePoll::Approved(user) = answer {
                                let session = accounts::session_from_seed(&seed, user, &grant.client_id);
                                diesel::insert_into(sessions::table)
                                    .values((&SessionRow::from(&session.record), sessions::hash.eq(session.hash.to_vec())))
                                    .execute(connection)
                                    .await?;
                            }
                            Ok(answer)
                        })
                    })
                    .await
                }
            }
        };
    };
}
