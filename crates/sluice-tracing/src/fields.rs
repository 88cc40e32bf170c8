//! An event's or span's fields as JSON: numbers and booleans as themselves, everything else
//! as its text; the `message` field apart.

use serde_json::{Map, Value, json};
use tracing::field::{Field, Visit};

/// A span's fields, kept in its extensions.
pub(crate) struct SpanFields(pub(crate) Map<String, Value>);

/// Fields being recorded.
#[derive(Default)]
pub(crate) struct Fields {
    pub(crate) map: Map<String, Value>,
    pub(crate) message: Option<String>,
}

impl Fields {
    fn put(&mut self, field: &Field, value: Value) {
        if field.name() == "message" {
            self.message = Some(match value {
                Value::String(text) => text,
                other => other.to_string(),
            });
        } else {
            self.map.insert(field.name().to_owned(), value);
        }
    }
}

impl Visit for Fields {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, json!(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, json!(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, json!(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, json!(value));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, json!(value));
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.put(field, json!(value.to_string()));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.put(field, json!(format!("{value:?}")));
    }
}
