//! The domain model of sluice: what a log entry is, what a stored log is, and the rules an
//! entry must satisfy before anything stores it.
//!
//! Invariant: this crate knows nothing about HTTP, SQL, async runtimes or the clock: every
//! "now" it needs is passed in by the caller (`cargo xtask ci` fails on a runtime or database
//! dependency). Every rule an entry must meet lives here, once ([`Draft::finish`]).

mod accounts;
pub mod calendar;
mod draft;
mod entry;
mod ids;
mod issue;
mod json_object;
mod json_writer;
mod rules;
mod tenancy;
mod values;

pub use accounts::{DeviceGrant, DeviceState, Role, SESSION_IDLE_MS, SessionRecord, User};
pub use draft::{Draft, DraftVisitor, Field, Key, Sent, timestamp_text};
pub use entry::{Defaults, ENTRY_FIELDS, Log, LogEntry, ResolvedDefaults};
pub use ids::{FlowId, IdParseError, KeyId, LogId, SessionId, UserId, WorkspaceId};
pub use issue::{Issue, PathSegment};
pub use json_object::{JsonObject, NotAnObject, json_type_name, nesting_depth};
pub use json_writer::{EscapeFree, JsonKey, Member, ObjectWriter};
pub use rules::entry_from_json;
/// The inline-when-short string of an entry's `source` and `dataset` (re-exported so users of
/// these types need no dependency of their own).
pub use smol_str::SmolStr;
pub use tenancy::{ApiKeyRecord, KeyEnv, KeyState, Limits, Plan, Scope, Scopes, Workspace};
pub use values::{Environment, Level, MAX_ECHO_CHARS, UnknownValue, clip, echo};

/// Limits of docs/API.md (POST /v1/logs: entry rules and batch size) on a single entry or a batch.
pub mod limits {
    /// Most entries one ingestion request may carry.
    pub const MAX_ENTRIES_PER_REQUEST: usize = 100;
    /// Longest message, in characters.
    pub const MAX_MESSAGE_CHARS: u64 = 10_000;
    /// Longest source, in characters.
    pub const MAX_SOURCE_CHARS: u64 = 100;
    /// Most tags on one entry.
    pub const MAX_TAGS: u64 = 20;
    /// Longest tag, in characters.
    pub const MAX_TAG_CHARS: usize = 50;
    /// Highest `stepIndex`.
    pub const MAX_STEP_INDEX: u16 = 1000;
    /// The earliest timestamp an entry may carry: 2000-01-01T00:00:00Z, in Unix ms.
    pub const MIN_TIMESTAMP_MS: i64 = 946_684_800_000;
    /// How far past the server's clock an entry's timestamp may be, in ms (24 hours).
    pub const MAX_TIMESTAMP_AHEAD_MS: i64 = 86_400_000;
    /// How deeply arrays and objects may nest in `data` (`data` itself is the first level),
    /// so that any JSON reader can read back the logs it is in (serde_json stops at 128).
    pub const MAX_DATA_DEPTH: usize = 64;
}
