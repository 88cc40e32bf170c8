//! Conformance: users, memberships and the last-owner rule, sessions, device sign-ins.

use sluice_model::{DeviceGrant, DeviceState, Role, SessionId, SessionRecord, User, UserId};

use super::*;
use crate::accounts::{
    ALREADY_MEMBER, DevicePoll, EMAIL_TAKEN, LAST_OWNER, MemberChange, NewDeviceCode, NewSession, NewUser, SessionSeed,
};

/// A stand-in for a secret's hash: distinct bytes give distinct hashes.
fn hash_of(bytes: &[u8]) -> [u8; 32] {
    let mut hash = [0xA5; 32];
    for (slot, byte) in hash.iter_mut().zip(bytes) {
        *slot = *byte;
    }
    hash
}

fn user(email: &str, created_at: i64) -> NewUser {
    NewUser {
        user: User { id: UserId::generate(), email: email.into(), name: email.into(), admin: false, created_at },
        password_hash: format!("$argon2id$v=19$m=19456,t=2,p=1$salt-of-{email}$hash"),
    }
}

async fn new_user(store: &dyn Store, email: &str) -> User {
    let user = user(email, T0);
    store.create_user(&user).await.expect("create user");
    user.user
}

/// Users are stored once per email, whatever its case, and found by it with their hash.
pub async fn users_are_unique_by_email_ignoring_case(store: &dyn Store) {
    let ada = user("Ada@Example.com", T0);
    store.create_user(&ada).await.expect("create");
    let again = user("ada@example.COM", T0 + 1);
    assert!(matches!(store.create_user(&again).await, Err(StoreError::Conflict(EMAIL_TAKEN))));
    let (found, hash) = store.find_user_by_email(" ADA@example.com ").await.expect("find").expect("found");
    assert_eq!((found, hash), (ada.user.clone(), ada.password_hash.clone()));
    assert_eq!(store.get_user(ada.user.id).await.expect("get"), Some(ada.user));
    assert_eq!(store.find_user_by_email("bob@example.com").await.expect("find"), None);
    assert_eq!(store.get_user(UserId::generate()).await.expect("get"), None);
}

/// Memberships are added once, changed, listed by email and by workspace name, and removed;
/// a workspace that has an owner keeps one, unless the change may leave it without.
pub async fn members_change_and_a_workspace_keeps_an_owner(store: &dyn Store) {
    let zeta = new_workspace(store, "zeta").await;
    let alpha = new_workspace(store, "alpha").await;
    let owner = new_user(store, "owner@example.com").await;
    let other = new_user(store, "other@example.com").await;
    let change = |workspace, user: &User, change, keep| store.change_member(workspace, user.id, change, keep, T0 + 5);
    change(zeta, &owner, MemberChange::Add(Role::Owner), true).await.expect("add owner");
    change(alpha, &owner, MemberChange::Add(Role::Viewer), true).await.expect("add viewer");
    assert!(matches!(
        change(zeta, &owner, MemberChange::Add(Role::Member), true).await,
        Err(StoreError::Conflict(ALREADY_MEMBER))
    ));
    // The last owner can be neither demoted nor removed through a keeping change.
    for refused in [MemberChange::Role(Role::Member), MemberChange::Remove, MemberChange::Set(Role::Viewer)] {
        assert!(matches!(change(zeta, &owner, refused, true).await, Err(StoreError::Conflict(LAST_OWNER))));
    }
    change(zeta, &other, MemberChange::Add(Role::Member), true).await.expect("add member");
    let roles = |members: Vec<crate::accounts::Member>| -> Vec<(String, Role)> {
        members.into_iter().map(|member| (member.user.email, member.role)).collect()
    };
    assert_eq!(
        roles(store.members(zeta).await.expect("members")),
        vec![("other@example.com".into(), Role::Member), ("owner@example.com".into(), Role::Owner)]
    );
    // With a second owner the first may step down.
    change(zeta, &other, MemberChange::Role(Role::Owner), true).await.expect("promote");
    change(zeta, &owner, MemberChange::Role(Role::Viewer), true).await.expect("step down");
    let names: Vec<(String, Role)> = store
        .memberships(owner.id)
        .await
        .expect("memberships")
        .into_iter()
        .map(|(workspace, role)| (workspace.name, role))
        .collect();
    assert_eq!(names, vec![("alpha".into(), Role::Viewer), ("zeta".into(), Role::Viewer)]);
    // The admin CLI may leave a workspace without owners.
    change(zeta, &other, MemberChange::Remove, false).await.expect("remove last owner");
    assert!(matches!(change(zeta, &other, MemberChange::Remove, true).await, Err(StoreError::NotFound(_))));
    assert!(matches!(
        change(WorkspaceId::generate(), &owner, MemberChange::Set(Role::Owner), true).await,
        Err(StoreError::NotFound("workspace"))
    ));
    let stranger = User { id: UserId::generate(), ..owner.clone() };
    assert!(matches!(
        change(zeta, &stranger, MemberChange::Set(Role::Owner), true).await,
        Err(StoreError::NotFound("user"))
    ));
    // With no owner left, anyone may be given any role.
    change(zeta, &owner, MemberChange::Set(Role::Member), true).await.expect("set");
    assert!(store.memberships(other.id).await.expect("memberships").is_empty());
}

fn session(user: &User, created_at: i64) -> NewSession {
    NewSession {
        record: SessionRecord {
            id: SessionId::generate(),
            user_id: user.id,
            client: "browser".into(),
            created_at,
            last_used_at: created_at,
            revoked_at: None,
        },
        hash: hash_of(&created_at.to_le_bytes()),
    }
}

