//! Diesel's view of the tables both stores hold alike, written once: `migrations/postgres`
//! and `migrations/sqlite` create them with the same columns, ids as [`Id`](crate::Id).

diesel::table! {
    use diesel::sql_types::*;
    use crate::Id;

    /// A workspace: its plan and the figures in force.
    workspaces (id) {
        id -> Id,
        name -> Text,
        plan -> Text,
        created_at -> BigInt,
        rate_limit -> Nullable<Integer>,
        monthly_quota -> Nullable<BigInt>,
        retention_days -> Integer,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::Id;

    /// An API key of a workspace, kept as its token's hash.
    api_keys (id) {
        id -> Id,
        workspace_id -> Id,
        hash -> Binary,
        name -> Nullable<Text>,
        env -> Text,
        scopes -> Text,
        created_at -> BigInt,
        expires_at -> Nullable<BigInt>,
        revoked_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::Id;

    /// A person who signs in.
    users (id) {
        id -> Id,
        email -> Text,
        email_key -> Text,
        name -> Text,
        password_hash -> Text,
        admin -> Bool,
        created_at -> BigInt,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::Id;

    /// A user's role in a workspace.
    memberships (workspace_id, user_id) {
        workspace_id -> Id,
        user_id -> Id,
        role -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::Id;

    /// A signed-in session, kept as its token's hash.
    sessions (id) {
        id -> Id,
        user_id -> Id,
        hash -> Binary,
        client -> Text,
        created_at -> BigInt,
        last_used_at -> BigInt,
        revoked_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::Id;

    /// A device sign-in under way (RFC 8628), kept as its device code's hash.
    device_codes (hash) {
        hash -> Binary,
        user_code -> Text,
        client_id -> Text,
        scope -> Nullable<Text>,
        created_at -> BigInt,
        expires_at -> BigInt,
        interval_s -> Integer,
        last_poll_at -> Nullable<BigInt>,
        state -> Text,
        user_id -> Nullable<Id>,
    }
}

diesel::joinable!(api_keys -> workspaces (workspace_id));
diesel::joinable!(memberships -> workspaces (workspace_id));
diesel::joinable!(memberships -> users (user_id));
diesel::joinable!(sessions -> users (user_id));
diesel::joinable!(device_codes -> users (user_id));
diesel::allow_tables_to_appear_in_same_query!(workspaces, api_keys, users, memberships, sessions, device_codes);
