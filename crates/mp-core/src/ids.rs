//! Identifier newtypes: repository names, commit SHAs, PR numbers, logins and timestamps.
//!
//! Each identifier has a checking constructor (`parse`) so a value of the type is always
//! well formed. Timestamps are always passed in; nothing here reads a clock.

use std::fmt;
use std::str::FromStr;

/// Why a string was refused as an identifier.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} {value:?}: {expected}")]
pub struct ParseIdError {
    kind: &'static str,
    value: String,
    expected: &'static str,
}

impl ParseIdError {
    fn new(kind: &'static str, value: &str, expected: &'static str) -> Self {
        // Keep error messages bounded even for hostile input.
        let value: String = value.chars().take(120).collect();
        Self {
            kind,
            value,
            expected,
        }
    }

    /// The kind of identifier that was expected, e.g. `"commit sha"`.
    pub fn kind(&self) -> &'static str {
        self.kind
    }
}

fn is_owner_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

fn is_repo_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// A GitHub repository name `owner/name`, lower-cased (GitHub names are case-insensitive).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RepoName {
    full: String,
    slash: usize,
}

impl RepoName {
    /// Parses `owner/name`: owner `[A-Za-z0-9][A-Za-z0-9-]{0,38}`, name `[A-Za-z0-9._-]{1,100}`.
    ///
    /// # Errors
    /// Returns [`ParseIdError`] when the text does not have that shape.
    pub fn parse(text: &str) -> Result<Self, ParseIdError> {
        const EXPECTED: &str = "expected owner/name";
        let err = || ParseIdError::new("repository name", text, EXPECTED);
        let (owner, name) = text.split_once('/').ok_or_else(err)?;
        let owner_ok = !owner.is_empty()
            && owner.len() <= 39
            && owner.starts_with(|c: char| c.is_ascii_alphanumeric())
            && owner.chars().all(is_owner_char);
        let name_ok = !name.is_empty() && name.len() <= 100 && name.chars().all(is_repo_char);
        if !owner_ok || !name_ok {
            return Err(err());
        }
        Ok(Self {
            full: text.to_ascii_lowercase(),
            slash: owner.len(),
        })
    }

    /// The owner (user or organisation) part.
    pub fn owner(&self) -> &str {
        &self.full[..self.slash]
    }

    /// The repository name without its owner.
    pub fn name(&self) -> &str {
        &self.full[self.slash + 1..]
    }

    /// `owner/name`.
    pub fn as_str(&self) -> &str {
        &self.full
    }
}

impl fmt::Display for RepoName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.full)
    }
}

impl FromStr for RepoName {
    type Err = ParseIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// A full git object id: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CommitSha(String);

impl CommitSha {
    /// Parses a full commit SHA; upper-case hex is accepted and lower-cased.
    ///
    /// # Errors
    /// Returns [`ParseIdError`] unless the text is 40 or 64 hex digits.
    pub fn parse(text: &str) -> Result<Self, ParseIdError> {
        let ok = matches!(text.len(), 40 | 64) && text.chars().all(|c| c.is_ascii_hexdigit());
        if !ok {
            return Err(ParseIdError::new(
                "commit sha",
                text,
                "expected 40 or 64 hex digits",
            ));
        }
        Ok(Self(text.to_ascii_lowercase()))
    }

    /// The full hex string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The 7-character abbreviation used in messages.
    pub fn short(&self) -> &str {
        &self.0[..7]
    }
}

impl fmt::Display for CommitSha {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for CommitSha {
    type Err = ParseIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// A pull request (or issue) number within a repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PrNumber(u64);

impl PrNumber {
    /// Wraps a number.
    pub const fn new(number: u64) -> Self {
        Self(number)
    }

    /// The number.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for PrNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A GitHub login, lower-cased (logins are case-insensitive). App bot users carry the
/// `[bot]` suffix, e.g. `mp-gate[bot]`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Login(String);

impl Login {
    /// Parses a login: `[A-Za-z0-9][A-Za-z0-9-]{0,38}`, optionally followed by `[bot]`.
    ///
    /// # Errors
    /// Returns [`ParseIdError`] when the text does not have that shape.
    pub fn parse(text: &str) -> Result<Self, ParseIdError> {
        let base = text.strip_suffix("[bot]").unwrap_or(text);
        let ok = !base.is_empty()
            && base.len() <= 39
            && base.starts_with(|c: char| c.is_ascii_alphanumeric())
            && base.chars().all(is_owner_char);
        if !ok {
            return Err(ParseIdError::new(
                "login",
                text,
                "expected [A-Za-z0-9][A-Za-z0-9-]{0,38}, optionally with a [bot] suffix",
            ));
        }
        Ok(Self(text.to_ascii_lowercase()))
    }

    /// The bot user of a GitHub App with the given slug: `<slug>[bot]`.
    ///
    /// # Errors
    /// Returns [`ParseIdError`] when the slug is not a valid login.
    pub fn for_app(slug: &str) -> Result<Self, ParseIdError> {
        Self::parse(&format!("{slug}[bot]"))
    }

    /// The login text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// GitHub's placeholder for a deleted account (`ghost`), which adapters also give an
    /// author GitHub sends as `null`. It is never trusted: the configuration refuses it as
    /// the owner, an allowlisted actor or the bot.
    pub fn ghost() -> Self {
        Self(GHOST_LOGIN.to_owned())
    }

