//! Request counts of the REST adapter, per route template.

use std::collections::BTreeMap;

/// Counts for one route template, e.g. `GET /repos/{o}/{r}/pulls/{n}/commits`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RouteStats {
    /// HTTP requests sent, retries and pages included.
    pub requests: u64,
    /// Requests answered 304 Not Modified (served from the cache, free of charge).
    pub not_modified: u64,
    /// Requests that repeated an earlier one after a transient failure or a limit.
    pub retries: u64,
    /// Calls that ended in an error: an HTTP error status, or no usable answer after the
    /// retries.
    pub failures: u64,
    /// Requests answered with anything but 304: the ones that spent the primary limit.
    pub spent: u64,
    /// Requests that waited before going out, to keep under GitHub's points per minute.
    pub paced: u64,
}

/// Counts of every route the client used.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RestStats {
    /// By route template.
    pub routes: BTreeMap<String, RouteStats>,
}

impl RestStats {
    /// The counts of `route`, zero when it was not used.
    pub fn route(&self, route: &str) -> RouteStats {
        self.routes.get(route).copied().unwrap_or_default()
    }

    /// All HTTP requests sent.
    pub fn total_requests(&self) -> u64 {
        self.routes.values().map(|r| r.requests).sum()
    }

    /// All 304 answers.
    pub fn total_not_modified(&self) -> u64 {
        self.routes.values().map(|r| r.not_modified).sum()
    }

    /// All retries.
    pub fn total_retries(&self) -> u64 {
        self.routes.values().map(|r| r.retries).sum()
    }

    /// All requests that waited for the points-per-minute budget.
    pub fn total_paced(&self) -> u64 {
        self.routes.values().map(|r| r.paced).sum()
    }

    /// All failed calls.
    pub fn total_failures(&self) -> u64 {
        self.routes.values().map(|r| r.failures).sum()
    }

    /// Requests that spent the primary rate limit: every answer but 304.
    pub fn rate_limited_requests(&self) -> u64 {
        self.routes.values().map(|r| r.spent).sum()
    }

    pub(crate) fn entry(&mut self, route: &str) -> &mut RouteStats {
        self.routes.entry(route.to_owned()).or_default()
    }
}
