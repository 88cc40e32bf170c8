//! The PostgreSQL migrations as a whole: they run up, down and up again to the same schema
//! (so every `down.sql` undoes its `up.sql`), and every index of a workspace-scoped table
//! (the partitions of the rows earlier builds kept included) leads with `workspace_id`, so no query of one workspace walks
//! another's rows. The tables both stores share (`sluice_store_diesel::schema`) have the
//! columns the migrations make.

use diesel::QueryableByName;
use diesel::sql_types::Text;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use diesel_migrations::MigrationHarness;
use sluice_store_pg::MIGRATIONS;
use sluice_store_pg::testing::TestDatabase;

/// Unique indexes of identifiers that are unique across workspaces, used only for point
/// lookups: authentication finds a key by its hash before any workspace is known, revocation
/// by its id; a signed-in user's workspaces are found by the user, before any workspace is known.
const GLOBAL_LOOKUPS: [&str; 3] = ["api_keys_pkey", "api_keys_hash", "memberships_user"];

#[derive(QueryableByName, Debug, PartialEq)]
struct Line {
    #[diesel(sql_type = Text)]
    line: String,
}

/// The schema as text, one line per column, index, constraint, function, trigger and
/// extension of the database (diesel's own bookkeeping table aside).
const SCHEMA: &str = "
    SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable
           || ' ' || coalesce(column_default, '') AS line
      FROM information_schema.columns
     WHERE table_schema = 'public' AND table_name <> '__diesel_schema_migrations'
    UNION ALL
    SELECT 'index ' || indexdef FROM pg_indexes
     WHERE schemaname = 'public' AND tablename <> '__diesel_schema_migrations'
    UNION ALL
    SELECT 'constraint ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid)
      FROM pg_constraint WHERE connamespace = 'public'::regnamespace
       AND conrelid::regclass::text <> '__diesel_schema_migrations'
    UNION ALL
    SELECT 'function ' || pg_get_functiondef(p.oid) FROM pg_proc p
      LEFT JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
     WHERE p.pronamespace = 'public'::regnamespace AND d.objid IS NULL
    UNION ALL
    SELECT 'trigger ' || pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal
    UNION ALL
    SELECT 'extension ' || extname FROM pg_extension
    ORDER BY line";

async fn schema(connection: &mut AsyncPgConnection) -> Vec<String> {
    diesel::sql_query(SCHEMA)
        .load::<Line>(connection)
        .await
        .expect("schema")
        .into_iter()
        .map(|line| line.line)
        .collect()
}

/// Runs `step` with the migration harness on a connection to `url`, off the runtime thread
/// (diesel's migrations are synchronous).
async fn harness(url: &str, step: fn(&mut AsyncConnectionWrapper<AsyncPgConnection>)) {
    let connection = AsyncPgConnection::establish(url).await.expect("connect");
    tokio::task::spawn_blocking(move || {
        let mut connection: AsyncConnectionWrapper<AsyncPgConnection> = AsyncConnectionWrapper::from(connection);
        step(&mut connection);
    })
    .await
    .expect("the migration step ran");
}

#[tokio::test]
async fn migrations_run_up_down_and_up_again_to_the_same_schema() {
    let database = TestDatabase::new("migrations_redo").await;
    let mut connection = AsyncPgConnection::establish(database.url()).await.expect("connect");
    // The test database is cloned from a template every migration ran on: the schema is up.
    let first = schema(&mut connection).await;
    assert!(first.iter().any(|line| line.starts_with("column logs.message ")), "the migrations make logs");

    harness(database.url(), |connection| {
        connection.revert_all_migrations(MIGRATIONS).expect("down");
    })
    .await;
    let extensions_only: Vec<String> =
        schema(&mut connection).await.into_iter().filter(|line| !line.starts_with("extension ")).collect();
    assert_eq!(extensions_only, Vec::<String>::new(), "every down.sql removes what its up.sql made");

    harness(database.url(), |connection| {
        connection.run_pending_migrations(MIGRATIONS).expect("up again");
    })
    .await;
    assert_eq!(schema(&mut connection).await, first);
}

#[derive(QueryableByName, Debug)]
struct Index {
    #[diesel(sql_type = Text)]
    table: String,
    #[diesel(sql_type = Text)]
    index: String,
    #[diesel(sql_type = Text)]
    first: String,
}

#[tokio::test]
async fn every_index_of_a_workspace_scoped_table_leads_with_workspace_id() {
    let database = TestDatabase::new("index_leads").await;
    // A store that has connected: whatever it makes counts too.
    let store = sluice_store_pg::PgStore::connect(database.url(), &sluice_store_pg::PgOptions::default())
        .await
        .expect("connect");
    drop(store);
    let mut connection = AsyncPgConnection::establish(database.url()).await.expect("connect");
    let indexes: Vec<Index> = diesel::sql_query(
        "SELECT c.relname::text AS \"table\", i.relname::text AS index, \
                coalesce(a.attname::text, pg_get_indexdef(x.indexrelid, 1, true)) AS first \
           FROM pg_index x \
           JOIN pg_class i ON i.oid = x.indexrelid \
           JOIN pg_class c ON c.oid = x.indrelid \
           LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = x.indkey[0] \
          WHERE c.relnamespace = 'public'::regnamespace \
            AND EXISTS (SELECT 1 FROM pg_attribute w WHERE w.attrelid = c.oid AND w.attname = 'workspace_id' \
                                                      AND NOT w.attisdropped) \
          ORDER BY 1, 2",
    )
    .load(&mut connection)
    .await
    .expect("indexes");
    assert!(indexes.iter().any(|index| index.table.starts_with("logs")), "logs' indexes are checked: {indexes:?}");
    let offenders: Vec<String> = indexes
        .iter()
        .filter(|index| index.first != "workspace_id" && !GLOBAL_LOOKUPS.contains(&index.index.as_str()))
        .map(|index| format!("{} on {} (first: {})", index.index, index.table, index.first))
        .collect();
    assert_eq!(offenders, Vec::<String>::new(), "indexes that do not lead with workspace_id");
}

#[derive(QueryableByName)]
struct Column {
    #[diesel(sql_type = Text)]
    name: String,
}

#[tokio::test]
async fn shared_tables_match_the_migrations() {
    let database = TestDatabase::new("shared_tables").await;
    let mut connection = AsyncPgConnection::establish(database.url()).await.expect("connect");
    for (table, mut columns) in sluice_store_diesel::columns::postgres() {
        let migrated: Vec<Column> = diesel::sql_query(
            "SELECT column_name::text AS name FROM information_schema.columns \
              WHERE table_schema = 'public' AND table_name = $1",
        )
        .bind::<Text, _>(table)
        .load(&mut connection)
        .await
        .expect("columns");
        let mut migrated: Vec<String> = migrated.into_iter().map(|column| column.name).collect();
        migrated.sort();
        columns.sort();
        assert_eq!(columns, migrated, "shared table {table} (sluice_store_diesel::schema)");
    }
}
