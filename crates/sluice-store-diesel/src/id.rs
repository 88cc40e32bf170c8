//! The id column: one SQL type ([`Id`]) that is PostgreSQL's `uuid` and SQLite's blob of 16
//! bytes, so one table definition serves both stores, and its Rust value ([`DbId`]).

use diesel::deserialize::FromSqlRow;
use diesel::deserialize::{self, FromSql};
use diesel::expression::AsExpression;
use diesel::query_builder::QueryId;
use diesel::serialize::{self, Output, ToSql};
use diesel::sql_types::SqlType;
use sluice_model::{KeyId, LogId, SessionId, UserId, WorkspaceId};
use uuid::Uuid;

/// An identifier column.
#[derive(Debug, Clone, Copy, Default, SqlType, QueryId)]
#[cfg_attr(feature = "postgres", diesel(postgres_type(oid = 2950, array_oid = 2951)))]
#[cfg_attr(feature = "sqlite", diesel(sqlite_type(name = "Binary")))]
pub struct Id;

/// An identifier as a column holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, AsExpression, FromSqlRow)]
#[diesel(sql_type = Id)]
pub struct DbId(pub Uuid);

macro_rules! model_ids {
    ($($id:ty),*) => {$(
        impl From<$id> for DbId {
            fn from(id: $id) -> Self {
                DbId(*id.as_uuid())
            }
        }

        impl From<DbId> for $id {
            fn from(id: DbId) -> Self {
                <$id>::from_uuid(id.0)
            }
        }
    )*};
}

model_ids!(WorkspaceId, KeyId, UserId, SessionId, LogId);

#[cfg(feature = "postgres")]
impl ToSql<Id, diesel::pg::Pg> for DbId {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, diesel::pg::Pg>) -> serialize::Result {
        <Uuid as ToSql<diesel::sql_types::Uuid, diesel::pg::Pg>>::to_sql(&self.0, out)
    }
}

#[cfg(feature = "postgres")]
impl FromSql<Id, diesel::pg::Pg> for DbId {
    fn from_sql(value: diesel::pg::PgValue<'_>) -> deserialize::Result<Self> {
        <Uuid as FromSql<diesel::sql_types::Uuid, diesel::pg::Pg>>::from_sql(value).map(DbId)
    }
}

#[cfg(feature = "sqlite")]
impl ToSql<Id, diesel::sqlite::Sqlite> for DbId {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, diesel::sqlite::Sqlite>) -> serialize::Result {
        <[u8] as ToSql<diesel::sql_types::Binary, diesel::sqlite::Sqlite>>::to_sql(self.0.as_bytes().as_slice(), out)
    }
}

#[cfg(feature = "sqlite")]
impl FromSql<Id, diesel::sqlite::Sqlite> for DbId {
    fn from_sql(value: diesel::sqlite::SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        let bytes = <Vec<u8> as FromSql<diesel::sql_types::Binary, diesel::sqlite::Sqlite>>::from_sql(value)?;
        Ok(DbId(Uuid::from_slice(&bytes)?))
    }
}
