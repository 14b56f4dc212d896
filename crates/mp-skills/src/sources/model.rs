//! The values every part of the external-sources machinery shares: a source id, the fetch
//! method, the cryptographic anchor, the pin (what the committed lock records) and the
//! refusal every rule reports.

use std::fmt;

/// A source id: kebab-case, `^[a-z0-9]+(-[a-z0-9]+)*$`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SourceId(String);

impl SourceId {
    /// Checks `text` is kebab-case and wraps it.
    pub fn parse(text: &str) -> Result<Self, String> {
        let kebab = !text.is_empty()
            && text.split('-').all(|part| {
                !part.is_empty()
                    && part
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            });
        if kebab {
            Ok(Self(text.to_owned()))
        } else {
            Err(format!(
                "source id `{text}` is not kebab-case (lowercase letters and digits joined by single hyphens)"
            ))
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SourceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The longest skill name the Agent Skills rules allow.
pub const MAX_SKILL_NAME: usize = 64;

/// Checks a skill name against the Agent Skills rules: 1 to 64 characters, lowercase
/// letters, digits and hyphens, no leading, trailing or consecutive hyphen. Returns why
/// not, naming the name.
pub fn check_skill_name(name: &str) -> Result<(), String> {
    let why = if name.is_empty() {
        Some("is empty".to_owned())
    } else if name.chars().count() > MAX_SKILL_NAME {
        Some(format!(
            "is {} characters long; at most {MAX_SKILL_NAME} are allowed",
            name.chars().count()
        ))
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        Some("may only hold lowercase letters, digits and hyphens".to_owned())
    } else if name.starts_with('-') || name.ends_with('-') {
        Some("must not start or end with a hyphen".to_owned())
    } else if name.contains("--") {
        Some("must not hold consecutive hyphens".to_owned())
    } else {
        None
    };
    match why {
        Some(why) => Err(format!("skill name `{name}` {why}")),
        None => Ok(()),
    }
}

/// How a source is fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// A shallow clone of a tag, which must resolve to the pinned commit.
    GitTag,
    /// A shallow clone of a branch tip: work in progress only, never anchored.
    GitBranch,
    /// A `.tar.gz` or `.zip` archive (URL or local path) whose SHA-512 is pinned.
    Archive,
}

impl Method {
    /// The spelling used in descriptors and locks.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::GitTag => "git-tag",
            Self::GitBranch => "git-branch",
            Self::Archive => "archive",
        }
    }

    /// Parses `git-tag`, `git-branch` or `archive`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "git-tag" => Some(Self::GitTag),
            "git-branch" => Some(Self::GitBranch),
            "archive" => Some(Self::Archive),
            _ => None,
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a fetch is checked against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// The commit a git tag must resolve to: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits.
    Commit(String),
    /// The SHA-512 of an archive: 128 lowercase hex digits.
    Sha512(String),
}

impl Anchor {
    /// The lock key: `commit` or `sha512`.
    pub fn key(&self) -> &'static str {
        match self {
            Self::Commit(_) => "commit",
            Self::Sha512(_) => "sha512",
        }
    }

    /// The hex value.
    pub fn value(&self) -> &str {
        match self {
            Self::Commit(v) | Self::Sha512(v) => v,
        }
    }
}

impl fmt::Display for Anchor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.key(), self.value())
    }
}

/// What must be committed to fetch a source: method, url, ref and the method's anchor
/// (`None` only for `git-branch`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// The source.
    pub id: SourceId,
    /// How it is fetched.
    pub method: Method,
    /// Git repository URL (any URL git accepts, `file://` included) or archive URL/path.
    pub url: String,
    /// Tag, branch, or archive version.
    pub reference: String,
    /// The commit or SHA-512 the fetch is verified against.
    pub anchor: Option<Anchor>,
}

/// A rule a source broke: which source, the stable code, what was wrong and how to fix it.
/// Every refusal of `mp sources` is one of these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The source id as written (it may not be a valid [`SourceId`]).
    pub source: String,
    /// Stable snake_case code, e.g. `source_tag_moved`.
    pub code: &'static str,
    /// What was wrong, naming the offending value.
    pub reason: String,
    /// What the adopter should do about it.
    pub fix: String,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "source {}: {}: {}; fix: {}",
            self.source, self.code, self.reason, self.fix
        )
    }
}
