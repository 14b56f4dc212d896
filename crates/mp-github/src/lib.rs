//! The GitHub client of mp: the port `mp-core` defines, over GitHub's REST and GraphQL
//! APIs.
//!
//! Architecture invariant: depends only on `mp-core` among our crates, and never on the
//! fake GitHub (`mp-github-fake`, which depends on this crate for the route names, the
//! GraphQL query texts and GitHub's limits); no governance decision is made here, only
//! translation between GitHub and the core's values.

/// GitHub lists at most this many commits of a pull request (`GET /pulls/{n}/commits`): the
/// rest cannot be read. The client and the fake GitHub answer
/// [`mp_core::port::GitHubError::Truncated`] for a pull request with this many commits or
/// more (exactly this many cannot be told apart from more), and the loopback server lists
/// no more than this.
pub const PULL_COMMITS_CAP: u32 = 250;

pub mod endpoint;
pub mod rest;

pub use endpoint::Endpoint;
pub use rest::{
    Credentials, EtagCache, RestConfig, RestGitHub, RestStats, RetryPolicy, RevertMode, Secret,
};
