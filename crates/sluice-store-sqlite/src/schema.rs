//! Diesel's view of `migrations/sqlite`. Kept in step with the migrations by the
//! `schema_matches_migrations` test, which compares it with the columns SQLite reports.

diesel::table! {
    workspaces (id) {
        id -> Binary,
        name -> Text,
        plan -> Text,
        created_at -> BigInt,
        rate_limit -> Nullable<Integer>,
        monthly_quota -> Nullable<BigInt>,
        retention_days -> Integer,
    }
}

diesel::table! {
    usage_monthly (workspace_id, month) {
        workspace_id -> Binary,
        month -> BigInt,
        logs -> BigInt,
    }
}

diesel::table! {
    api_keys (id) {
        id -> Binary,
        workspace_id -> Binary,
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
    logs (seq) {
        seq -> BigInt,
        workspace_id -> Binary,
        id -> Binary,
        ts -> BigInt,
        level -> Text,
        environment -> Text,
        source -> Text,
        dataset -> Text,
        message -> Text,
        version -> Nullable<Text>,
        user_id -> Nullable<Text>,
        session_id -> Nullable<Text>,
        request_id -> Nullable<Text>,
        data -> Nullable<Text>,
        error_name -> Nullable<Text>,
        error_stack -> Nullable<Text>,
        tags -> Nullable<Text>,
        flow_id -> Nullable<Text>,
        step_index -> Nullable<Integer>,
        country -> Nullable<Text>,
        ip_address -> Nullable<Text>,
    }
}

diesel::table! {
    log_rollups (workspace_id, hour, source, environment, dataset, level) {
        workspace_id -> Binary,
        hour -> BigInt,
        source -> Text,
        environment -> Text,
        dataset -> Text,
        level -> Text,
        count -> BigInt,
    }
}

diesel::table! {
    log_rollups_daily (workspace_id, day, source, environment, dataset, level) {
        workspace_id -> Binary,
        day -> BigInt,
        source -> Text,
        environment -> Text,
        dataset -> Text,
        level -> Text,
        count -> BigInt,
    }
}

diesel::table! {
    log_rollups_daily_sources (workspace_id, day, source, level) {
        workspace_id -> Binary,
        day -> BigInt,
        source -> Text,
        level -> Text,
        count -> BigInt,
    }
}

// A block of a workspace's logs (`sluice_store::blockstore`): its key columns and head.
diesel::table! {
    blocks (id) {
        id -> BigInt,
        workspace_id -> Binary,
        rows -> Integer,
        min_ts -> BigInt,
        max_ts -> BigInt,
        min_id -> Binary,
        max_id -> Binary,
        created_at -> BigInt,
        head -> Binary,
    }
}

// A block's index, a band of `sluice_store::blockstore::BAND_BYTES` a row.
diesel::table! {
    block_bands (workspace_id, block_id, band) {
        workspace_id -> Binary,
        block_id -> BigInt,
        band -> Integer,
        bytes -> Binary,
    }
}

// A block's granules, one a row.
diesel::table! {
    block_granules (workspace_id, block_id, granule) {
        workspace_id -> Binary,
        block_id -> BigInt,
        granule -> Integer,
        bytes -> Binary,
    }
}

diesel::joinable!(api_keys -> workspaces (workspace_id));
diesel::allow_tables_to_appear_in_same_query!(
    workspaces,
    api_keys,
    logs,
    log_rollups,
    log_rollups_daily,
    log_rollups_daily_sources,
    usage_monthly,
    blocks,
    block_bands,
    block_granules
);

diesel::table! {
    users (id) {
        id -> Binary,
        email -> Text,
        email_key -> Text,
        name -> Text,
        password_hash -> Text,
        admin -> Bool,
        created_at -> BigInt,
    }
}

diesel::table! {
    memberships (workspace_id, user_id) {
        workspace_id -> Binary,
        user_id -> Binary,
        role -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    sessions (id) {
        id -> Binary,
        user_id -> Binary,
        hash -> Binary,
        client -> Text,
        created_at -> BigInt,
        last_used_at -> BigInt,
        revoked_at -> Nullable<BigInt>,
    }
}

diesel::table! {
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
        user_id -> Nullable<Binary>,
    }
}

diesel::joinable!(memberships -> workspaces (workspace_id));
diesel::joinable!(memberships -> users (user_id));
diesel::joinable!(sessions -> users (user_id));
diesel::allow_tables_to_appear_in_same_query!(workspaces, users, memberships, sessions, device_codes);
