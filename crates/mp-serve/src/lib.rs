//! `mp serve`: mp as a long-running service. GitHub's webhooks say what changed; the
//! service evaluates just that, within seconds, through the same mp-core use-cases as the
//! cron tick, and runs the whole tick periodically so a lost webhook costs at most one
//! resync.
//!
//! * [`signature`] checks `X-Hub-Signature-256`; [`payload`] parses the deliveries mp
//!   reads with its own serde models; [`route`] maps a delivery to work (a pure function).
//! * [`queue`] folds bursts into per-repository lanes (one worker per repository) and
//!   remembers delivery ids.
//! * [`Service`] holds the adapter, the workers, the tick lease and the resync timer;
//!   [`Service::router`] is its HTTP face (`/webhook`, `/healthz`, `/readyz`, `/metrics`),
//!   and [`Service::serve`] serves it on a TCP listener under connection [`Limits`]
//!   (timeouts, a cap on open connections, a log line for every refused one).
//!
//! An embedder builds a [`Service`] over its own [`GitHubHistory`](mp_core::port::GitHubHistory)
//! adapter, calls [`Service::start`], serves [`Service::router`] and drives
//! [`Service::run`] until its shutdown signal.

mod http;
mod listen;
pub mod metrics;
pub mod payload;
pub mod queue;
pub mod route;
mod service;
pub mod signature;

#[cfg(test)]
mod tests;

pub use listen::Limits;
pub use service::{ApiCounters, Readiness, Service, Settings, StartError};
pub use signature::{SignatureError, WebhookSecret};
