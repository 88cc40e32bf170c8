//! Accounts: users, memberships, sessions and device sign-ins ([`AccountStore`]).

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use sluice_model::{DeviceGrant, Role, SessionId, SessionRecord, User, UserId, Workspace, WorkspaceId};
use sluice_store::StoreError;
use sluice_store::accounts::{
    self, AccountStore, DevicePoll, Member, MemberChange, NewDeviceCode, NewSession, NewUser, SessionSeed,
};
use sluice_store::rows::{corrupt, parse_column};

use crate::connection::SqliteStore;
use crate::error::from_diesel;
use crate::rows::WorkspaceRow;
use crate::schema::{device_codes, memberships, sessions, users, workspaces};

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = users, check_for_backend(diesel::sqlite::Sqlite))]
struct UserRow {
    id: Vec<u8>,
    email: String,
    name: String,
    admin: bool,
    created_at: i64,
}

impl From<&User> for UserRow {
    fn from(user: &User) -> Self {
        Self {
            id: user.id.as_bytes().to_vec(),
            email: user.email.clone(),
            name: user.name.clone(),
            admin: user.admin,
            created_at: user.created_at,
        }
    }
}

impl TryFrom<UserRow> for User {
    type Error = StoreError;

    fn try_from(row: UserRow) -> Result<Self, StoreError> {
        Ok(User {
            id: user_id(&row.id)?,
            email: row.email,
            name: row.name,
            admin: row.admin,
            created_at: row.created_at,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = sessions, check_for_backend(diesel::sqlite::Sqlite))]
struct SessionRow {
    id: Vec<u8>,
    user_id: Vec<u8>,
    client: String,
    created_at: i64,
    last_used_at: i64,
    revoked_at: Option<i64>,
}

impl From<&SessionRecord> for SessionRow {
    fn from(session: &SessionRecord) -> Self {
        Self {
            id: session.id.as_bytes().to_vec(),
            user_id: session.user_id.as_bytes().to_vec(),
            client: session.client.clone(),
            created_at: session.created_at,
            last_used_at: session.last_used_at,
            revoked_at: session.revoked_at,
        }
    }
}

impl TryFrom<SessionRow> for SessionRecord {
    type Error = StoreError;

    fn try_from(row: SessionRow) -> Result<Self, StoreError> {
        Ok(SessionRecord {
            id: SessionId::from_slice(&row.id).ok_or_else(|| corrupt("session id"))?,
            user_id: user_id(&row.user_id)?,
            client: row.client,
            created_at: row.created_at,
            last_used_at: row.last_used_at,
            revoked_at: row.revoked_at,
        })
    }
}

#[derive(Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = device_codes, check_for_backend(diesel::sqlite::Sqlite), treat_none_as_null = true)]
struct DeviceRow {
    user_code: String,
    client_id: String,
    scope: Option<String>,
    created_at: i64,
    expires_at: i64,
    interval_s: i32,
    last_poll_at: Option<i64>,
    state: String,
    user_id: Option<Vec<u8>>,
}

impl From<&DeviceGrant> for DeviceRow {
    fn from(grant: &DeviceGrant) -> Self {
        let (state, user) = accounts::device_state_columns(grant.state);
        Self {
            user_code: grant.user_code.clone(),
            client_id: grant.client_id.clone(),
            scope: grant.scope.clone(),
            created_at: grant.created_at,
            expires_at: grant.expires_at,
            interval_s: i32::try_from(grant.interval_s).unwrap_or(i32::MAX),
            last_poll_at: grant.last_poll_at,
            state: state.to_owned(),
            user_id: user.map(|user| user.as_bytes().to_vec()),
        }
    }
}

impl TryFrom<DeviceRow> for DeviceGrant {
    type Error = StoreError;

    fn try_from(row: DeviceRow) -> Result<Self, StoreError> {
        let user = row.user_id.as_deref().map(user_id).transpose()?;
        Ok(DeviceGrant {
            user_code: row.user_code,
            client_id: row.client_id,
            scope: row.scope,
            created_at: row.created_at,
            expires_at: row.expires_at,
            interval_s: u32::try_from(row.interval_s).map_err(|_| corrupt("device interval"))?,
            last_poll_at: row.last_poll_at,
            state: accounts::device_state_from_columns(&row.state, user)?,
        })
    }
}

fn user_id(bytes: &[u8]) -> Result<UserId, StoreError> {
    UserId::from_slice(bytes).ok_or_else(|| corrupt("user id"))
}

/// A membership change in its transaction: the last-owner rule, then the change itself.
fn change_member_in(
    connection: &mut SqliteConnection,
    workspace: &[u8],
    user: &[u8],
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
                .find(id.as_bytes().to_vec())
                .select(UserRow::as_select())
                .first(connection)
                .optional()
                .map_err(from_diesel)?;
            row.map(User::try_from).transpose()
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
            row.map(|(user, hash)| Ok((User::try_from(user)?, hash))).transpose()
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
                    change_member_in(connection, workspace.as_bytes(), user.as_bytes(), change, keep_an_owner, now_ms)
                })
                .map_err(from_diesel)?
        })
        .await
    }

    async fn members(&self, workspace: WorkspaceId) -> Result<Vec<Member>, StoreError> {
        self.with_connection(move |connection| {
            let rows: Vec<(UserRow, String, i64)> = memberships::table
                .inner_join(users::table)
                .filter(memberships::workspace_id.eq(workspace.as_bytes().to_vec()))
                .order((users::email_key.asc(), users::id.asc()))
                .select((UserRow::as_select(), memberships::role, memberships::created_at))
                .load(connection)
                .map_err(from_diesel)?;
            rows.into_iter()
                .map(|(user, role, since)| {
                    Ok(Member { user: user.try_into()?, role: parse_column(&role, "member role")?, since })
                })
                .collect()
        })
        .await
    }

    async fn memberships(&self, user: UserId) -> Result<Vec<(Workspace, Role)>, StoreError> {
        self.with_connection(move |connection| {
            let rows: Vec<(WorkspaceRow, String)> = memberships::table
                .inner_join(workspaces::table)
                .filter(memberships::user_id.eq(user.as_bytes().to_vec()))
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
            row.map(|(session, user)| Ok((session.try_into()?, user.try_into()?))).transpose()
        })
        .await
    }

    async fn touch_session(&self, id: SessionId, now_ms: i64) -> Result<(), StoreError> {
        self.with_write(move |connection| {
            diesel::update(sessions::table.find(id.as_bytes().to_vec()).filter(sessions::last_used_at.lt(now_ms)))
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
                .filter(sessions::user_id.eq(user.as_bytes().to_vec()))
                .filter(sessions::revoked_at.is_null())
                .order((sessions::created_at.desc(), sessions::id.desc()))
                .select(SessionRow::as_select())
                .load(connection)
                .map_err(from_diesel)?;
            rows.into_iter().map(SessionRecord::try_from).collect()
        })
        .await
    }

    async fn revoke_session(&self, user: UserId, id: SessionId, now_ms: i64) -> Result<(), StoreError> {
        self.with_write(move |connection| {
            let session =
                sessions::table.find(id.as_bytes().to_vec()).filter(sessions::user_id.eq(user.as_bytes().to_vec()));
            let found: Option<Option<i64>> =
                session.clone().select(sessions::revoked_at).first(connection).optional().map_err(from_diesel)?;
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
            Some(user) => ("approved", Some(user.as_bytes().to_vec())),
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
