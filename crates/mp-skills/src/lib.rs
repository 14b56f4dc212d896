//! Skills for mp: the built-in validators, classifier rules and branch hooks implemented
//! over the traits that `mp-core` defines, the loader for user skills and the `skills.yml`
//! policy.
//!
//! Architecture invariant: depends only on `mp-core` among our crates; a skill never holds
//! a GitHub client. It sees read-only context values and returns verdicts.
