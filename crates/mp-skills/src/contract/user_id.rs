//! Identifier parameters: `UserId` — an RFC 4122 UUID or nothing — and the reserved words
//! no identifier parameter may carry (decisions/0036).
//!
//! Meaningful words such as `system`, `external_service` or `anonymous` are refused: they
//! mix an actor's state into an identifier. "No user" is spelled `null`, never a word and
//! never the nil UUID.

use std::fmt;

use serde_json::Value;

/// Words that must never stand in for an identifier (compared without letter case, with
/// `-` and spaces read as `_`): actor kinds and "no value" placeholders.
pub const RESERVED_WORDS: [&str; 11] = [
    "system",
    "external_service",
    "anonymous",
    "anon",
    "guest",
    "unknown",
    "none",
    "null",
    "nil",
    "undefined",
    "n/a",
];

/// Whether `text` is one of the [`RESERVED_WORDS`], in any spelling.
pub fn is_reserved(text: &str) -> bool {
    let normal: String = text
        .trim()
        .chars()
        .map(|c| match c {
            '-' | ' ' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    RESERVED_WORDS.contains(&normal.as_str())
}

/// A user identifier: a UUID of the RFC 4122 variant (any version, stored lowercase) or no
/// user context.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UserId(Option<String>);

impl UserId {
    /// No user context.
    pub const NONE: UserId = UserId(None);

    /// Reads an optional identifier: `None` is "no user context"; text must be a UUID in
    /// the 8-4-4-4-12 hexadecimal form whose variant is RFC 4122's (the first digit of the
    /// fourth group is 8, 9, a or b), of any version.
    ///
    /// # Errors
    /// [`UserIdError::Reserved`] for a reserved word, [`UserIdError::Nil`] for the nil
    /// UUID, [`UserIdError::NotUuid`] for any other text.
    pub fn parse(text: Option<&str>) -> Result<Self, UserIdError> {
        let Some(text) = text else {
            return Ok(Self::NONE);
        };
        let shown: String = text.chars().take(60).collect();
        if is_reserved(text) {
            return Err(UserIdError::Reserved(shown));
        }
        if !is_uuid(text) {
            return Err(UserIdError::NotUuid(shown));
        }
        if text.bytes().all(|b| b == b'0' || b == b'-') {
            return Err(UserIdError::Nil(shown));
        }
        let variant = text.as_bytes().get(19).copied().unwrap_or(b'0');
        if !matches!(variant.to_ascii_lowercase(), b'8' | b'9' | b'a' | b'b') {
            return Err(UserIdError::NotUuid(shown));
        }
        Ok(Self(Some(text.to_ascii_lowercase())))
    }

    /// The UUID, `None` when there is no user context.
    pub fn as_uuid(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl fmt::Display for UserId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.as_deref().unwrap_or("null"))
    }
}

/// Why a text is not a user identifier.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UserIdError {
    /// A reserved word; use `null` for "no user".
    #[error("user_id `{0}` is a reserved word; pass null when there is no user")]
    Reserved(String),
    /// The nil UUID (all zeros); use `null` for "no user".
    #[error("user_id `{0}` is the nil UUID; pass null when there is no user")]
    Nil(String),
    /// Not a UUID of the RFC 4122 variant.
    #[error(
        "user_id `{0}` is not an RFC 4122 UUID (e.g. 550e8400-e29b-41d4-a716-446655440000) or null"
    )]
    NotUuid(String),
}

impl UserIdError {
    /// `user_id_reserved`, `user_id_nil` or `user_id_not_uuid`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Reserved(_) => "user_id_reserved",
            Self::Nil(_) => "user_id_nil",
            Self::NotUuid(_) => "user_id_not_uuid",
        }
    }
}

/// Why a value is refused for an identifier parameter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdentifierError {
    /// A `user_id` that is not a UUID or null.
    #[error(transparent)]
    User(#[from] UserIdError),
    /// Any identifier carrying a reserved word.
    #[error(
        "identifier `{parameter}` carries the reserved word `{value}`; an identifier names one thing, never a state (pass null for none)"
    )]
    Reserved {
        /// The parameter.
        parameter: String,
        /// The word, as given.
        value: String,
    },
}

impl IdentifierError {
    /// The [`UserIdError::code`] of `user_id`, `identifier_reserved` otherwise.
    pub fn code(&self) -> &'static str {
        match self {
            Self::User(e) => e.code(),
            Self::Reserved { .. } => "identifier_reserved",
        }
    }
}

/// Whether a parameter name is an identifier (`id`, `*_id`).
pub fn is_identifier(name: &str) -> bool {
    name == "id" || name.ends_with("_id")
}

/// Whether a parameter name is the user identifier `user_id`, which must be an RFC 4122 UUID
/// or null (other identifiers need not be UUIDs).
pub fn is_user_identifier(name: &str) -> bool {
    name == "user_id"
}

/// Checks the value of parameter `name` against the identifier rules: `user_id` is a
/// [`UserId`]; any other identifier never carries a reserved word. Other parameters, and
/// values that are neither text nor null, are left to the schema.
///
/// # Errors
/// The rule the value breaks.
pub fn check_identifier(name: &str, value: &Value) -> Result<(), IdentifierError> {
    if is_user_identifier(name) {
        match value {
            Value::String(text) => UserId::parse(Some(text)).map(drop).map_err(Into::into),
            _ => Ok(()),
        }
    } else if is_identifier(name)
        && let Value::String(text) = value
        && is_reserved(text)
    {
        Err(IdentifierError::Reserved {
            parameter: name.to_owned(),
            value: text.chars().take(60).collect(),
        })
    } else {
        Ok(())
    }
}

fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}
