//! UTC calendar arithmetic on Unix milliseconds, and ISO 8601 date-times read as them: the one
//! copy every layer uses (hours and days for stats and rollups, months for quotas). Every function
//! takes the instant as a parameter (this crate never reads the clock) and is defined before 1970.

use time::format_description::well_known::{Iso8601, Rfc3339};
use time::{OffsetDateTime, PrimitiveDateTime};

/// Milliseconds in an hour.
pub const MS_PER_HOUR: i64 = 3_600_000;
/// Milliseconds in a day.
pub const MS_PER_DAY: i64 = 86_400_000;

/// The hour a Unix ms falls in, as the Unix ms it starts at (also before 1970; the first
/// hour `i64` can hold starts at `i64::MIN`).
///
/// ```
/// assert_eq!(sluice_model::calendar::hour_start(3_600_001), 3_600_000);
/// assert_eq!(sluice_model::calendar::hour_start(-1), -3_600_000);
/// assert_eq!(sluice_model::calendar::hour_start(i64::MIN + 1), i64::MIN);
/// ```
pub fn hour_start(timestamp_ms: i64) -> i64 {
    timestamp_ms.saturating_sub(timestamp_ms.rem_euclid(MS_PER_HOUR))
}

/// The UTC day a Unix ms falls in, as the Unix ms its midnight is (also before 1970; the
/// first day `i64` can hold starts at `i64::MIN`).
///
/// ```
/// use sluice_model::calendar::{MS_PER_DAY, day_start_ms};
/// assert_eq!(day_start_ms(MS_PER_DAY + 1), MS_PER_DAY);
/// assert_eq!(day_start_ms(-1), -MS_PER_DAY);
/// assert_eq!(day_start_ms(i64::MIN), i64::MIN);
/// assert_eq!(day_start_ms(i64::MAX), i64::MAX - i64::MAX % MS_PER_DAY);
/// ```
pub fn day_start_ms(timestamp_ms: i64) -> i64 {
    timestamp_ms.saturating_sub(timestamp_ms.rem_euclid(MS_PER_DAY))
}

/// The Unix ms the UTC calendar month holding `ms` starts at.
///
/// ```
/// // 2026-11-24T12:00:00Z -> 2026-11-01T00:00:00Z
/// assert_eq!(sluice_model::calendar::month_start_ms(1_795_521_600_000), 1_793_491_200_000);
/// ```
pub fn month_start_ms(ms: i64) -> i64 {
    let moment = OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000)).unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let first = moment.date().replace_day(1).unwrap_or(moment.date());
    first.midnight().assume_utc().unix_timestamp() * 1000
}

/// The Unix ms the UTC month after the one holding `ms` starts at.
pub fn next_month_start_ms(ms: i64) -> i64 {
    let start = month_start_ms(ms);
    // 32 days after a month's first day is always in the next month.
    month_start_ms(start + 32 * MS_PER_DAY)
}

/// Reads an RFC 3339 / ISO 8601 date-time as Unix ms; one without a zone is UTC.
pub(crate) fn parse_timestamp_text(text: &str) -> Option<i64> {
    let moment = OffsetDateTime::parse(text, &Rfc3339)
        .or_else(|_| OffsetDateTime::parse(text, &Iso8601::DEFAULT))
        .or_else(|_| PrimitiveDateTime::parse(text, &Iso8601::DEFAULT).map(PrimitiveDateTime::assume_utc))
        .ok()?;
    i64::try_from(moment.unix_timestamp_nanos() / 1_000_000).ok()
}
