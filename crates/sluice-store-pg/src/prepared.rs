//! Fixed SQL that PostgreSQL prepares once per connection. diesel marks every `sql_query` and
//! every `sql` fragment unsafe to cache (their text may be built at run time), so a statement
//! holding one was parsed anew each time it ran: a round trip more (`Parse` then `Bind`), and
//! its parse and a fresh plan on the server, on every read of blocks.
//!
//! [`prepared`] holds only `&'static str`, so the statements it makes are as many as the
//! program's texts: diesel's statement cache keys them by their SQL, safely.
//!
//! Invariant: the SQL they push is a compile-time constant; values go in binds.

use std::marker::PhantomData;

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::result::QueryResult;
use diesel::serialize::ToSql;
use diesel::sql_types::{HasSqlType, Untyped};

/// A value bound to a [`Prepared`] statement.
trait Bind: Send {
    fn walk<'b>(&'b self, out: AstPass<'_, 'b, Pg>) -> QueryResult<()>;
}

struct Value<T, V>(V, PhantomData<fn() -> T>);

impl<T, V> Bind for Value<T, V>
where
    Pg: HasSqlType<T>,
    V: ToSql<T, Pg> + Send,
{
    fn walk<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_bind_param::<T, V>(&self.0)
    }
}

/// A whole statement of fixed SQL whose `$1`, `$2`... are the values [`Prepared::bind`] gave,
/// in that order, loaded by name (`QueryableByName`) as `sql_query`'s are.
pub(crate) struct Prepared<'a> {
    sql: &'static str,
    binds: Vec<Box<dyn Bind + 'a>>,
}

/// A statement of `sql`, cached per connection.
pub(crate) fn prepared<'a>(sql: &'static str) -> Prepared<'a> {
    Prepared { sql, binds: Vec::new() }
}

impl<'a> Prepared<'a> {
    /// The statement with its next value (`$n` for the `n`th) bound.
    pub(crate) fn bind<T, V>(mut self, value: V) -> Self
    where
        Pg: HasSqlType<T>,
        V: ToSql<T, Pg> + Send + 'a,
        T: 'a,
    {
        self.binds.push(Box::new(Value::<T, V>(value, PhantomData)));
        self
    }
}

impl QueryFragment<Pg> for Prepared<'_> {
    /// The SQL with each `$n` pushed as the `n`th value's placeholder: diesel numbers
    /// placeholders in the order they are pushed, which the text's order may not be.
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        let mut rest = self.sql;
        while let Some(at) = rest.find('$') {
            let digits = rest[at + 1..].bytes().take_while(u8::is_ascii_digit).count();
            let number: usize = rest[at + 1..at + 1 + digits].parse().unwrap_or(0);
            let Some(bind) = number.checked_sub(1).and_then(|index| self.binds.get(index)) else {
                return Err(diesel::result::Error::QueryBuilderError(
                    format!("no value bound for ${number} of {}", self.sql).into(),
                ));
            };
            out.push_sql(&rest[..at]);
            bind.walk(out.reborrow())?;
            rest = &rest[at + 1 + digits..];
        }
        out.push_sql(rest);
        Ok(())
    }
}

impl QueryId for Prepared<'_> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl Query for Prepared<'_> {
    type SqlType = Untyped;
}

#[cfg(test)]
mod tests {
    use diesel::pg::Pg;
    use diesel::query_builder::QueryFragment;

    use super::prepared;

    /// Unlike `sql_query` and `sql`, both may be cached: diesel keys them by their text.
    #[test]
    fn fixed_sql_is_safe_to_cache_and_sql_query_is_not() {
        let statement = prepared("SELECT 1 WHERE $1").bind::<diesel::sql_types::Bool, _>(true);
        assert_eq!(diesel::debug_query::<Pg, _>(&statement).to_string(), "SELECT 1 WHERE $1 -- binds: [true]");
        assert!(QueryFragment::<Pg>::is_safe_to_cache_prepared(&statement, &Pg).expect("a statement"));
        let literal = diesel::sql_query("SELECT 1");
        assert!(!QueryFragment::<Pg>::is_safe_to_cache_prepared(&literal, &Pg).expect("a statement"));
    }

    /// Placeholders are numbered in the order they are pushed: a `$3` written before `$1` is
    /// sent as `$1` with the third value.
    #[test]
    fn each_placeholder_is_sent_with_its_own_value_whatever_the_order() {
        use diesel::sql_types::Integer;
        let statement =
            prepared("SELECT $3, $1 WHERE $2 = $1").bind::<Integer, _>(1).bind::<Integer, _>(2).bind::<Integer, _>(3);
        assert_eq!(
            diesel::debug_query::<Pg, _>(&statement).to_string(),
            "SELECT $1, $2 WHERE $3 = $4 -- binds: [3, 1, 2, 1]"
        );
        let missing = prepared("SELECT $2").bind::<Integer, _>(1);
        assert!(
            QueryFragment::<Pg>::to_sql(&missing, &mut <Pg as diesel::backend::Backend>::QueryBuilder::default(), &Pg)
                .is_err()
        );
    }
}
