//! Where the gate sends a pull request: the route the tick's assessment of a pull request
//! decides (the gate report and the classifier verdict together), as a value the drivers
//! act on and the adapters' generated worlds name.

/// Where the gate sends a pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// A blocking condition fails: post the diagnostic.
    Blocked,
    /// Quadrant D and only the owner's approval is missing: ask in the decision inbox.
    Inbox,
    /// Every condition holds: race guard, then merge (or observe).
    Mergeable,
    /// The base is not the gated branch: nothing is done, whatever the gate says.
    Ignored,
    /// Only required checks still to come fail: wait for CI, no new comment.
    Waiting,
    /// The base is behind `main` and nothing else fails but checks still to come: ask
    /// GitHub to bring the branch up to date (the owner's label carries over to mp's own
    /// update; decisions/0026).
    Update,
}

impl Route {
    /// Stable machine-readable code.
    pub fn code(self) -> &'static str {
        match self {
            Self::Blocked => "blocked",
            Self::Inbox => "inbox",
            Self::Mergeable => "mergeable",
            Self::Ignored => "ignored",
            Self::Waiting => "waiting",
            Self::Update => "update",
        }
    }
}
