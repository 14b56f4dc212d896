//! The four-quadrant classifier: every rule votes, the verdict is the maximum vote.

pub mod path_rules;