    /// Whether this is [`Login::ghost`].
    pub fn is_ghost(&self) -> bool {
        self.0 == GHOST_LOGIN
    }
}

/// The login GitHub shows for deleted accounts.
pub const GHOST_LOGIN: &str = "ghost";

impl fmt::Display for Login {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for Login {
    type Err = ParseIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// An instant in UTC, with second precision in its display form.
///
/// Always handed in by the caller (a port, a fixture, a test); mp-core never reads a clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(jiff::Timestamp);

impl Timestamp {
    /// Parses an ISO-8601 / RFC 3339 instant: `Z`, numeric offsets and fractional seconds
    /// are accepted; a value without offset is read as UTC. Epoch numbers are refused.
    ///
    /// # Errors
    /// Returns [`ParseIdError`] when the text is not such an instant.
    pub fn parse(text: &str) -> Result<Self, ParseIdError> {
        let err = || ParseIdError::new("timestamp", text, "expected an RFC 3339 date-time");
        let trimmed = text.trim();
        if !trimmed.contains('T') && !trimmed.contains(' ') {
            return Err(err());
        }
        if let Ok(ts) = trimmed.parse::<jiff::Timestamp>() {
            return Ok(Self(ts));
        }
        let civil: jiff::civil::DateTime = trimmed.parse().map_err(|_| err())?;
        let ts = civil
            .to_zoned(jiff::tz::TimeZone::UTC)
            .map_err(|_| err())?
            .timestamp();
        Ok(Self(ts))
    }

    /// The instant `seconds` after the Unix epoch.
    ///
    /// # Errors
    /// Returns [`ParseIdError`] when the value is outside the supported range.
    pub fn from_unix_seconds(seconds: i64) -> Result<Self, ParseIdError> {
        jiff::Timestamp::from_second(seconds)
            .map(Self)
            .map_err(|_| ParseIdError::new("timestamp", &seconds.to_string(), "out of range"))
    }

    /// This instant without its fraction of a second (towards the past), as GitHub's API
    /// writes every time it hands out.
    pub fn whole_second(self) -> Self {
        let second = self.0.as_second();
        let floor = if self.0.subsec_nanosecond() < 0 {
            second - 1
        } else {
            second
        };
        jiff::Timestamp::from_second(floor).map_or(self, Self)
    }

    /// Seconds since the Unix epoch.
    pub fn unix_seconds(self) -> i64 {
        self.0.as_second()
    }

    /// This instant moved by `seconds` (negative moves back), saturating at the range ends.
    pub fn plus_seconds(self, seconds: i64) -> Self {
        let target = self.0.as_second().saturating_add(seconds);
        match jiff::Timestamp::from_second(target) {
            Ok(ts) => Self(ts),
            Err(_) if seconds < 0 => Self(jiff::Timestamp::MIN),
            Err(_) => Self(jiff::Timestamp::MAX),
        }
    }

    /// This instant moved forward by `hours`.
    pub fn plus_hours(self, hours: i64) -> Self {
        self.plus_seconds(hours.saturating_mul(3600))
    }

    /// Whole seconds from `earlier` to `self` (negative when `earlier` is later).
    pub fn seconds_since(self, earlier: Timestamp) -> i64 {
        self.0.as_second() - earlier.0.as_second()
    }
}

impl fmt::Display for Timestamp {
    /// `YYYY-MM-DDTHH:MM:SSZ`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.strftime("%Y-%m-%dT%H:%M:%SZ"))
    }
}

impl FromStr for Timestamp {
    type Err = ParseIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_name_lower_cases_and_splits() {
        let repo = RepoName::parse("Acme/Widget.rs").expect("valid");
        assert_eq!(repo.as_str(), "acme/widget.rs");
        assert_eq!(repo.owner(), "acme");
        assert_eq!(repo.name(), "widget.rs");
        for bad in ["acme", "/x", "acme/", "-acme/x", "ac me/x", "a/b/c"] {
            assert!(RepoName::parse(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn commit_sha_needs_full_hex() {
        let sha = CommitSha::parse(&"A".repeat(40)).expect("valid");
        assert_eq!(sha.short(), "aaaaaaa");
        assert!(CommitSha::parse("abc1234").is_err());
        assert!(CommitSha::parse(&"g".repeat(40)).is_err());
    }

    #[test]
    fn login_accepts_bot_suffix() {
        assert_eq!(
            Login::for_app("mp-gate").expect("valid").as_str(),
            "mp-gate[bot]"
        );
        assert!(Login::parse("Alice").is_ok());
        assert!(Login::parse("-alice").is_err());
        assert!(Login::parse("").is_err());
    }

    #[test]
    fn timestamps_parse_iso_forms() {
        let z = Timestamp::parse("2026-01-02T03:04:05Z").expect("z");
        assert_eq!(z.to_string(), "2026-01-02T03:04:05Z");
        let offset = Timestamp::parse("2026-01-02T05:04:05+02:00").expect("offset");
        assert_eq!(offset, z);
        let naive = Timestamp::parse("2026-01-02T03:04:05").expect("naive");
        assert_eq!(naive, z);
        let fraction = Timestamp::parse("2026-01-02T03:04:05.250Z").expect("fraction");
        assert_eq!(fraction.unix_seconds(), z.unix_seconds());
        assert_ne!(fraction, z);
        assert_eq!(fraction.whole_second(), z);
        assert_eq!(z.whole_second(), z);
        let before_epoch = Timestamp::parse("1969-12-31T23:59:59.250Z").expect("fraction");
        assert_eq!(
            before_epoch.whole_second(),
            Timestamp::parse("1969-12-31T23:59:59Z").expect("whole")
        );
        assert!(Timestamp::parse("1767323045").is_err());
        assert!(Timestamp::parse("yesterday").is_err());
        assert_eq!(z.plus_hours(24).seconds_since(z), 86_400);
    }
}
