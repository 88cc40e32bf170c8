//! Accounts: users, memberships, sessions and device codes ([`AccountStore`]), and the one
//! rule both stores apply when a device polls ([`poll`]).
//!
//! Secrets never reach the store in the clear: a password arrives as its Argon2id hash, a
//! session token and a device code as their BLAKE3 hashes.

use async_trait::async_trait;
use sluice_model::{DeviceGrant, DeviceState, Role, SessionId, SessionRecord, User, UserId, Workspace, WorkspaceId};

use crate::StoreError;

/// A user to store, with the PHC string of its password's Argon2id hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewUser {
    /// The user.
    pub user: User,
    /// `$argon2id$...`; never the password.
    pub password_hash: String,
}

/// A session to store: its record and the BLAKE3 hash of its token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSession {
    /// Everything but the token.
    pub record: SessionRecord,
    /// BLAKE3 of the token text.
    pub hash: [u8; 32],
}

/// The session a device gets when its sign-in was approved, but for the user, whom the store
/// knows from the approval ([`AccountStore::poll_device_code`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSeed {
    /// The session's id.
    pub id: SessionId,
    /// BLAKE3 of the token the poll will hand out.
    pub hash: [u8; 32],
    /// Unix ms.
    pub created_at: i64,
}

/// A device sign-in to store: the grant and the BLAKE3 hash of its device code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDeviceCode {
    /// The grant, pending.
    pub grant: DeviceGrant,
    /// BLAKE3 of the device code.
    pub hash: [u8; 32],
}

/// What a device's poll gets (RFC 8628, 3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DevicePoll {
    /// Nobody decided yet: `authorization_pending`.
    Pending,
    /// Polled sooner than the interval allows: `slow_down` (the interval grew by 5 s).
    SlowDown,
    /// Denied: `access_denied`.
    Denied,
    /// Past its expiry: `expired_token`.
    Expired,
    /// Unknown, or already used: `invalid_grant`.
    Invalid,
    /// Approved: the seed's session now exists for this user.
    Approved(UserId),
}

/// How much a too-early poll adds to the interval, in seconds (RFC 8628, 3.5).
pub const SLOW_DOWN_STEP_S: u32 = 5;

/// The one rule of a poll: what `grant` answers at `now_ms`, and the grant as it must be
/// stored after it. A used code is `invalid_grant` even when polled too soon; an expired one
/// `expired_token`; then a poll within the interval of the previous one slows down; a denial
/// or an approval is told once, then the code is used.
///
/// ```
/// use sluice_model::{DeviceGrant, DeviceState};
/// use sluice_store::accounts::{DevicePoll, poll};
/// let grant = DeviceGrant { user_code: "BCDFGHJK".into(), client_id: "sluice-cli".into(), scope: None,
///     created_at: 0, expires_at: 600_000, interval_s: 5, last_poll_at: None, state: DeviceState::Pending };
/// let (answer, grant) = poll(&grant, 1_000);
/// assert_eq!(answer, DevicePoll::Pending);
/// let (answer, grant) = poll(&grant, 2_000);
/// assert_eq!((answer, grant.interval_s), (DevicePoll::SlowDown, 10));
/// ```
pub fn poll(grant: &DeviceGrant, now_ms: i64) -> (DevicePoll, DeviceGrant) {
    let mut next = grant.clone();
    if grant.state == DeviceState::Used {
        return (DevicePoll::Invalid, next);
    }
    if now_ms >= grant.expires_at {
        return (DevicePoll::Expired, next);
    }
    next.last_poll_at = Some(now_ms);
    let too_soon = grant
        .last_poll_at
        .is_some_and(|last| now_ms.saturating_sub(last) < i64::from(grant.interval_s).saturating_mul(1000));
    if too_soon {
        next.interval_s = grant.interval_s.saturating_add(SLOW_DOWN_STEP_S);
        return (DevicePoll::SlowDown, next);
    }
    let answer = match grant.state {
        DeviceState::Pending => return (DevicePoll::Pending, next),
        DeviceState::Denied => DevicePoll::Denied,
        DeviceState::Approved(user) => DevicePoll::Approved(user),
        DeviceState::Used => DevicePoll::Invalid,
    };
    next.state = DeviceState::Used;
    (answer, next)
}

