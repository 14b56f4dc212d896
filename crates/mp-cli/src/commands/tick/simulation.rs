//! `mp tick --world FILE`: `--ticks N` ticks over a world file, on the in-memory adapter or
//! through the REST client over a loopback server, the world carrying over from tick to
//! tick with its simulated CI.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail};
use mp_github::rest::{Credentials, RestConfig, RevertMode, Secret};
use mp_github_fake::{LoopbackServer, MemoryGitHub};
use mp_tick::{FullTickReport, TickError, TickOptions};
use serde_json::Value;

use super::json::{Told, Writes, http_json, render_writes};
use super::{
    Adapter, Failure, TickArgs, TickInputs, TickRun, WorldRuns, merge_mode_name, tick_over,
    with_progress,
};
use crate::audit::CliAuditLog;
use crate::live::{read_path, rest_calls, rest_client, save_cache};
use crate::skills_load;
use crate::skills_load::SkillCalls;
use crate::world;

/// `--ticks N` ticks over a world file, the i-th at `now + i × --every`, on the in-memory
/// adapter or through HTTP. The world carries over from tick to tick (with its simulated
/// CI); a tick that fails closed ends the sequence.
pub(super) fn world_ticks(args: &TickArgs, path: &Path) -> anyhow::Result<WorldRuns> {
    let (mut loaded, now) = world::load(path, args.now.as_deref())?;
    if args.faults.is_some() && args.adapter != Adapter::Rest {
        bail!("--faults needs --adapter rest: faults are injected into the loopback server");
    }
    let faults = crate::commands::dev::read_faults(args.faults.as_deref())?;
    loaded.world.now = now;
    let every = args.every.seconds();
    let mut options = TickOptions::from_config(&loaded.config);
    if let Some(shard) = args.shard {
        options = options.with_shard(shard);
    }
    if let Some(key) = loaded.world.receipt_key.clone() {
        options = options.with_receipt_key(key);
    }
    if let Some(previous) = loaded.world.previous_receipt_key.clone() {
        options = options.with_previous_receipt_key(previous);
    }
    let skill_calls = SkillCalls::default();
    options = options.with_skills(skills_load::from_world(
        &loaded.config,
        &loaded.world.config,
        &skill_calls,
    )?);
    options = with_progress(options);
    let merge_mode = merge_mode_name(&options);
    let config_warnings = loaded.warnings.clone();
    let config = loaded.config.clone();
    let dry_run = args.dry_run;
    let mut out = WorldRuns {
        runs: Vec::new(),
        failed: None,
    };
    // One tick's result with its writes, calls and HTTP totals, made a run.
    let mut finish = |at: mp_core::Timestamp,
                      audit: &CliAuditLog,
                      result: Result<FullTickReport, TickError>,
                      writes: Writes,
                      calls: BTreeMap<String, u64>,
                      http: Option<Value>|
     -> anyhow::Result<bool> {
        audit.append_lines(skill_calls.take().iter().map(|call| call.to_json_line(at)))?;
        match result {
            Ok(report) => {
                out.runs.push(TickRun {
                    report,
                    writes: writes.0,
                    writes_json: writes.1,
                    audit: audit.records().iter().map(|r| r.to_json_line()).collect(),
                    calls,
                    http,
                    config_warnings: config_warnings.clone(),
                    merge_mode,
                    now: at.to_string(),
                    dry_run,
                });
                Ok(true)
            }
            Err(error) => {
                out.failed = Some(Failure::new(error, &writes, dry_run));
                Ok(false)
            }
        }
    };
    let instants: Vec<mp_core::Timestamp> = (0..i64::from(args.ticks))
        .map(|i| now.plus_seconds(i * every))
        .collect();
    match args.adapter {
        Adapter::Memory => {
            let github = MemoryGitHub::new(loaded.world);
            let runtime = tokio::runtime::Builder::new_current_thread().build()?;
            for &at in &instants {
                github.set_now(at);
                let (actions_before, calls_before) = (github.actions().len(), github.calls());
                let audit = CliAuditLog::new(args.audit_log.clone());
                let inputs = TickInputs {
                    audit: &audit,
                    config: &config,
                    options: &options,
                    now: at,
                    dry_run: args.dry_run,
                    throwaway: true,
                };
                let (result, planned) = runtime.block_on(tick_over(&github, &inputs));
                let writes = planned.unwrap_or_else(|| {
                    render_writes(
                        github.actions().get(actions_before..).unwrap_or_default(),
                        Told::Logged,
                    )
                });
                let calls = calls_since(github.calls(), &calls_before);
                if !finish(at, &audit, result, writes, calls, None)? {
                    break;
                }
            }
        }
        Adapter::Rest => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let server = LoopbackServer::start(loaded.world, faults)
                    .await
                    .context("starting the loopback server")?;
                let mut config_rest = RestConfig::new(
                    server.base_url(),
                    Credentials::Token(Secret::new("loopback-token")),
                );
                config_rest.revert = RevertMode::LoopbackExtension;
                // A simulated tick does not sleep: waits are milliseconds, and a wait the
                // server asks for (Retry-After, a secondary limit's minute) gives up at
                // once, as a wait past the live budget does.
                config_rest.retry = mp_github::rest::RetryPolicy::fast();
                // Nor does it pace: the loopback server has no points-per-minute limit.
                config_rest.points_per_minute = None;
                config_rest.reads = read_path(&config);
                let client = rest_client(config_rest, args.http_cache.as_deref())?;
                for &at in &instants {
                    server.memory().set_now(at);
                    let actions_before = server.memory().actions().len();
                    let calls_before = rest_calls(&client);
                    let audit = CliAuditLog::new(args.audit_log.clone());
                    let inputs = TickInputs {
                        audit: &audit,
                        config: &config,
                        options: &options,
                        now: at,
                        dry_run: args.dry_run,
                        throwaway: true,
                    };
                    let (result, planned) = tick_over(&client, &inputs).await;
                    let writes = planned.unwrap_or_else(|| {
                        render_writes(
                            server
                                .memory()
                                .actions()
                                .get(actions_before..)
                                .unwrap_or_default(),
                            Told::Logged,
                        )
                    });
                    let calls = calls_since(rest_calls(&client), &calls_before);
                    let http = Some(http_json(&client));
                    if !finish(at, &audit, result, writes, calls, http)? {
                        break;
                    }
                }
                save_cache(&client, args.http_cache.as_deref())?;
                server.shutdown().await;
                anyhow::Ok(())
            })?;
        }
    }
    Ok(out)
}

/// Calls per route made since `before`.
fn calls_since(
    now: BTreeMap<String, u64>,
    before: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    now.into_iter()
        .filter_map(|(route, count)| {
            let made = count - before.get(&route).copied().unwrap_or(0);
            (made > 0).then_some((route, made))
        })
        .collect()
}
