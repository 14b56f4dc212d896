//! Trusted external skill sources: descriptors, the adopter trust list, fetch and verify
//! into a snapshot directory, the committed pin lock and the local fetch lock, drift, and
//! the selection of the skills a source provides (`docs/sources.md`).
//!
//! Only a source on the adopter's trust list is ever fetched; nothing read from a registry,
//! an org-curated list, a lock, a pointer or a fetched tree authorises a fetch.

pub mod archive;
pub mod contain;
pub mod digest;
pub mod drift;
pub mod fetch;
pub mod format;
pub mod git;
pub mod layout;
pub mod lint;
pub mod lock;
pub mod model;
pub mod ops;
pub mod select;
pub mod skill_md;
pub mod trust;
