//! Small JSON bodies of the account routes (`{"email","password"}`, `{"name","env",...}`): read
//! capped, then each field taken with its issue, all issues answered together as a 400
//! Validation error in the shape of docs/API.md (Errors). A `sluice-api` request type is read
//! through [`Fields::read_as`], by its [`FromFields`] rules.

use actix_web::{HttpRequest, web};
use serde_json::{Map, Value};
use sluice_model::{Issue, PathSegment, json_type_name};

use crate::{ApiError, AppState, body};

/// The largest body an account route reads.
pub(crate) const MAX_BODY: usize = 16 * 1024;

/// A request body type's rules: how each of its fields is taken from a [`Fields`], with the
/// contract's issue for each refusal (serde's own messages are not the contract's).
pub(crate) trait FromFields: Sized {
    /// Takes the fields; `None` when any rule broke (each broken rule pushed as an issue).
    fn from_fields(fields: &mut Fields) -> Option<Self>;
}

/// A JSON object body, its fields taken one by one.
pub(crate) struct Fields {
    object: Map<String, Value>,
    issues: Vec<Issue>,
}

impl Fields {
    /// Reads the body (an empty one is `{}`): 400 `PARSE_ERROR` when it is not JSON, a
    /// Validation error when it is not an object.
    pub(crate) async fn read(request: &HttpRequest, payload: web::Payload, state: &AppState) -> Result<Self, ApiError> {
        let bytes = body::read_capped(payload, request.headers(), MAX_BODY, state.body_timeout).await?;
        Self::parse(&bytes)
    }

    /// Reads the body as a `T`: 400 with every issue when a rule breaks.
    pub(crate) async fn read_as<T: FromFields>(
        request: &HttpRequest,
        payload: web::Payload,
        state: &AppState,
    ) -> Result<T, ApiError> {
        let mut fields = Self::read(request, payload, state).await?;
        let value = T::from_fields(&mut fields);
        fields.finish()?;
        value.ok_or(ApiError::Internal)
    }

    /// [`Fields::read`] of bytes already read.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, ApiError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self { object: Map::new(), issues: Vec::new() });
        }
        let value: Value =
            serde_json::from_slice(bytes).map_err(|error| ApiError::Parse(format!("Invalid JSON body: {error}")))?;
        match value {
            Value::Object(object) => Ok(Self { object, issues: Vec::new() }),
            other => Err(ApiError::Validation(vec![Issue::new(
                Vec::new(),
                format!("Expected object, received {}", json_type_name(&other)),
            )])),
        }
    }

    fn issue(&mut self, name: &str, message: impl Into<String>) {
        self.issues.push(Issue::new(vec![PathSegment::from(name)], message));
    }

    /// A string field of 1 to `max` characters; `None` (with an issue when `required`) when
    /// absent or null.
    pub(crate) fn string(&mut self, name: &str, required: bool, max: usize) -> Option<String> {
        match self.object.remove(name) {
            None | Some(Value::Null) => {
                if required {
                    self.issue(name, "Required");
                }
                None
            }
            Some(Value::String(text)) if text.trim().is_empty() => {
                self.issue(name, "String must contain at least 1 character(s)");
                None
            }
            Some(Value::String(text)) if text.chars().count() > max => {
                self.issue(name, format!("String must contain at most {max} character(s)"));
                None
            }
            Some(Value::String(text)) => Some(text),
            Some(other) => {
                self.issue(name, format!("Expected string, received {}", json_type_name(&other)));
                None
            }
        }
    }

    /// A string field that must be one of a type's spellings (`"owner"`, `"live"`...).
    pub(crate) fn parsed<T: std::str::FromStr<Err = sluice_model::UnknownValue>>(
        &mut self,
        name: &str,
        required: bool,
    ) -> Option<T> {
        let text = self.string(name, required, 100)?;
        match text.parse() {
            Ok(value) => Some(value),
            Err(error) => {
                self.issue(name, error.to_string());
                None
            }
        }
    }

    /// A whole number field from 1 to `max`.
    pub(crate) fn positive(&mut self, name: &str, max: u64) -> Option<u64> {
        match self.object.remove(name) {
            None | Some(Value::Null) => None,
            Some(Value::Number(number)) => match number.as_u64() {
                Some(value) if (1..=max).contains(&value) => Some(value),
                _ => {
                    self.issue(name, format!("Expected a whole number from 1 to {max}"));
                    None
                }
            },
            Some(other) => {
                self.issue(name, format!("Expected number, received {}", json_type_name(&other)));
                None
            }
        }
    }

    /// The raw value of a field, taken out.
    pub(crate) fn take(&mut self, name: &str) -> Option<Value> {
        self.object.remove(name).filter(|value| !value.is_null())
    }

    /// Records an issue found by the caller.
    pub(crate) fn refuse(&mut self, name: &str, message: impl Into<String>) {
        self.issue(name, message);
    }

    /// Done: every issue met, as one 400 Validation error. Fields not taken are ignored.
    pub(crate) fn finish(self) -> Result<(), ApiError> {
        if self.issues.is_empty() { Ok(()) } else { Err(ApiError::Validation(self.issues)) }
    }
}