/// Sessions are found by hash with their user, touched forward only, listed and revoked.
pub async fn sessions_are_found_touched_listed_and_revoked(store: &dyn Store) {
    let ada = new_user(store, "ada@example.com").await;
    let bob = new_user(store, "bob@example.com").await;
    let first = session(&ada, T0);
    let second = session(&ada, T0 + 10);
    for made in [&first, &second] {
        store.create_session(made).await.expect("create");
    }
    let (found, owner) = store.find_session(&first.hash).await.expect("find").expect("found");
    assert_eq!((found, owner), (first.record.clone(), ada.clone()));
    assert_eq!(store.find_session(&[7; 32]).await.expect("find"), None);
    store.touch_session(first.record.id, T0 + 100).await.expect("touch");
    store.touch_session(first.record.id, T0 + 50).await.expect("touch back");
    let touched = store.find_session(&first.hash).await.expect("find").expect("found").0;
    assert_eq!(touched.last_used_at, T0 + 100);
    let ids = |sessions: Vec<SessionRecord>| sessions.into_iter().map(|session| session.id).collect::<Vec<_>>();
    assert_eq!(ids(store.sessions(ada.id).await.expect("list")), vec![second.record.id, first.record.id]);
    // Only its user may revoke a session; a second revoke keeps the first time.
    assert!(matches!(store.revoke_session(bob.id, first.record.id, T0).await, Err(StoreError::NotFound(_))));
    store.revoke_session(ada.id, first.record.id, T0 + 200).await.expect("revoke");
    store.revoke_session(ada.id, first.record.id, T0 + 300).await.expect("revoke again");
    let revoked = store.find_session(&first.hash).await.expect("find").expect("found").0;
    assert_eq!(revoked.revoked_at, Some(T0 + 200));
    assert_eq!(ids(store.sessions(ada.id).await.expect("list")), vec![second.record.id]);
}

fn device(user_code: &str, created_at: i64) -> NewDeviceCode {
    NewDeviceCode {
        grant: DeviceGrant {
            user_code: user_code.into(),
            client_id: "sluice-cli".into(),
            scope: None,
            created_at,
            expires_at: created_at + 600_000,
            interval_s: 5,
            last_poll_at: None,
            state: DeviceState::Pending,
        },
        hash: hash_of(user_code.as_bytes()),
    }
}

/// A device sign-in: pending, slowed down, approved once into a session, then used; another
/// denied; another expired; unknown codes invalid.
pub async fn device_sign_in_is_decided_once_and_used_once(store: &dyn Store) {
    let ada = new_user(store, "ada@example.com").await;
    let approved = device("BCDFGHJK", T0);
    let denied = device("LMNPQRST", T0);
    for code in [&approved, &denied] {
        store.create_device_code(code).await.expect("create");
    }
    let seed = |at: i64| SessionSeed { id: SessionId::generate(), hash: hash_of(&at.to_be_bytes()), created_at: at };
    let poll = |code: &NewDeviceCode, at: i64| {
        let (hash, seed) = (code.hash, seed(at));
        async move { store.poll_device_code(&hash, at, &seed).await.expect("poll") }
    };
    assert_eq!(poll(&approved, T0 + 1_000).await, DevicePoll::Pending);
    assert_eq!(poll(&approved, T0 + 2_000).await, DevicePoll::SlowDown);
    let grant = store.pending_device_code("BCDFGHJK", T0 + 2_000).await.expect("read").expect("pending");
    assert_eq!((grant.interval_s, grant.last_poll_at), (10, Some(T0 + 2_000)));
    store.decide_device_code("BCDFGHJK", Some(ada.id), T0 + 3_000).await.expect("approve");
    assert_eq!(store.pending_device_code("BCDFGHJK", T0 + 3_000).await.expect("read"), None);
    assert!(matches!(store.decide_device_code("BCDFGHJK", None, T0 + 3_000).await, Err(StoreError::NotFound(_))));
    let handed = seed(T0 + 12_000);
    assert_eq!(
        store.poll_device_code(&approved.hash, T0 + 12_000, &handed).await.expect("poll"),
        DevicePoll::Approved(ada.id)
    );
    let (session, user) = store.find_session(&handed.hash).await.expect("find").expect("the session exists");
    assert_eq!(
        (session.id, session.user_id, session.client.as_str(), user.id),
        (handed.id, ada.id, "sluice-cli", ada.id)
    );
    // Used: invalid even when polled too soon, and the seed of a later poll makes nothing.
    let late = seed(T0 + 12_001);
    assert_eq!(store.poll_device_code(&approved.hash, T0 + 12_001, &late).await.expect("poll"), DevicePoll::Invalid);
    assert_eq!(store.find_session(&late.hash).await.expect("find"), None);

    store.decide_device_code("LMNPQRST", None, T0 + 1_000).await.expect("deny");
    assert_eq!(poll(&denied, T0 + 6_000).await, DevicePoll::Denied);
    assert_eq!(poll(&denied, T0 + 20_000).await, DevicePoll::Invalid);

    let expiring = device("VWXZBCDF", T0);
    store.create_device_code(&expiring).await.expect("create");
    assert_eq!(store.pending_device_code("VWXZBCDF", T0 + 600_000).await.expect("read"), None);
    assert!(matches!(
        store.decide_device_code("VWXZBCDF", Some(ada.id), T0 + 600_000).await,
        Err(StoreError::NotFound(_))
    ));
    assert_eq!(poll(&expiring, T0 + 600_000).await, DevicePoll::Expired);
    assert_eq!(poll(&device("GHJKLMNP", T0), T0).await, DevicePoll::Invalid);
}
