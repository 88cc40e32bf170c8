//! `src/schema.rs` is written for diesel by hand; this test keeps it equal to what the
//! migrations create, column for column, by comparing diesel's SELECT list with SQLite's
//! own description of each table.

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::Text;
use sluice_store_diesel::columns::selected;

#[derive(QueryableByName)]
struct Column {
    #[diesel(sql_type = Text)]
    name: String,
}

fn migrated_columns(connection: &mut SqliteConnection, table: &str) -> Vec<String> {
    diesel::sql_query(format!("SELECT name FROM pragma_table_info('{table}') ORDER BY cid"))
        .load::<Column>(connection)
        .expect("table info")
        .into_iter()
        .map(|column| column.name)
        .collect()
}

#[tokio::test]
async fn schema_matches_migrations() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("schema.db");
    drop(sluice_store_sqlite::SqliteStore::open(&path).expect("open runs migrations"));
    let mut connection = SqliteConnection::establish(path.to_str().expect("utf-8")).expect("connect");
    connection.batch_execute("SELECT 1").expect("alive");

    let cases = [
        (
            "log_rollups",
            diesel::debug_query::<diesel::sqlite::Sqlite, _>(
                &schema::log_rollups::table.select(schema::log_rollups::all_columns),
            )
            .to_string(),
        ),
        (
            "log_rollups_daily",
            diesel::debug_query::<diesel::sqlite::Sqlite, _>(
                &schema::log_rollups_daily::table.select(schema::log_rollups_daily::all_columns),
            )
            .to_string(),
        ),
        (
            "log_rollups_daily_sources",
            diesel::debug_query::<diesel::sqlite::Sqlite, _>(
                &schema::log_rollups_daily_sources::table.select(schema::log_rollups_daily_sources::all_columns),
            )
            .to_string(),
        ),
        (
            "blocks",
            diesel::debug_query::<diesel::sqlite::Sqlite, _>(
                &schema::blocks::table.select(schema::blocks::all_columns),
            )
            .to_string(),
        ),
        (
            "block_bands",
            diesel::debug_query::<diesel::sqlite::Sqlite, _>(
                &schema::block_bands::table.select(schema::block_bands::all_columns),
            )
            .to_string(),
        ),
        (
            "block_granules",
            diesel::debug_query::<diesel::sqlite::Sqlite, _>(
                &schema::block_granules::table.select(schema::block_granules::all_columns),
            )
            .to_string(),
        ),
    ];
    for (table, sql) in cases {
        assert_eq!(selected(&sql), migrated_columns(&mut connection, table), "table {table}: {sql}");
    }
    // The tables both stores share, defined once (`sluice_store_diesel::schema`).
    for (table, mut columns) in sluice_store_diesel::columns::sqlite() {
        let mut migrated = migrated_columns(&mut connection, table);
        columns.sort();
        migrated.sort();
        assert_eq!(columns, migrated, "shared table {table}");
    }
}

// The schema module is private to the crate; the test reads the same file.
#[path = "../src/schema.rs"]
mod schema;