/// A change to a workspace's members ([`AccountStore::change_member`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberChange {
    /// Adds the user with this role; [`StoreError::Conflict`] when already a member.
    Add(Role),
    /// Gives the user this role, adding them when not a member (the admin CLI).
    Set(Role),
    /// Gives a member another role; [`StoreError::NotFound`] when not a member.
    Role(Role),
    /// Removes a member; [`StoreError::NotFound`] when not a member.
    Remove,
}

/// A member of a workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Who.
    pub user: User,
    /// Their role.
    pub role: Role,
    /// Unix ms they joined.
    pub since: i64,
}

/// What [`StoreError::Conflict`] says when a change would take a workspace's last owner.
pub const LAST_OWNER: &str = "A workspace needs an owner";

/// Whether `change` takes away an owner from a workspace that has `owners` of them, of whom
/// the changed user is one when `is_owner`.
const fn loses_last_owner(change: MemberChange, is_owner: bool, owners: i64) -> bool {
    let stays_owner = matches!(
        change,
        MemberChange::Add(Role::Owner) | MemberChange::Set(Role::Owner) | MemberChange::Role(Role::Owner)
    );
    is_owner && !stays_owner && owners <= 1
}

/// Whether a store must count the workspace's owners to decide `change` of a member whose
/// role is `current`: the rule applies and the member is an owner.
pub fn counts_owners(current: Option<Role>, keep_an_owner: bool) -> bool {
    keep_an_owner && current == Some(Role::Owner)
}

/// Why `change` of a member whose role is `current` (`None`: not a member) is refused, if it
/// is: the membership rules both stores apply in the change's transaction. `owners` is the
/// workspace's count of owners when [`counts_owners`] asked for it.
///
/// ```
/// use sluice_model::Role;
/// use sluice_store::StoreError;
/// use sluice_store::accounts::{MemberChange, refusal};
/// assert!(matches!(refusal(MemberChange::Remove, Some(Role::Owner), Some(1)), Some(StoreError::Conflict(_))));
/// assert!(refusal(MemberChange::Remove, Some(Role::Owner), Some(2)).is_none());
/// assert!(matches!(refusal(MemberChange::Remove, None, None), Some(StoreError::NotFound("member"))));
/// ```
pub fn refusal(change: MemberChange, current: Option<Role>, owners: Option<i64>) -> Option<StoreError> {
    match (change, current) {
        (MemberChange::Add(_), Some(_)) => Some(StoreError::Conflict(ALREADY_MEMBER)),
        (MemberChange::Role(_) | MemberChange::Remove, None) => Some(StoreError::NotFound("member")),
        _ if owners.is_some_and(|owners| loses_last_owner(change, current == Some(Role::Owner), owners)) => {
            Some(StoreError::Conflict(LAST_OWNER))
        }
        _ => None,
    }
}

/// Users, their memberships, sessions and device sign-ins.
#[async_trait]
pub trait AccountStore: Send + Sync {
    /// Stores a new user; [`StoreError::Conflict`] when another has the same email (ignoring case).
    async fn create_user(&self, user: &NewUser) -> Result<(), StoreError>;

    /// One user, if it exists.
    async fn get_user(&self, id: UserId) -> Result<Option<User>, StoreError>;

    /// The user with this email (ignoring case) and their password hash.
    async fn find_user_by_email(&self, email: &str) -> Result<Option<(User, String)>, StoreError>;

    /// Changes the user's membership of the workspace at `now_ms`. With `keep_an_owner`, a
    /// change that would leave a workspace that has an owner without one is refused with
    /// [`StoreError::Conflict`]`(`[`LAST_OWNER`]`)`, checked in the change's transaction.
    /// [`StoreError::NotFound`] names a missing `"workspace"` or `"user"` (or `"member"`).
    async fn change_member(
        &self,
        workspace: WorkspaceId,
        user: UserId,
        change: MemberChange,
        keep_an_owner: bool,
        now_ms: i64,
    ) -> Result<(), StoreError>;

