//! The SQLite migrations as a whole: they run up, down and up again to the same schema (so
//! every `down.sql` undoes its `up.sql`), and every index of a workspace-scoped table leads
//! with `workspace_id`, so no query of one workspace walks another's rows.

use diesel::prelude::*;
use diesel::sql_types::{Integer, Nullable, Text};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");

/// Unique indexes of identifiers that are unique across workspaces, used only for point
/// lookups before any workspace is known: authentication finds a key by its hash, revocation
/// by its id, and a signed-in user's workspaces by the user.
const GLOBAL_LOOKUPS: [&str; 3] = ["api_keys.pk", "api_keys.hash", "memberships.user_id"];

#[derive(QueryableByName, Debug, PartialEq)]
struct Object {
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Nullable<Text>)]
    sql: Option<String>,
}

/// Every table, index, trigger and view the migrations made, by kind and name.
fn schema(connection: &mut SqliteConnection) -> Vec<Object> {
    diesel::sql_query(
        "SELECT type AS kind, name, sql FROM sqlite_schema \
         WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '__diesel_schema_migrations' ORDER BY type, name",
    )
    .load(connection)
    .expect("sqlite_schema")
}

fn connection() -> (tempfile::TempDir, SqliteConnection) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("migrations.db");
    let connection = SqliteConnection::establish(path.to_str().expect("utf-8 path")).expect("open");
    (dir, connection)
}

#[test]
fn migrations_run_up_down_and_up_again_to_the_same_schema() {
    let (_dir, mut connection) = connection();
    connection.run_pending_migrations(MIGRATIONS).expect("up");
    let first = schema(&mut connection);
    assert!(first.iter().any(|object| object.name == "logs"), "the migrations make the logs table");

    connection.revert_all_migrations(MIGRATIONS).expect("down");
    assert_eq!(schema(&mut connection), [], "every down.sql removes what its up.sql made");

    connection.run_pending_migrations(MIGRATIONS).expect("up again");
    assert_eq!(schema(&mut connection), first);
}

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

#[derive(QueryableByName)]
struct IndexEntry {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    origin: String,
    #[diesel(sql_type = Integer)]
    partial: i32,
}

#[test]
fn every_index_of_a_workspace_scoped_table_leads_with_workspace_id() {
    let (_dir, mut connection) = connection();
    connection.run_pending_migrations(MIGRATIONS).expect("up");
    let scoped: Vec<String> = diesel::sql_query(
        "SELECT m.name AS name FROM sqlite_schema m, pragma_table_info(m.name) c \
         WHERE m.type = 'table' AND c.name = 'workspace_id' ORDER BY m.name",
    )
    .load::<Name>(&mut connection)
    .expect("tables")
    .into_iter()
    .map(|table| table.name)
    .collect();
    assert!(scoped.iter().any(|table| table == "logs"), "logs is scoped: {scoped:?}");

    let mut offenders = Vec::new();
    let mut checked = 0;
    for table in &scoped {
        let indexes: Vec<IndexEntry> =
            diesel::sql_query(format!("SELECT name, origin, \"partial\" FROM pragma_index_list('{table}')"))
                .load(&mut connection)
                .expect("index list");
        for index in indexes {
            let columns: Vec<String> =
                diesel::sql_query(format!("SELECT name FROM pragma_index_info('{}') ORDER BY seqno", index.name))
                    .load::<Name>(&mut connection)
                    .expect("index info")
                    .into_iter()
                    .map(|column| column.name)
                    .collect();
            let label =
                if index.origin == "pk" { format!("{table}.pk") } else { format!("{table}.{}", columns.join("+")) };
            checked += 1;
            if columns.first().map(String::as_str) != Some("workspace_id") && !GLOBAL_LOOKUPS.contains(&label.as_str())
            {
                offenders.push(format!("{} on {label} (partial: {})", index.name, index.partial));
            }
        }
    }
    assert!(checked > 5, "the check saw the indexes ({checked})");
    assert_eq!(offenders, Vec::<String>::new(), "indexes that do not lead with workspace_id");
}
