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
    log_rollups,
    log_rollups_daily,
    log_rollups_daily_sources,
    usage_monthly,
    blocks,
    block_bands,
    block_granules
);
