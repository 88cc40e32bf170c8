//! The storage conformance suite: one set of behaviours every backend must show.
//!
//! A backend's tests call [`conformance_suite!`](crate::conformance_suite) with an async
//! closure that builds a fresh, empty store (its own file or database); each behaviour below
//! becomes one `#[tokio::test]`. Nothing here knows which backend it runs against.

mod accounts;
pub mod blocks;
pub mod committer;
mod counts;
mod flows;
mod logs;
mod quota;
mod search;
mod sweep;
mod tenancy;

use serde_json::json;
use sluice_model::calendar::{MS_PER_DAY, MS_PER_HOUR, day_start_ms, hour_start, month_start_ms};
use sluice_model::{
    ApiKeyRecord, Environment, JsonObject, KeyEnv, KeyId, KeyState, Level, Limits, Log, LogEntry, LogId, Plan, Scopes,
    Workspace, WorkspaceId,
};
use sluice_query::stats::{Bucket, CountBy, LevelCount, RollupFilter};
use sluice_query::{Query, SearchField};

use crate::{LogFilter, NewApiKey, Page, Search, Store, StoreError, WriteBatch, accepted_month, retention};

pub use self::accounts::*;
pub use self::counts::*;
pub use self::flows::*;
pub use self::logs::*;
pub use self::quota::*;
pub use self::search::*;
pub use self::sweep::*;
pub use self::tenancy::*;

/// A store under test and what must outlive it (its file's directory, its database), dropped
/// after it.
pub struct Fixture<S, Keep> {
    store: S,
    _keep: Keep,
}

impl<S, Keep> Fixture<S, Keep> {
    /// `store`, keeping `keep` until the fixture is dropped.
    pub fn new(store: S, keep: Keep) -> Self {
        Fixture { store, _keep: keep }
    }
}

impl<S, Keep> std::ops::Deref for Fixture<S, Keep> {
    type Target = S;

    fn deref(&self) -> &S {
        &self.store
    }
}

/// Builds one test per behaviour of this module. `$make` is an expression evaluating to an
/// async closure (or function) that returns something dereferencing to the store under test.
#[macro_export]
macro_rules! conformance_suite {
    ($make:expr) => {
        $crate::conformance_suite!(@each $make;
            insert_then_get_round_trips_every_field,
            text_with_nul_and_rare_characters_round_trips,
            get_is_scoped_to_the_workspace,
            list_orders_newest_first_with_id_tiebreak,
            list_pages_report_has_more_exactly,
            list_filters_alone_and_combined,
            list_time_bounds_are_inclusive,
            list_is_scoped_to_the_workspace,
            failed_batch_stores_nothing,
            large_batches_are_stored_whole,
            workspaces_create_list_get_and_set_plan,
            keys_create_find_list_and_revoke,
            bootstrap_happens_once,
            ping_answers,
            search_finds_every_query_form_case_insensitively,
            search_fields_choose_where_to_look,
            search_filters_orders_and_pages,
            search_is_scoped_to_the_workspace,
            search_finds_long_needles_anywhere_and_pages_them_newest_first,
            search_pages_far_from_the_newest_when_blocks_overlap_in_time,
            search_finds_each_log_of_a_large_write_by_its_identifier,
            search_finds_identifiers_in_every_field_whatever_their_case,
            level_counts_group_by_hour_and_source_with_filters,
            level_counts_are_scoped_to_the_workspace,
            delete_before_removes_logs_everywhere,
            sweep_applies_each_workspace_cutoff,
            quota_refuses_the_batch_that_would_cross_it,
            quota_follows_plan_changes_and_counts_per_workspace,
            a_group_refuses_only_the_batches_over_their_quota,
            a_group_of_one_month_batches_is_counted_in_order,
            retention_sweep_keeps_each_workspace_its_days,
            rollups_equal_the_rows_after_random_ingests_and_deletes,
            flows_sum_their_logs_and_list_by_last_activity,
            flow_timeline_orders_steps_marks_gaps_and_truncates,
            flows_equal_the_rows_after_random_ingests_and_sweeps,
            logs_after_an_id_come_in_the_order_they_were_stored,
            users_are_unique_by_email_ignoring_case,
            members_change_and_a_workspace_keeps_an_owner,
            sessions_are_found_touched_listed_and_revoked,
            device_sign_in_is_decided_once_and_used_once
        );
    };
    (@each $make:expr; $($name:ident),+) => {
        $(
            #[tokio::test]
            async fn $name() {
                let fixture = ($make)().await;
                let store: &dyn $crate::Store = &*fixture;
                $crate::conformance::$name(store).await;
            }
        )+
    };
}

const T0: i64 = 1_700_000_000_000;

fn workspace(name: &str) -> Workspace {
    // Enterprise: no quota in the way of tests about something else.
    Workspace::new(name, Plan::Enterprise, T0)
}

async fn new_workspace(store: &dyn Store, name: &str) -> WorkspaceId {
    let workspace = workspace(name);
    store.create_workspace(&workspace).await.expect("create workspace");
    workspace.id
}

/// An order number for tests of the search index: `ORD-` and seven digits, another for each
/// `n` (under about 650).
pub fn order_number(n: i64) -> String {
    format!("ORD-{:07}", 4_800_000 + n * 7_919)
}

/// A request id for tests of the search index: 16 hex digits, mixed so that two of them share
/// no long run.
pub fn request_id(n: i64) -> String {
    let mut mixed = (n as u64).wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    format!("{:016x}", mixed ^ (mixed >> 31))
}

/// A plain log of `message` at `timestamp` (info, source `api`, production), for tests.
pub fn log(message: &str, timestamp: i64) -> Log {
    Log {
        id: LogId::generate(),
        entry: LogEntry {
            timestamp,
            level: Level::Info,
            message: message.to_owned(),
            source: "api".into(),
            environment: Environment::Production,
            dataset: "default".into(),
            version: None,
            user_id: None,
            session_id: None,
            request_id: None,
            data: None,
            error_name: None,
            error_stack: None,
            tags: None,
            flow_id: None,
            step_index: None,
        },
        country: None,
        ip_address: None,
    }
}

const EVERYTHING: Page = Page { limit: 1000, offset: 0 };

fn messages(logs: &[Log]) -> Vec<&str> {
    logs.iter().map(|log| log.entry.message.as_str()).collect()
}

fn search(raw: &str, fields: &[SearchField]) -> Search {
    Search { query: Query::parse(raw).expect("a valid query"), fields: fields.to_vec() }
}

async fn found(store: &dyn Store, workspace: WorkspaceId, raw: &str, fields: &[SearchField]) -> Vec<String> {
    let page =
        store.search_logs(workspace, &search(raw, fields), &LogFilter::default(), EVERYTHING).await.expect("search");
    page.logs.into_iter().map(|log| log.entry.message).collect()
}

/// A small deterministic generator (xorshift), so a failure names its seed and replays.
struct Random(u64);

impl Random {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}
