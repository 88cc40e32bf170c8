//! Accounts: users, memberships, sessions and device sign-ins ([`AccountStore`]).

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use sluice_model::{DeviceGrant, Role, SessionId, SessionRecord, User, UserId, Workspace, WorkspaceId};
use sluice_store::StoreError;
use sluice_store::accounts::{
    self, AccountStore, DevicePoll, Member, MemberChange, NewDeviceCode, NewSession, NewUser, SessionSeed,
};
use sluice_store::rows::parse_column;
use sluice_store_diesel::DbId;
use sluice_store_diesel::rows::{DeviceRow, SessionRow, UserRow, WorkspaceRow};
use sluice_store_diesel::schema::{device_codes, memberships, sessions, users, workspaces};

use crate::connection::SqliteStore;
use crate::error::from_diesel;

/// A membership change in its transaction: the last-owner rule, then the change itself.
fn change_member_in(
    connection: &mut SqliteConnection,
    workspace: DbId,
    user: DbId,
    change: MemberChange,
    keep_an_owner: bool,
    now_ms: i64,
) -> Result<Result<(), StoreError>, DieselError> {
    let exists: i64 = workspaces::table.filter(workspaces::id.eq(workspace)).count().get_result(connection)?;
    if exists == 0 {
        return Ok(Err(StoreError::NotFound("workspace")));
    }
    let exists: i64 = users::table.filter(users::id.eq(user)).count().get_result(connection)?;
    if exists == 0 {
        return Ok(Err(StoreError::NotFound("user")));
    }
    let membership =
        memberships::table.filter(memberships::workspace_id.eq(workspace)).filter(memberships::user_id.eq(user));
    let current: Option<String> = membership.select(memberships::role).first(connection).optional()?;
    let current: Option<Role> = match current.as_deref().map(|role| parse_column(role, "member role")).transpose() {
        Ok(current) => current,
        Err(error) => return Ok(Err(error)),
    };
    let owners = if accounts::counts_owners(current, keep_an_owner) {
        let owners: i64 = memberships::table
            .filter(memberships::workspace_id.eq(workspace))
            .filter(memberships::role.eq(Role::Owner.as_str()))
            .count()
            .get_result(connection)?;
        Some(owners)
    } else {
        None
    };
    if let Some(refused) = accounts::refusal(change, current, owners) {
        return Ok(Err(refused));
    }
    match change {
        MemberChange::Remove => {
            diesel::delete(membership).execute(connection)?;
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
                .execute(connection)?;
        }
    }
    Ok(Ok(()))
}

