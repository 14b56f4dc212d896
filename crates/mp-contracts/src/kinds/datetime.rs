//! `DateTime`: an RFC 3339 date-time as the contracts write it, with its instant.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An RFC 3339 date-time with a mandatory offset, as JSON Schema's `date-time` format
/// defines it: `2026-05-11T08:15:00Z`, `2026-05-11T17:15:00.250+09:00`. The separator may
/// be `T` or `t` and the UTC designator `Z` or `z`; a space separator, a missing offset, a
/// missing seconds field and impossible dates (`2026-02-30`) are refused. A leap second
/// (`:60`) is accepted only at 23:59 UTC, as the schema validator does, and counts as
/// second 59 of that minute.
///
/// The text is kept as written, so a document serializes back unchanged; equality, order
/// and hashing use the instant, so `09:00:00+09:00` equals `00:00:00Z`.
#[derive(Clone)]
pub struct DateTime {
    text: String,
    instant: jiff::Timestamp,
}

/// Why a text is not an RFC 3339 date-time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not an RFC 3339 date-time with an offset: {reason}")]
pub struct ParseDateTimeError {
    text: String,
    reason: &'static str,
}

impl ParseDateTimeError {
    fn new(text: &str, reason: &'static str) -> Self {
        Self {
            text: text.to_owned(),
            reason,
        }
    }
}

impl DateTime {
    /// Parses `text` (see the type's documentation for the accepted grammar).
    ///
    /// # Errors
    /// Returns [`ParseDateTimeError`] naming the first part of the text that is wrong.
    pub fn parse(text: &str) -> Result<Self, ParseDateTimeError> {
        let instant =
            parse_instant(text).map_err(|reason| ParseDateTimeError::new(text, reason))?;
        Ok(Self {
            text: text.to_owned(),
            instant,
        })
    }

    /// The text as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The instant the text denotes.
    pub fn instant(&self) -> jiff::Timestamp {
        self.instant
    }

    /// The instant written in UTC (`…Z`), e.g. to record a time taken from a clock.
    pub fn from_instant(instant: jiff::Timestamp) -> Self {
        Self {
            text: instant.to_string(),
            instant,
        }
    }
}

fn digits(bytes: &[u8]) -> Option<u32> {
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        bytes
            .iter()
            .fold(0u32, |acc, b| acc * 10 + u32::from(b - b'0')),
    )
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        _ => 31,
    }
}

fn parse_instant(text: &str) -> Result<jiff::Timestamp, &'static str> {
    let b = text.as_bytes();
    if b.len() < 19 {
        return Err("too short");
    }
    let field = |range: std::ops::Range<usize>| digits(&b[range]);
    let (Some(year), Some(month), Some(day)) = (field(0..4), field(5..7), field(8..10)) else {
        return Err("the date must be YYYY-MM-DD");
    };
    if b[4] != b'-' || b[7] != b'-' {
        return Err("the date must be YYYY-MM-DD");
    }
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return Err("no such date");
    }
    if b[10] != b'T' && b[10] != b't' {
        return Err("date and time must be separated by T");
    }
    let (Some(hour), Some(minute), Some(second)) = (field(11..13), field(14..16), field(17..19))
    else {
        return Err("the time must be hh:mm:ss");
    };
    if b[13] != b':' || b[16] != b':' {
        return Err("the time must be hh:mm:ss");
    }
    if hour > 23 || minute > 59 || second > 60 {
        return Err("no such time");
    }
    let mut i = 19;
    let mut nanos = 0u32;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return Err("a fraction needs at least one digit");
        }
        // Nanosecond precision; further digits are truncated.
        let kept = &b[start..i.min(start + 9)];
        let value = digits(kept).unwrap_or(0);
        nanos = value * 10u32.pow(9 - u32::try_from(kept.len()).unwrap_or(9));
    }
    let offset_seconds: i32 = match &b[i..] {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let (Some(oh), Some(om)) = (digits(&[*h1, *h2]), digits(&[*m1, *m2])) else {
                return Err("the offset must be Z or ±hh:mm");
            };
            if oh > 23 || om > 59 {
                return Err("no such offset");
            }
            let magnitude = i32::try_from(oh * 3600 + om * 60).unwrap_or(0);
            if *sign == b'-' { -magnitude } else { magnitude }
        }
        [] => return Err("the offset is missing"),
        _ => return Err("the offset must be Z or ±hh:mm"),
    };
    if second == 60 {
        let local = i64::from(hour * 60 + minute) - i64::from(offset_seconds / 60);
        if local.rem_euclid(24 * 60) != 23 * 60 + 59 {
            return Err("a leap second is only allowed at 23:59:60 UTC");
        }
    }
    let to_i8 = |v: u32| i8::try_from(v).map_err(|_| "no such time");
    let civil = jiff::civil::DateTime::new(
        i16::try_from(year).map_err(|_| "no such date")?,
        to_i8(month)?,
        to_i8(day)?,
        to_i8(hour)?,
        to_i8(minute)?,
        to_i8(second.min(59))?,
        i32::try_from(nanos).map_err(|_| "no such time")?,
    )
    .map_err(|_| "no such date")?;
    let offset = jiff::tz::Offset::from_seconds(offset_seconds).map_err(|_| "no such offset")?;
    offset
        .to_timestamp(civil)
        .map_err(|_| "outside the supported range")
}

impl FromStr for DateTime {
    type Err = ParseDateTimeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for DateTime {
    /// The text as written.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DateTime({})", self.text)
    }
}

impl PartialEq for DateTime {
    fn eq(&self, other: &Self) -> bool {
        self.instant == other.instant
    }
}

impl Eq for DateTime {}

impl PartialOrd for DateTime {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for DateTime {
    fn cmp(&self, other: &Self) -> Ordering {
        self.instant.cmp(&other.instant)
    }
}

impl Hash for DateTime {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.instant.hash(state);
    }
}

impl Serialize for DateTime {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for DateTime {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = DateTime;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an RFC 3339 date-time string with an offset")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<DateTime, E> {
                DateTime::parse(v).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}
