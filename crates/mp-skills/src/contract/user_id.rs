//! `UserId`: the user identifier a skill call may carry — an RFC 4122 UUID or nothing.
//!
//! Meaningful words such as `system`, `external_service` or `anonymous` are refused: they
//! mix an actor's state into an identifier. "No user" is spelled `null`, never a word.

use std::fmt;

/// Words that must never stand in for a user identifier.
pub const RESERVED_WORDS: [&str; 3] = ["system", "external_service", "anonymous"];

/// A user identifier: a UUID (any version, stored lowercase) or no user context.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UserId(Option<String>);

impl UserId {
    /// No user context.
    pub const NONE: UserId = UserId(None);

    /// Reads an optional identifier: `None` is "no user context"; text must be a UUID in
    /// the 8-4-4-4-12 hexadecimal form.
    ///
    /// # Errors
    /// [`UserIdError::Reserved`] for a reserved word, [`UserIdError::NotUuid`] for any
    /// other text.
    pub fn parse(text: Option<&str>) -> Result<Self, UserIdError> {
        let Some(text) = text else {
            return Ok(Self::NONE);
        };
        let shown: String = text.chars().take(60).collect();
        if RESERVED_WORDS.contains(&text.trim().to_ascii_lowercase().as_str()) {
            return Err(UserIdError::Reserved(shown));
        }
        if !is_uuid(text) {
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
    /// Not an RFC 4122 UUID.
    #[error(
        "user_id `{0}` is not an RFC 4122 UUID (e.g. 550e8400-e29b-41d4-a716-446655440000) or null"
    )]
    NotUuid(String),
}

impl UserIdError {
    /// `user_id_reserved` or `user_id_not_uuid`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Reserved(_) => "user_id_reserved",
            Self::NotUuid(_) => "user_id_not_uuid",
        }
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
