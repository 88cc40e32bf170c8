//! The closed vocabularies of a log entry: levels and environments.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A value outside a closed vocabulary; its `Display` is the zod-style message clients see.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid enum value. Expected {expected}, received '{received}'")]
pub struct UnknownValue {
    expected: &'static str,
    received: String,
}

/// The most characters of a received value an issue repeats: a 400 stays small whatever was
/// sent (docs/API.md, errors: an answer is at most 64 KiB).
pub const MAX_ECHO_CHARS: usize = 64;

/// `text` as an issue repeats it: whole when short, else its first [`MAX_ECHO_CHARS`]
/// characters and `…`.
///
/// ```
/// assert_eq!(sluice_model::echo("fatal"), "fatal");
/// assert_eq!(sluice_model::echo(&"x".repeat(1_000)).chars().count(), sluice_model::MAX_ECHO_CHARS + 1);
/// ```
pub fn echo(text: &str) -> String {
    clip(text, MAX_ECHO_CHARS)
}

/// `text` whole when it has at most `max_chars` characters, else its first `max_chars` and `…`:
/// how an answer repeats something a client sent without growing with it.
///
/// ```
/// assert_eq!(sluice_model::clip("ab", 2), "ab");
/// assert_eq!(sluice_model::clip("abc", 2), "ab…");
/// ```
pub fn clip(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

impl UnknownValue {
    /// `received` is not among `expected` (written as `'a' | 'b'`); an issue repeats at most
    /// [`MAX_ECHO_CHARS`] characters of it.
    pub fn new(expected: &'static str, received: &str) -> Self {
        Self { expected, received: echo(received) }
    }
}

macro_rules! vocabulary {
    ($(#[$meta:meta])* $name:ident, $expected:literal, { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        #[serde(rename_all = "lowercase")]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every value, in the order docs/API.md (entry rules) lists them.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The wire spelling.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl FromStr for $name {
            type Err = UnknownValue;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                match text {
                    $($text => Ok($name::$variant),)+
                    other => Err(UnknownValue::new($expected, other)),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

vocabulary!(
    /// Severity of a log entry. Ingestion is strict: exactly these four spellings.
    Level, "'debug' | 'info' | 'warn' | 'error'", {
        /// Diagnostic detail.
        Debug => "debug",
        /// Normal operation.
        Info => "info",
        /// Something unexpected that did not fail.
        Warn => "warn",
        /// A failure.
        Error => "error",
    }
);

vocabulary!(
    /// The deployment a log entry comes from.
    Environment, "'development' | 'staging' | 'production'", {
        /// A developer's machine.
        Development => "development",
        /// A pre-production deployment.
        Staging => "staging",
        /// Production.
        Production => "production",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_exact_spellings_only() {
        assert_eq!("warn".parse::<Level>(), Ok(Level::Warn));
        assert!("WARN".parse::<Level>().is_err());
        assert!("warning".parse::<Level>().is_err());
        assert_eq!("staging".parse::<Environment>(), Ok(Environment::Staging));
    }

    #[test]
    fn unknown_value_message_is_zod_shaped() {
        let error = "fatal".parse::<Level>().unwrap_err();
        assert_eq!(
            error.to_string(),
            "Invalid enum value. Expected 'debug' | 'info' | 'warn' | 'error', received 'fatal'"
        );
    }
}