#[async_trait]
impl AccountStore for SqliteStore {
    async fn create_user(&self, user: &NewUser) -> Result<(), StoreError> {
        let row = UserRow::from(&user.user);
        let email_key = accounts::email_key(&user.user.email);
        let password_hash = user.password_hash.clone();
        self.with_write(move |connection| {
            diesel::insert_into(users::table)
                .values((&row, users::email_key.eq(email_key), users::password_hash.eq(password_hash)))
                .execute(connection)
                .map_err(|error| match error {
                    DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _) => {
                        StoreError::Conflict(accounts::EMAIL_TAKEN)
                    }
                    other => from_diesel(other),
                })?;
            Ok(())
        })
        .await
    }

    async fn get_user(&self, id: UserId) -> Result<Option<User>, StoreError> {
        self.with_connection(move |connection| {
            let row: Option<UserRow> = users::table
                .find(DbId::from(id))
                .select(UserRow::as_select())
                .first(connection)
                .optional()
                .map_err(from_diesel)?;
            Ok(row.map(User::from))
        })
        .await
    }

    async fn find_user_by_email(&self, email: &str) -> Result<Option<(User, String)>, StoreError> {
        let key = accounts::email_key(email);
        self.with_connection(move |connection| {
            let row: Option<(UserRow, String)> = users::table
                .filter(users::email_key.eq(key))
                .select((UserRow::as_select(), users::password_hash))
                .first(connection)
                .optional()
                .map_err(from_diesel)?;
            Ok(row.map(|(user, hash)| (User::from(user), hash)))
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
        self.with_write(move |connection| {
            connection
                .immediate_transaction(|connection| {
                    change_member_in(connection, workspace.into(), user.into(), change, keep_an_owner, now_ms)
                })
                .map_err(from_diesel)?
        })
        .await
    }

    async fn members(&self, workspace: WorkspaceId) -> Result<Vec<Member>, StoreError> {
        self.with_connection(move |connection| {
            let rows: Vec<(UserRow, String, i64)> = memberships::table
                .inner_join(users::table)
                .filter(memberships::workspace_id.eq(DbId::from(workspace)))
                .order((users::email_key.asc(), users::id.asc()))
                .select((UserRow::as_select(), memberships::role, memberships::created_at))
                .load(connection)
                .map_err(from_diesel)?;
            rows.into_iter()
                .map(|(user, role, since)| {
                    Ok(Member { user: user.into(), role: parse_column(&role, "member role")?, since })
                })
                .collect()
        })
        .await
    }

    async fn memberships(&self, user: UserId) -> Result<Vec<(Workspace, Role)>, StoreError> {
        self.with_connection(move |connection| {
            let rows: Vec<(WorkspaceRow, String)> = memberships::table
                .inner_join(workspaces::table)
                .filter(memberships::user_id.eq(DbId::from(user)))
                .order((workspaces::name.asc(), workspaces::id.asc()))
                .select((WorkspaceRow::as_select(), memberships::role))
                .load(connection)
                .map_err(from_diesel)?;
            rows.into_iter()
                .map(|(workspace, role)| Ok((workspace.try_into()?, parse_column(&role, "member role")?)))
                .collect()
        })
        .await
    }

    async fn create_session(&self, session: &NewSession) -> Result<(), StoreError> {
        let row = SessionRow::from(&session.record);
        let hash = session.hash.to_vec();
        self.with_write(move |connection| {
            diesel::insert_into(sessions::table)
                .values((&row, sessions::hash.eq(hash)))
                .execute(connection)
                .map_err(from_diesel)?;
            Ok(())
        })
        .await
    }

    async fn find_session(&self, hash: &[u8; 32]) -> Result<Option<(SessionRecord, User)>, StoreError> {
        let hash = hash.to_vec();
        self.with_connection(move |connection| {
            let row: Option<(SessionRow, UserRow)> = sessions::table
                .inner_join(users::table)
                .filter(sessions::hash.eq(hash))
                .select((SessionRow::as_select(), UserRow::as_select()))
                .first(connection)
                .optional()
                .map_err(from_diesel)?;
            Ok(row.map(|(session, user)| (session.into(), user.into())))
        })
        .await
    }

    async fn touch_session(&self, id: SessionId, now_ms: i64) -> Result<(), StoreError> {
        self.with_write(move |connection| {
            diesel::update(sessions::table.find(DbId::from(id)).filter(sessions::last_used_at.lt(now_ms)))
                .set(sessions::last_used_at.eq(now_ms))
                .execute(connection)
                .map_err(from_diesel)?;
            Ok(())
        })
        .await
    }

    async fn sessions(&self, user: UserId) -> Result<Vec<SessionRecord>, StoreError> {
        self.with_connection(move |connection| {
            let rows: Vec<SessionRow> = sessions::table
                .filter(sessions::user_id.eq(DbId::from(user)))
                .filter(sessions::revoked_at.is_null())
                .order((sessions::created_at.desc(), sessions::id.desc()))
                .select(SessionRow::as_select())
                .load(connection)
                .map_err(from_diesel)?;
            Ok(rows.into_iter().map(SessionRecord::from).collect())
        })
        .await
    }

    async fn revoke_session(&self, user: UserId, id: SessionId, now_ms: i64) -> Result<(), StoreError> {
        self.with_write(move |connection| {
            let session = sessions::table.find(DbId::from(id)).filter(sessions::user_id.eq(DbId::from(user)));
            let found: Option<Option<i64>> =
                session.select(sessions::revoked_at).first(connection).optional().map_err(from_diesel)?;
            match found {
                None => Err(StoreError::NotFound("session")),
                Some(Some(_)) => Ok(()),
                Some(None) => {
                    diesel::update(session)
                        .set(sessions::revoked_at.eq(now_ms))
                        .execute(connection)
                        .map_err(from_diesel)?;
                    Ok(())
                }
            }
        })
        .await
    }

    async fn create_device_code(&self, code: &NewDeviceCode) -> Result<(), StoreError> {
        let row = DeviceRow::from(&code.grant);
        let hash = code.hash.to_vec();
        let now_ms = code.grant.created_at;
        self.with_write(move |connection| {
            // Codes a day past their expiry are of no use to anyone: they go as new ones come.
            diesel::delete(device_codes::table.filter(device_codes::expires_at.lt(now_ms - 86_400_000)))
                .execute(connection)
                .map_err(from_diesel)?;
            diesel::insert_into(device_codes::table)
                .values((&row, device_codes::hash.eq(hash)))
                .execute(connection)
                .map_err(from_diesel)?;
            Ok(())
        })
        .await
    }

    async fn pending_device_code(&self, user_code: &str, now_ms: i64) -> Result<Option<DeviceGrant>, StoreError> {
        let user_code = user_code.to_owned();
        self.with_connection(move |connection| {
            let row: Option<DeviceRow> = device_codes::table
                .filter(device_codes::user_code.eq(user_code))
                .filter(device_codes::state.eq("pending"))
                .filter(device_codes::expires_at.gt(now_ms))
                .select(DeviceRow::as_select())
                .first(connection)
                .optional()
                .map_err(from_diesel)?;
            row.map(DeviceGrant::try_from).transpose()
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
        self.with_write(move |connection| {
            let changed = diesel::update(
                device_codes::table
                    .filter(device_codes::user_code.eq(user_code))
                    .filter(device_codes::state.eq("pending"))
                    .filter(device_codes::expires_at.gt(now_ms)),
            )
            .set((device_codes::state.eq(state), device_codes::user_id.eq(user)))
            .execute(connection)
            .map_err(from_diesel)?;
            if changed == 0 { Err(StoreError::NotFound("device code")) } else { Ok(()) }
        })
        .await
    }

    async fn poll_device_code(
        &self,
        hash: &[u8; 32],
        now_ms: i64,
        seed: &SessionSeed,
    ) -> Result<DevicePoll, StoreError> {
        let hash = hash.to_vec();
        let seed = seed.clone();
        self.with_write(move |connection| {
            connection
                .immediate_transaction(|connection| {
                    let code = device_codes::table.find(hash);
                    let Some(row) = code.clone().select(DeviceRow::as_select()).first(connection).optional()? else {
                        return Ok(Ok(DevicePoll::Invalid));
                    };
                    let grant = match DeviceGrant::try_from(row) {
                        Ok(grant) => grant,
                        Err(error) => return Ok(Err(error)),
                    };
                    let (answer, next) = accounts::poll(&grant, now_ms);
                    if next != grant {
                        diesel::update(code).set(DeviceRow::from(&next)).execute(connection)?;
                    }
                    if let DevicePoll::Approved(user) = answer {
                        let session = accounts::session_from_seed(&seed, user, &grant.client_id);
                        diesel::insert_into(sessions::table)
                            .values((&SessionRow::from(&session.record), sessions::hash.eq(session.hash.to_vec())))
                            .execute(connection)?;
                    }
                    Ok(Ok(answer))
                })
                .map_err(from_diesel)?
        })
        .await
    }
}
