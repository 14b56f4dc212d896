//! The markdown formats of trusted skill sources.

pub mod descriptor;
