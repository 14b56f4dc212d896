//! `mp contract ...`: agent-protocols contracts from the command line. `validate`,
//! `transition` and `check-update` ([`check_update`]) work on files and names; `new`, `activate`, `approve`, `reject`, `run` and
//! `log` drive the orchestrator over a filesystem store ([`flow`], [`session`]). The
//! definitions of the subcommands live here too.

pub mod check_update;
pub mod flow;
pub mod session;
pub mod validate;

use std::io::Write;

use anyhow::bail;
use clap::{Args, Subcommand};
use mp_contracts::lifecycle::{self, TransitionContext};
use mp_contracts::{Kind, State};
use serde_json::json;

use crate::Exit;
use crate::cli::Format;

/// `mp contract ...`
#[derive(Debug, Subcommand)]
pub enum ContractCommand {
    /// Validate contract documents (files, directories, JSON Lines) and list every problem.
    ///
    /// Each document is checked on its own; with --set all of them also form one closed set
    /// whose references must resolve. Documents stream through: a set of 100,000 is checked
    /// without holding the documents in memory. Exit 0 when valid, 1 when any problem is
    /// found, 2 when an input cannot be read or a document is not JSON.
    Validate(validate::ValidateArgs),
    /// Say whether a contract kind may move from one state to another, and on what
    /// condition. Exit 0 when the state machine has the row, 1 when it refuses it.
    Transition(TransitionArgs),
    /// Check a change to contract documents as a transition: two versions of one document
    /// (BEFORE AFTER [CONTEXT...]), or every contract file under PATHS against its version at
    /// a git revision (--git-ref REF PATH...).
    ///
    /// Both versions must be valid, keep id and kind, raise the version, follow the state
    /// machine (an unchanged state is fine), never leave Superseded, Revoked or Archived, and
    /// be Published only with an approved PublishGate among the context documents; Evidence
    /// never changes; a new file starts in an initial state; a deleted file is refused.
    /// Exit 0 allowed, 1 refused (every refusal listed), 2 unreadable or non-JSON input, or
    /// git could not read REF.
    CheckUpdate(check_update::CheckUpdateArgs),
    /// Store a new Draft contract (IntentContract, TaskSeed or Acceptance) and print its id.
    ///
    /// Missing common fields are filled in (next free id, Draft, version 1, now). The same
    /// document submitted again prints the id stored the first time and creates nothing.
    /// Exit 0 stored, 1 invalid (every error listed), 2 unreadable input or missing store.
    New(flow::NewArgs),
    /// Move a Draft contract to Active once its activation approvals cover the required
    /// roles (an intent emits intent.created.v1). Exit 0 Active, 1 refused.
    Activate(flow::ActivateArgs),
    /// Record an approval: an activation approval of a Draft contract, or a decision on a
    /// pending PublishGate. A replayed approval records nothing. Exit 0 recorded, 1 refused.
    Approve(flow::DecideArgs),
    /// Reject: a pending PublishGate records a rejection; any other contract is revoked
    /// (needs --reason). Exit 0 recorded, 1 refused.
    Reject(flow::DecideArgs),
    /// Run the orchestrator's next generation step: an Active intent makes its TaskSeed, an
    /// executed TaskSeed its Acceptance, a passed Acceptance its PublishGate. Each step
    /// happens once per source version (idempotency key). Exit 0 created or already made,
    /// 1 refused, retrying or frozen.
    Run(flow::RunArgs),
    /// Print or move the execution phase of an Active TaskSeed (Plan, Build, Stabilize,
    /// Refactor, Publish, Done; the phase table's loops back are allowed). Exit 0 moved or
    /// already there, 1 refused (illegal_phase, not_active).
    Phase(flow::PhaseArgs),
    /// Print the CloudEvents recorded in the store, oldest first (all, or those about ID).
    Log(flow::LogArgs),
}

/// Arguments of `mp contract transition`.
#[derive(Debug, Args)]
pub struct TransitionArgs {
    /// IntentContract, TaskSeed, Acceptance, PublishGate or Evidence.
    pub kind: String,
    /// The state before (Draft, Active, Frozen, Published, Superseded, Revoked, Archived).
    pub before: String,
    /// The state after.
    pub after: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Runs a `mp contract` subcommand.
pub fn run(command: &ContractCommand, out: &mut dyn Write) -> anyhow::Result<Exit> {
    match command {
        ContractCommand::Validate(args) => validate::validate(args, out),
        ContractCommand::Transition(args) => transition(args, out),
        ContractCommand::CheckUpdate(args) => check_update::check_update(args, out),
        ContractCommand::New(args) => flow::new(args, out),
        ContractCommand::Activate(args) => flow::activate(args, out),
        ContractCommand::Approve(args) => flow::decide(args, mp_contracts::Decision::Approved, out),
        ContractCommand::Reject(args) => flow::decide(args, mp_contracts::Decision::Rejected, out),
        ContractCommand::Run(args) => flow::run(args, out),
        ContractCommand::Phase(args) => flow::phase(args, out),
        ContractCommand::Log(args) => flow::log(args, out),
    }
}

fn parse_state(text: &str) -> anyhow::Result<State> {
    match State::ALL.into_iter().find(|s| s.as_str() == text) {
        Some(state) => Ok(state),
        None => bail!(
            "unknown state `{text}` (expected one of Draft, Active, Frozen, Published, Superseded, Revoked, Archived)"
        ),
    }
}

fn transition(args: &TransitionArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let Some(kind) = Kind::from_name(&args.kind) else {
        bail!(
            "unknown kind `{}` (expected one of IntentContract, TaskSeed, Acceptance, PublishGate, Evidence)",
            args.kind
        );
    };
    let before = parse_state(&args.before)?;
    let after = parse_state(&args.after)?;
    let verdict = lifecycle::guard(kind, before, after);
    match args.format {
        Format::Text => match &verdict {
            Ok(guard) => writeln!(out, "{kind} {before} -> {after}: allowed; {guard}")?,
            Err(e) => writeln!(
                out,
                "{kind} {before} -> {after}: refused; {}: {}",
                e.code, e.message
            )?,
        },
        Format::Json => {
            let value = match &verdict {
                Ok(guard) => {
                    // What the guard says when nothing is known about the contract.
                    let unmet =
                        lifecycle::transition(kind, before, after, &TransitionContext::default())
                            .err()
                            .map(|e| e.code);
                    json!({
                        "kind": kind.as_str(),
                        "before": before.as_str(),
                        "after": after.as_str(),
                        "allowed": true,
                        "guard": guard.code(),
                        "condition": guard.to_string(),
                        "codeWhenUnmet": unmet,
                    })
                }
                Err(e) => json!({
                    "kind": kind.as_str(),
                    "before": before.as_str(),
                    "after": after.as_str(),
                    "allowed": false,
                    "code": e.code,
                    "message": e.message,
                }),
            };
            crate::output::json(out, &value)?;
        }
    }
    Ok(if verdict.is_ok() {
        Exit::Ok
    } else {
        Exit::Findings
    })
}
