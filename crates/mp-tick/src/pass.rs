//! One repository's share of a tick, for a caller that runs the tick's global work on its
//! own ([`TickOptions::global_work_only`]): `mp serve` resyncs repository by repository,
//! so that the webhooks' work runs between them (docs/decisions/0066).

use mp_core::config::Config;
use mp_core::ids::Timestamp;
use mp_core::port::{AuditLog, GitHubHistory};

use super::run::{FullTickReport, drive_queues};
use super::{MergeMode, TickError, TickOptions, run_pr_path_as};

/// The pull-request path over every open pull request of the repositories `options`
/// covers (limit them with [`TickOptions::with_repos`]), then, in merge mode, their merge
/// queues: what [`run_tick`](super::run_tick) does for them between the inbox and the
/// branch supervisor. It loads and saves no watermarks and runs no branch supervisor, inbox
/// or drift check; the caller does, once for all repositories. The registry severity the
/// burn-in clock decided is the caller's to pass ([`TickOptions::registry_severity`]).
///
/// # Errors
/// [`TickError::BotLogin`] when the bot user cannot be learned; [`TickError::PathRules`]
/// when the path rules do not compile; [`TickError::ReceiptKeyRotation`] when the key's
/// rotation window is longer than mp accepts.
pub async fn run_repository_pass(
    github: &dyn GitHubHistory,
    audit: &dyn AuditLog,
    config: &Config,
    options: &TickOptions,
    now: Timestamp,
) -> Result<FullTickReport, TickError> {
    let bot = github.bot_login().await.map_err(TickError::BotLogin)?;
    let (mut options, rotation) = options.clone().at(now)?;
    options.global_work_only = false;
    // The service keeps its lease itself, renewed every minute, busy or idle.
    let mut pr = run_pr_path_as(github, audit, config, &options, bot.clone(), now, None).await?;
    let queues = std::mem::take(&mut pr.queues);
    let queued = std::mem::take(&mut pr.queued_prs);
    let mut report = FullTickReport {
        outcomes: pr.outcomes,
        metrics: pr.metrics,
        warnings: rotation.into_iter().chain(pr.warnings).collect(),
        operator_errors: pr.operator_errors,
        shard: options.shard,
        ..FullTickReport::default()
    };
    if options.merge_mode == MergeMode::Merge && !report.metrics.rate_limited {
        drive_queues(
            github,
            &mut report,
            config,
            &options,
            &bot,
            (&queues, &queued),
            now,
        )
        .await;
    }
    report.metrics.rate_limit_remaining = github.rate_limit_remaining();
    report.metrics.graphql_remaining = github.graphql_remaining();
    Ok(report)
}
