//! Identifiers: UUID v7 (time-ordered) for logs, workspaces, keys, users, sessions and created
//! flows.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The text was not a UUID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a valid identifier")]
pub struct IdParseError;

macro_rules! uuid_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(Uuid);

        impl $name {
            /// A new time-ordered identifier (UUID v7).
            pub fn generate() -> Self {
                Self(Uuid::now_v7())
            }

            /// Wraps an existing UUID.
            pub const fn from_uuid(uuid: Uuid) -> Self {
                Self(uuid)
            }

            /// The identifier as 16 bytes, the form stores keep.
            pub const fn as_bytes(&self) -> &[u8; 16] {
                self.0.as_bytes()
            }

            /// Reads the 16-byte form back; `None` when the slice is not 16 bytes long.
            pub fn from_slice(bytes: &[u8]) -> Option<Self> {
                Uuid::from_slice(bytes).ok().map(Self)
            }

            /// The underlying UUID.
            pub const fn as_uuid(&self) -> &Uuid {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = IdParseError;

            /// Accepts only the hyphenated 36-character form, the one sluice prints.
            fn from_str(text: &str) -> Result<Self, Self::Err> {
                if text.len() != 36 {
                    return Err(IdParseError);
                }
                Uuid::try_parse(text).map(Self).map_err(|_| IdParseError)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0.hyphenated(), f)
            }
        }
    };
}

uuid_id!(
    /// Identifies one stored log.
    LogId
);
uuid_id!(
    /// Identifies a workspace, the unit of tenancy.
    WorkspaceId
);
uuid_id!(
    /// Identifies an API key (never the key's secret value).
    KeyId
);
uuid_id!(
    /// Identifies a user (a person who signs in).
    UserId
);
uuid_id!(
    /// Identifies a session (never the session token's secret value).
    SessionId
);
uuid_id!(
    /// The id `POST /v1/flows` gives a flow it makes (logs may name any flow id, of any shape).
    FlowId
);

impl LogId {
    /// Ids for one request's `count` logs, in order: a UUID v7 of the current millisecond with
    /// random bits, then the same id plus one, plus two... Each request's ids are as
    /// unpredictable as [`LogId::generate`]'s (no counter shared across requests says how many
    /// logs others sent), and a block stores the ids of a request's logs in a byte or two each,
    /// where random bits take eight.
    ///
    /// ```
    /// let ids: Vec<_> = sluice_model::LogId::batch(3).collect();
    /// assert!(ids[0] < ids[1] && ids[1] < ids[2]);
    /// assert_eq!(ids[0].as_uuid().get_version_num(), 7);
    /// ```
    pub fn batch(count: usize) -> impl Iterator<Item = LogId> {
        // Bit 61 cleared: adding up to 2^61 never carries into the variant's bits above it.
        let first = Uuid::now_v7().as_u128() & !(1_u128 << 61);
        (0..count).map(move |offset| LogId(Uuid::from_u128(first + offset as u128)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batchs_ids_are_valid_v7_in_order_and_distinct_from_the_next_batchs() {
        let first: Vec<LogId> = LogId::batch(1000).collect();
        let second: Vec<LogId> = LogId::batch(1000).collect();
        for ids in [&first, &second] {
            assert!(ids.windows(2).all(|pair| pair[0] < pair[1]));
            assert!(ids.iter().all(|id| id.as_uuid().get_version_num() == 7));
            assert!(ids.iter().all(|id| id.as_uuid().get_variant() == uuid::Variant::RFC4122));
        }
        assert!(first.iter().all(|id| !second.contains(id)));
    }

    #[test]
    fn round_trips_through_text_and_bytes() {
        let id = LogId::generate();
        assert_eq!(id.to_string().parse::<LogId>(), Ok(id));
        assert_eq!(LogId::from_slice(id.as_bytes()), Some(id));
    }

    #[test]
    fn generated_ids_are_time_ordered() {
        let first = LogId::generate();
        let second = LogId::generate();
        assert!(second > first);
    }

    #[test]
    fn rejects_other_spellings() {
        assert!("not-a-uuid".parse::<LogId>().is_err());
        assert!("0190c1a2b3c47d8e9f0a1b2c3d4e5f60".parse::<LogId>().is_err());
    }
}
