//! The version `mp --version` prints: the release and the commit it was built from.

/// `0.1.0 (commit 1a2b3c4d5e6f)`.
pub const LONG: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("MP_GIT_COMMIT"),
    ")"
);
