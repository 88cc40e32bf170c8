//! The shared tables' columns as diesel selects them, for each store's test that compares
//! them with its migrated database.

use diesel::prelude::*;

use crate::schema::{api_keys, device_codes, memberships, sessions, users, workspaces};

/// The column names of a `SELECT` diesel wrote (`SELECT t.a, t.b FROM t`), in order.
pub fn selected(sql: &str) -> Vec<String> {
    let list = sql.trim_start_matches("SELECT ").split(" FROM ").next().unwrap_or_default();
    list.split(", ")
        .map(|column| column.rsplit('.').next().unwrap_or_default().trim_matches(['`', '"']).to_owned())
        .collect()
}

/// Each shared table's columns, as diesel selects every column of it for `$backend`.
macro_rules! shared_columns {
    ($backend:ty) => {
        [
            (
                "workspaces",
                diesel::debug_query::<$backend, _>(&workspaces::table.select(workspaces::all_columns)).to_string(),
            ),
            (
                "api_keys",
                diesel::debug_query::<$backend, _>(&api_keys::table.select(api_keys::all_columns)).to_string(),
            ),
            ("users", diesel::debug_query::<$backend, _>(&users::table.select(users::all_columns)).to_string()),
            (
                "memberships",
                diesel::debug_query::<$backend, _>(&memberships::table.select(memberships::all_columns)).to_string(),
            ),
            (
                "sessions",
                diesel::debug_query::<$backend, _>(&sessions::table.select(sessions::all_columns)).to_string(),
            ),
            (
                "device_codes",
                diesel::debug_query::<$backend, _>(&device_codes::table.select(device_codes::all_columns)).to_string(),
            ),
        ]
        .map(|(table, sql)| (table, selected(&sql)))
    };
}

/// Each shared table and its columns, as diesel reads them from SQLite.
#[cfg(feature = "sqlite")]
pub fn sqlite() -> [(&'static str, Vec<String>); 6] {
    shared_columns!(diesel::sqlite::Sqlite)
}

/// Each shared table and its columns, as diesel reads them from PostgreSQL.
#[cfg(feature = "postgres")]
pub fn postgres() -> [(&'static str, Vec<String>); 6] {
    shared_columns!(diesel::pg::Pg)
}
