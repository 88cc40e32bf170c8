//! Diesel's view of `migrations/sqlite`. Kept in step with the migrations by the
//! `schema_matches_migrations` test, which compares it with the columns SQLite reports.

diesel::table! {
    usage_monthly (workspace_id, month) {
        workspace_id -> Binary,
        month -> BigInt,
        logs -> BigInt,
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

diesel::allow_tables_to_appear_in_same_query!(
    logs,
    log_rollups,
    log_rollups_daily,
    log_rollups_daily_sources,
    usage_monthly,
    blocks,
    block_bands,
    block_granules
);