    /// The workspace's members, by email.
    async fn members(&self, workspace: WorkspaceId) -> Result<Vec<Member>, StoreError>;

    /// The workspaces the user is a member of and their role there, by name then id.
    async fn memberships(&self, user: UserId) -> Result<Vec<(Workspace, Role)>, StoreError>;

    /// Stores a new session.
    async fn create_session(&self, session: &NewSession) -> Result<(), StoreError>;

    /// The session whose token hashes to `hash`, with its user.
    async fn find_session(&self, hash: &[u8; 32]) -> Result<Option<(SessionRecord, User)>, StoreError>;

    /// Records a use of the session at `now_ms` (never moving it back).
    async fn touch_session(&self, id: SessionId, now_ms: i64) -> Result<(), StoreError>;

    /// The user's sessions that are not revoked, newest first.
    async fn sessions(&self, user: UserId) -> Result<Vec<SessionRecord>, StoreError>;

    /// Revokes one of the user's sessions at `now_ms` (a second revoke keeps the first time);
    /// [`StoreError::NotFound`] when the user has no such session.
    async fn revoke_session(&self, user: UserId, id: SessionId, now_ms: i64) -> Result<(), StoreError>;

    /// Stores a new device sign-in.
    async fn create_device_code(&self, code: &NewDeviceCode) -> Result<(), StoreError>;

    /// The pending, unexpired device sign-in with this user code (as stored: 8 capitals).
    async fn pending_device_code(&self, user_code: &str, now_ms: i64) -> Result<Option<DeviceGrant>, StoreError>;

    /// Approves (`Some(user)`) or denies (`None`) the pending, unexpired sign-in with this user
    /// code; [`StoreError::NotFound`] when there is none.
    async fn decide_device_code(
        &self,
        user_code: &str,
        approver: Option<UserId>,
        now_ms: i64,
    ) -> Result<(), StoreError>;

    /// A device's poll: applies [`poll`] to the sign-in whose device code hashes to `hash` and
    /// stores its outcome, in one transaction; when approved, creates the session of `seed`
    /// for the approver in the same transaction. Unknown codes are [`DevicePoll::Invalid`].
    async fn poll_device_code(
        &self,
        hash: &[u8; 32],
        now_ms: i64,
        seed: &SessionSeed,
    ) -> Result<DevicePoll, StoreError>;
}

/// The session a seed becomes once the store knows whose it is.
pub fn session_from_seed(seed: &SessionSeed, user: UserId, client: &str) -> NewSession {
    NewSession {
        record: SessionRecord {
            id: seed.id,
            user_id: user,
            client: client.to_owned(),
            created_at: seed.created_at,
            last_used_at: seed.created_at,
            revoked_at: None,
        },
        hash: seed.hash,
    }
}

/// A device sign-in's state as both stores keep it: a word, and the approver for `approved`.
pub fn device_state_columns(state: DeviceState) -> (&'static str, Option<UserId>) {
    match state {
        DeviceState::Pending => ("pending", None),
        DeviceState::Approved(user) => ("approved", Some(user)),
        DeviceState::Denied => ("denied", None),
        DeviceState::Used => ("used", None),
    }
}

/// Reads back what [`device_state_columns`] wrote.
pub fn device_state_from_columns(word: &str, user: Option<UserId>) -> Result<DeviceState, StoreError> {
    match (word, user) {
        ("pending", _) => Ok(DeviceState::Pending),
        ("approved", Some(user)) => Ok(DeviceState::Approved(user)),
        ("denied", _) => Ok(DeviceState::Denied),
        ("used", _) => Ok(DeviceState::Used),
        _ => Err(StoreError::Backend(format!("a device code in an unknown state '{word}'"))),
    }
}

/// The email as both stores compare it: trimmed and in lower case.
pub fn email_key(email: &str) -> String {
    email.trim().to_lowercase()
}

/// What [`StoreError::Conflict`] says when an email is taken.
pub const EMAIL_TAKEN: &str = "A user with this email already exists";

/// What [`StoreError::Conflict`] says when the user is already a member.
pub const ALREADY_MEMBER: &str = "The user is already a member";
