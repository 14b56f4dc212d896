//! Skills for mp: the registry of built-in and user skills, the WebAssembly sandbox that
//! runs user skills, skill contract documents and their linter, and the `skills.yml`
//! policy applied to all of them.
//!
//! - [`registry`]: lists the built-ins under their names and loads user skills from
//!   `config/skills/{validators,classifier,branch_hooks}/`.
//! - [`sandbox`]: loads a module, refuses imports other than `mp.log`, runs calls under
//!   fuel, memory and output caps (ABI: `docs/skills-abi.md`).
//! - [`contract`]: the contract document every user skill carries, and `UserId`.
//! - [`lint`]: `mp skills lint`.
//! - [`skill_set`]: the registry's user skills as the `SkillSet` a tick runs, every call
//!   recorded for the audit log.
//!
//! Architecture invariant: depends only on `mp-core` among our crates; a skill never holds
//! a GitHub client. It sees read-only context values and returns verdicts. The WebAssembly
//! runtime lives here, never in `mp-core`.

pub mod contract;
pub mod lint;
pub mod registry;
pub mod sandbox;
pub mod skill_set;
pub mod sources;

#[cfg(test)]
mod test_support;
