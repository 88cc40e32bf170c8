// @generated automatically by Diesel CLI.

diesel::table! {
    block_bands (workspace_id, block_id, band) {
        workspace_id -> Uuid,
        block_id -> Int8,
        band -> Int4,
        bytes -> Bytea,
    }
}

diesel::table! {
    block_granules (workspace_id, block_id, granule) {
        workspace_id -> Uuid,
        block_id -> Int8,
        granule -> Int4,
        bytes -> Bytea,
    }
}

diesel::table! {
    blocks (workspace_id, id) {
        workspace_id -> Uuid,
        id -> Int8,
        rows -> Int4,
        min_ts -> Int8,
        max_ts -> Int8,
        min_id -> Uuid,
        max_id -> Uuid,
        created_at -> Int8,
        head -> Bytea,
    }
}

diesel::table! {
    flow_scopes (workspace_id, flow_id, source, environment) {
        workspace_id -> Uuid,
        flow_id -> Text,
        source -> Text,
        environment -> Text,
        logs -> Int8,
    }
}

diesel::table! {
    flow_steps (workspace_id, flow_id, step_index) {
        workspace_id -> Uuid,
        flow_id -> Text,
        step_index -> Int4,
        logs -> Int8,
    }
}

diesel::table! {
    flows (workspace_id, flow_id) {
        workspace_id -> Uuid,
        flow_id -> Text,
        name -> Nullable<Text>,
        created_at -> Nullable<Int8>,
        steps -> Int8,
        debug -> Int8,
        info -> Int8,
        warn -> Int8,
        error -> Int8,
        first_ts -> Nullable<Int8>,
        last_ts -> Nullable<Int8>,
        active_ts -> Int8,
    }
}

diesel::table! {
    log_rollups (workspace_id, hour, source, environment, dataset, level, slot) {
        workspace_id -> Uuid,
        hour -> Int8,
        source -> Text,
        environment -> Text,
        dataset -> Text,
        level -> Text,
        count -> Int8,
        slot -> Int2,
    }
}

diesel::table! {
    log_rollups_daily (workspace_id, day, source, environment, dataset, level, slot) {
        workspace_id -> Uuid,
        day -> Int8,
        source -> Text,
        environment -> Text,
        dataset -> Text,
        level -> Text,
        count -> Int8,
        slot -> Int2,
    }
}

diesel::table! {
    log_rollups_daily_sources (workspace_id, day, source, level, slot) {
        workspace_id -> Uuid,
        day -> Int8,
        source -> Text,
        level -> Text,
        count -> Int8,
        slot -> Int2,
    }
}

diesel::table! {
    tail_watches (workspace_id, server) {
        workspace_id -> Uuid,
        server -> Text,
        expires_at -> Int8,
    }
}

diesel::table! {
    usage_monthly (workspace_id, month, slot) {
        workspace_id -> Uuid,
        month -> Int8,
        logs -> Int8,
        slot -> Int2,
    }
}

diesel::allow_tables_to_appear_in_same_query!(
    block_bands,
    block_granules,
    blocks,
    flow_scopes,
    flow_steps,
    flows,
    log_rollups,
    log_rollups_daily,
    log_rollups_daily_sources,
    tail_watches,
    usage_monthly,
);
