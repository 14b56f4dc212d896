//! `mp contract new|activate|approve|reject|run|phase|log`: the orchestrator over a filesystem
//! store, one step per invocation. Every step is safe to replay: a replay finds what the
//! first run stored and creates nothing.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use mp_contracts::evidence::hash_json;
use mp_contracts::orchestrator::{
    AcceptancePlan, BACKOFF, Generated, IdempotencyKey, Phase, TaskSeedPlan,
};
use mp_contracts::{
    AcceptanceStatus, Approval, ApprovalRole, Body, Capability, Contract, ContractError,
    ContractId, Decision, FinalDecision, Kind, OwnerRole, RiskLevel, State,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::session::{Session, StoreArgs, done, invalid, refusal, refused};
use crate::Exit;
use crate::cli::Format;

/// Arguments of `mp contract new`.
#[derive(Debug, Args)]
pub struct NewArgs {
    /// IntentContract, TaskSeed or Acceptance.
    pub kind: String,
    /// The document (JSON); missing common fields are filled in. `-` reads standard input.
    #[arg(long, value_name = "FILE", default_value = "-")]
    pub from: PathBuf,
    /// Store, clock and output.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Arguments of `mp contract activate`.
#[derive(Debug, Args)]
pub struct ActivateArgs {
    /// The contract id.
    pub id: String,
    /// Store, clock and output.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Arguments of `mp contract approve` and `mp contract reject`.
#[derive(Debug, Args)]
pub struct DecideArgs {
    /// The contract id: a Draft contract (activation) or a pending PublishGate.
    pub id: String,
    /// Who decides.
    #[arg(long, value_name = "LOGIN", default_value = "cli")]
    pub actor: String,
    /// The role decided in: project_lead, security_reviewer, release_manager or admin.
    #[arg(long, value_name = "ROLE", default_value = "project_lead")]
    pub role: String,
    /// Why (required to reject anything but a gate).
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Store, clock and output.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Arguments of `mp contract run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// An Active IntentContract (makes its TaskSeed), TaskSeed (its Acceptance) or
    /// Acceptance (its PublishGate).
    pub id: String,
    /// The TaskSeed plan (`description`, `ownerRole`, `executionPlan`) or the Acceptance
    /// result (`status`, `details`, `criteria`) as JSON; the options below override it.
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,
    /// Acceptance: pending, passed, failed or blocked.
    #[arg(long, value_name = "STATUS")]
    pub status: Option<String>,
    /// Acceptance: the details text.
    #[arg(long, value_name = "TEXT")]
    pub details: Option<String>,
    /// Acceptance: one criterion (repeatable).
    #[arg(long = "criterion", value_name = "TEXT")]
    pub criteria: Vec<String>,
    /// PublishGate: the assessed risk (low, medium, high, critical); raised to the
    /// TaskSeed's capability floor.
    #[arg(long, value_name = "LEVEL", default_value = "low")]
    pub risk: String,
    /// Store, clock and output.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Arguments of `mp contract log`.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// Only the events about this contract.
    pub id: Option<String>,
    /// Store, clock and output.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Parses a contract id argument (exit 2 when malformed).
fn parse_id(text: &str) -> anyhow::Result<ContractId> {
    ContractId::parse(text).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Parses a protocol enum value by its JSON name (exit 2 when unknown).
fn parse_name<T: DeserializeOwned>(text: &str, what: &str) -> anyhow::Result<T> {
    serde_json::from_value(Value::String(text.to_owned()))
        .with_context(|| format!("`{text}` is not a {what}"))
}

fn summary(contract: &Contract) -> Value {
    json!({
        "id": contract.common.id.as_str(),
        "kind": contract.kind().as_str(),
        "state": contract.common.state.as_str(),
        "version": contract.common.version.get(),
    })
}

fn not_found(out: &mut dyn Write, format: Format, id: &ContractId) -> anyhow::Result<Exit> {
    refused(
        out,
        format,
        "contract_not_found",
        &format!("no contract {id} in the store"),
    )
}

/// `mp contract new`.
pub fn new(args: &NewArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let format = args.store.format;
    let Some(kind) = Kind::from_name(&args.kind) else {
        bail!(
            "unknown kind `{}` (expected IntentContract, TaskSeed or Acceptance)",
            args.kind
        );
    };
    let mut session = Session::open(&args.store)?;
    let text = super::super::read_input(&args.from)?;
    let input: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not JSON", args.from.display()))?;
    let Value::Object(mut doc) = input.clone() else {
        bail!("{} is not a JSON object", args.from.display());
    };
    match kind {
        Kind::PublishGate => {
            return refused(
                out,
                format,
                "not_drafted",
                "a PublishGate is made by the policy engine: `mp contract run` on a passed Acceptance",
            );
        }
        Kind::Evidence => {
            return refused(
                out,
                format,
                "not_drafted",
                "an Evidence is recorded with `mp evidence record`",
            );
        }
        _ => {}
    }
    let key = format!("new:{}", hash_json(&input));
    if let Some(id) = session.submissions.get(&key) {
        let existing = json!({"id": id.as_str(), "created": false});
        return done(out, format, id.as_str(), existing);
    }
    let mut problems = Vec::new();
    match doc.get("kind").and_then(Value::as_str) {
        Some(given) if given != kind.as_str() => problems.push(ContractError::new(
            0,
            "/kind",
            "const",
            format!("the document is a {given}, the command asks for a {kind}"),
        )),
        _ => {}
    }
    match doc.get("state").and_then(Value::as_str) {
        Some(given) if given != State::Draft.as_str() => problems.push(ContractError::new(
            0,
            "/state",
            "not-draft",
            format!("a new contract starts Draft, not {given}"),
        )),
        _ => {}
    }
    if !problems.is_empty() {
        return invalid(out, format, &problems);
    }
    let id = match doc.get("id").and_then(Value::as_str) {
        Some(given) => {
            let id = parse_id(given).ok();
            if let Some(id) = &id
                && session.latest(id)?.is_some()
            {
                return refused(
                    out,
                    format,
                    "contract_exists",
                    &format!("{id} is already in the store"),
                );
            }
            Value::String(given.to_owned())
        }
        None => Value::String(session.next_id(kind)?.to_string()),
    };
    let now = mp_contracts::DateTime::from_instant(session.now());
    let defaults = [
        ("schemaVersion", json!("1.0.0")),
        ("id", id),
        ("kind", json!(kind.as_str())),
        ("state", json!(State::Draft.as_str())),
        ("version", json!(1)),
        ("createdAt", json!(now.as_str())),
        ("updatedAt", json!(now.as_str())),
    ];
    for (field, value) in defaults {
        doc.entry(field).or_insert(value);
    }
    let doc = Value::Object(doc);
    let errors = mp_contracts::validate_document(&doc);
    if !errors.is_empty() {
        return invalid(out, format, &errors);
    }
    // References must resolve against what the store holds.
    let mut set: Vec<Value> = session
        .all_latest()?
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()?;
    set.push(doc.clone());
    let last = set.len() - 1;
    let errors: Vec<ContractError> = mp_contracts::validate_set(&set)
        .into_iter()
        .filter(|e| e.document == last)
        .collect();
    if !errors.is_empty() {
        return invalid(out, format, &errors);
    }
    let contract = match mp_contracts::parse_document(&doc) {
        Ok(contract) => contract,
        Err(errors) => return invalid(out, format, &errors),
    };
    if let Err(e) = session.orch.submit(&contract) {
        return refusal(out, format, e);
    }
    session.submissions.insert(key, contract.common.id.clone());
    session.save()?;
    let mut fields = summary(&contract);
    fields["created"] = Value::Bool(true);
    done(out, format, contract.common.id.as_str(), fields)
}

/// `mp contract activate`.
pub fn activate(args: &ActivateArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let format = args.store.format;
    let id = parse_id(&args.id)?;
    let mut session = Session::open(&args.store)?;
    let Some(current) = session.latest(&id)? else {
        return not_found(out, format, &id);
    };
    if current.common.state == State::Active {
        let mut fields = summary(&current);
        fields["changed"] = Value::Bool(false);
        return done(out, format, &format!("{id} is already Active"), fields);
    }
    match session.orch.activate(&id) {
        Ok(next) => {
            session.save()?;
            let mut fields = summary(&next);
            fields["changed"] = Value::Bool(true);
            done(
                out,
                format,
                &format!("{id} is Active (version {})", next.common.version),
                fields,
            )
        }
        Err(e) => refusal(out, format, e),
    }
}

/// The roles a Draft still needs for its activation.
fn missing_activation_roles(session: &Session, contract: &Contract) -> Vec<ApprovalRole> {
    let required: Vec<ApprovalRole> = match &contract.body {
        Body::TaskSeed(ts) => ts.generation_policy.required_activation_approvals.clone(),
        Body::Acceptance(ac) => ac
            .generation_policy
            .required_activation_approvals
            .iter()
            .map(|r| ApprovalRole::from(*r))
            .collect(),
        _ => Vec::new(),
    };
    let approved = session.orch.activation_approvals(&contract.common.id);
    required
        .into_iter()
        .filter(|role| !approved.iter().any(|a| a.role == *role))
        .collect()
}

fn role_list(roles: &[ApprovalRole]) -> String {
    if roles.is_empty() {
        "none".to_owned()
    } else {
        roles
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `mp contract approve` (`decision` approved) and `mp contract reject` (rejected).
pub fn decide(args: &DecideArgs, decision: Decision, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let format = args.store.format;
    let id = parse_id(&args.id)?;
    let role: ApprovalRole = parse_name(&args.role, "role")?;
    let mut session = Session::open(&args.store)?;
    let Some(current) = session.latest(&id)? else {
        return not_found(out, format, &id);
    };
    if let Some(gate) = current.as_publish_gate() {
        if current.common.state != State::Active || gate.final_decision != FinalDecision::Pending {
            return refused(
                out,
                format,
                "gate_decided",
                &format!(
                    "gate {id} is {} with finalDecision {}: nothing to decide",
                    current.common.state, gate.final_decision
                ),
            );
        }
        let replay = gate
            .approvals
            .iter()
            .any(|a| a.role == role && a.actor_id == args.actor && a.decision == decision);
        if replay {
            let mut fields = summary(&current);
            fields["changed"] = Value::Bool(false);
            return done(
                out,
                format,
                &format!("{id}: {decision} by {} already recorded", args.actor),
                fields,
            );
        }
        let approval = Approval {
            role,
            actor_id: args.actor.clone(),
            decision,
            decided_at: mp_contracts::DateTime::from_instant(session.now()),
            reason: args.reason.clone(),
        };
        return match session.orch.record_decision(&id, approval) {
            Ok(next) => {
                session.save()?;
                let final_decision = next
                    .as_publish_gate()
                    .map_or(FinalDecision::Pending, |g| g.final_decision);
                let mut fields = summary(&next);
                fields["changed"] = Value::Bool(true);
                fields["finalDecision"] = json!(final_decision.to_string());
                done(
                    out,
                    format,
                    &format!(
                        "{id}: {decision} by {} as {role}; finalDecision {final_decision}, state {}",
                        args.actor, next.common.state
                    ),
                    fields,
                )
            }
            Err(e) => refusal(out, format, e),
        };
    }
    match decision {
        Decision::Approved => approve_activation(args, role, &mut session, &current, out),
        Decision::Rejected => reject(args, &mut session, &current, out),
    }
}

fn approve_activation(
    args: &DecideArgs,
    role: ApprovalRole,
    session: &mut Session,
    current: &Contract,
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    let format = args.store.format;
    let id = &current.common.id;
    if current.common.state != State::Draft {
        return refused(
            out,
            format,
            "not_awaiting_approval",
            &format!(
                "{id} is {}: only a Draft or a pending gate is approved",
                current.common.state
            ),
        );
    }
    let replay = session
        .orch
        .activation_approvals(id)
        .iter()
        .any(|a| a.role == role && a.actor_id == args.actor);
    if !replay {
        if let Err(e) = session.orch.approve_activation(id, role, &args.actor) {
            return refusal(out, format, e);
        }
        session.save()?;
    }
    let missing = missing_activation_roles(session, current);
    let mut fields = summary(current);
    fields["changed"] = Value::Bool(!replay);
    fields["missingRoles"] = json!(missing.iter().map(|r| r.as_str()).collect::<Vec<_>>());
    let verb = if replay {
        "already recorded"
    } else {
        "recorded"
    };
    done(
        out,
        format,
        &format!(
            "{id}: activation approval by {} as {role} {verb}; roles still missing: {}",
            args.actor,
            role_list(&missing)
        ),
        fields,
    )
}

fn reject(
    args: &DecideArgs,
    session: &mut Session,
    current: &Contract,
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    let format = args.store.format;
    let id = &current.common.id;
    if current.common.state == State::Revoked {
        let mut fields = summary(current);
        fields["changed"] = Value::Bool(false);
        return done(out, format, &format!("{id} is already Revoked"), fields);
    }
    let reason = args
        .reason
        .as_ref()
        .map(|r| format!("rejected by {} as {}: {r}", args.actor, args.role));
    match session.orch.revoke(id, reason) {
        Ok(next) => {
            session.save()?;
            let mut fields = summary(&next);
            fields["changed"] = Value::Bool(true);
            done(
                out,
                format,
                &format!("{id} is Revoked (version {})", next.common.version),
                fields,
            )
        }
        Err(e) => refusal(out, format, e),
    }
}

/// A plan or result read from `--from`, as a JSON object.
fn read_from(path: Option<&PathBuf>) -> anyhow::Result<serde_json::Map<String, Value>> {
    let Some(path) = path else {
        return Ok(serde_json::Map::new());
    };
    let text = super::super::read_input(path)?;
    match serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))? {
        Value::Object(map) => Ok(map),
        _ => bail!("{} is not a JSON object", path.display()),
    }
}

fn strings(value: Option<&Value>, what: &str) -> anyhow::Result<Option<Vec<String>>> {
    value
        .map(|v| serde_json::from_value::<Vec<String>>(v.clone()))
        .transpose()
        .with_context(|| format!("`{what}` is not a list of strings"))
}

/// The TaskSeed plan: from `--from`, else from the intent (owner `ci_agent` when the
/// intent installs dependencies or uses the network, else `developer`; the five phases).
fn task_seed_plan(args: &RunArgs, intent: &Contract) -> anyhow::Result<TaskSeedPlan> {
    let from = read_from(args.from.as_ref())?;
    let ic = intent.as_intent_contract();
    let description = match from.get("description") {
        Some(v) => v
            .as_str()
            .map(str::to_owned)
            .context("`description` is not a string")?,
        None => ic.map(|i| i.intent.clone()).unwrap_or_default(),
    };
    let owner_role: OwnerRole = match from.get("ownerRole").and_then(Value::as_str) {
        Some(text) => parse_name(text, "owner role")?,
        None => {
            let automated = ic.is_some_and(|i| {
                i.requested_capabilities
                    .iter()
                    .any(|c| matches!(c, Capability::InstallDeps | Capability::NetworkAccess))
            });
            if automated {
                OwnerRole::CiAgent
            } else {
                OwnerRole::Developer
            }
        }
    };
    let execution_plan =
        strings(from.get("executionPlan"), "executionPlan")?.unwrap_or_else(|| {
            ["plan", "build", "stabilize", "refactor", "publish"]
                .map(str::to_owned)
                .to_vec()
        });
    Ok(TaskSeedPlan {
        description,
        owner_role,
        execution_plan,
    })
}

fn acceptance_plan(args: &RunArgs, ts: &ContractId) -> anyhow::Result<AcceptancePlan> {
    let from = read_from(args.from.as_ref())?;
    let status_text = match (&args.status, from.get("status").and_then(Value::as_str)) {
        (Some(given), _) => given.clone(),
        (None, Some(given)) => given.to_owned(),
        (None, None) => bail!("`mp contract run {ts}` needs --status (or `status` in --from)"),
    };
    let status: AcceptanceStatus = parse_name(&status_text, "acceptance status")?;
    let details = match (&args.details, from.get("details").and_then(Value::as_str)) {
        (Some(given), _) => given.clone(),
        (None, Some(given)) => given.to_owned(),
        (None, None) => format!("execution of {ts} verified: {status_text}"),
    };
    let criteria = if args.criteria.is_empty() {
        strings(from.get("criteria"), "criteria")?
            .unwrap_or_else(|| vec![format!("the execution plan of {ts} is carried out")])
    } else {
        args.criteria.clone()
    };
    Ok(AcceptancePlan {
        status,
        details,
        criteria,
    })
}

/// `mp contract run`.
pub fn run(args: &RunArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let format = args.store.format;
    let id = parse_id(&args.id)?;
    let risk: RiskLevel = parse_name(&args.risk, "risk level")?;
    let mut session = Session::open(&args.store)?;
    let Some(current) = session.latest(&id)? else {
        return not_found(out, format, &id);
    };
    let target = match current.kind() {
        Kind::IntentContract => Kind::TaskSeed,
        Kind::TaskSeed => Kind::Acceptance,
        _ => Kind::PublishGate,
    };
    let key = IdempotencyKey {
        source: id.clone(),
        source_version: current.common.version,
        target,
    };
    let failures_before = session.orch.attempts(&key).failures;
    let generated = match current.kind() {
        Kind::IntentContract => {
            let plan = task_seed_plan(args, &current)?;
            session
                .orch
                .generate_task_seed(&id, &mut |_| Ok(plan.clone()))
        }
        Kind::TaskSeed => {
            let executed = session.all_latest()?.iter().any(|c| {
                c.as_evidence()
                    .is_some_and(|e| e.task_seed_id.as_contract_id() == &id)
            });
            if !executed {
                return refused(
                    out,
                    format,
                    "no_execution_recorded",
                    &format!(
                        "{id} has no Evidence yet: record its execution with `mp evidence record`"
                    ),
                );
            }
            let plan = acceptance_plan(args, &id)?;
            session
                .orch
                .generate_acceptance(&id, &mut |_| Ok(plan.clone()))
        }
        Kind::Acceptance => session.orch.create_gate(&id, risk),
        other => {
            return refused(
                out,
                format,
                "nothing_to_run",
                &format!("{id} is a {other}: run an IntentContract, TaskSeed or Acceptance"),
            );
        }
    };
    let generated = match generated {
        Ok(generated) => generated,
        Err(e) => return refusal(out, format, e),
    };
    session.save()?;
    let created = matches!(generated, Generated::Created(_));
    match generated {
        Generated::Created(new_id) | Generated::Existing(new_id) => {
            let Some(contract) = session.latest(&new_id)? else {
                return not_found(out, format, &new_id);
            };
            let mut fields = summary(&contract);
            fields["created"] = Value::Bool(created);
            fields["source"] = json!(id.as_str());
            let mut text = if created {
                format!(
                    "created {new_id} ({}, {})",
                    contract.kind(),
                    contract.common.state
                )
            } else {
                format!("{new_id} already made from {id}: nothing created")
            };
            if let Some(gate) = contract.as_publish_gate() {
                fields["riskLevel"] = json!(gate.risk_level.to_string());
                fields["finalDecision"] = json!(gate.final_decision.to_string());
                text.push_str(&format!(
                    "; risk {}, finalDecision {}",
                    gate.risk_level, gate.final_decision
                ));
            }
            done(out, format, &text, fields)
        }
        Generated::RetryAt(at) => {
            let failures = session.orch.attempts(&key).failures;
            let message = if failures > failures_before {
                format!(
                    "{target} generation from {id} failed (attempt {failures} of {}); retry at {at}",
                    BACKOFF.len() + 1
                )
            } else {
                format!("the next {target} generation from {id} is not due before {at}")
            };
            refused(out, format, "retry_scheduled", &message)
        }
        Generated::Frozen(frozen) => refused(
            out,
            format,
            "frozen",
            &format!("generation failed after every retry; {frozen} is Frozen"),
        ),
        Generated::NotPassed(status) => refused(
            out,
            format,
            "gate-for-unpassed-acceptance",
            &format!("{id} has status {status}: a PublishGate exists only for a passed Acceptance"),
        ),
    }
}

/// `mp contract log`.
pub fn log(args: &LogArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let id = args.id.as_deref().map(parse_id).transpose()?;
    let session = Session::open_read(&args.store)?;
    let events: Vec<_> = session
        .events()
        .iter()
        .filter(|e| id.as_ref().is_none_or(|id| e.subject == id.as_str()))
        .collect();
    match args.store.format {
        Format::Text => {
            writeln!(
                out,
                "{:<10} {:<24} {:<34} {:<8} {:<3} KEY",
                "ID", "TIME", "TYPE", "SUBJECT", "V"
            )?;
            for e in &events {
                writeln!(
                    out,
                    "{:<10} {:<24} {:<34} {:<8} {:<3} {}",
                    e.id,
                    e.time.as_str(),
                    e.event_type.as_str(),
                    e.subject,
                    e.contractversion,
                    e.idempotencykey.as_deref().unwrap_or("-")
                )?;
            }
            writeln!(out, "{} events", events.len())?;
        }
        Format::Json => {
            crate::output::json(out, &serde_json::to_value(&events)?)?;
        }
    }
    Ok(Exit::Ok)
}

/// Arguments of `mp contract phase`.
#[derive(Debug, Args)]
pub struct PhaseArgs {
    /// The TaskSeed id.
    pub id: String,
    /// Move to this phase (Plan, Build, Stabilize, Refactor, Publish, Done); without it,
    /// print the current phase.
    pub phase: Option<String>,
    /// Store, clock and output.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `mp contract phase`.
pub fn phase(args: &PhaseArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let format = args.store.format;
    let id = parse_id(&args.id)?;
    let target = args
        .phase
        .as_deref()
        .map(|text| {
            Phase::ALL
                .into_iter()
                .find(|p| p.as_str() == text)
                .with_context(|| {
                    format!("unknown phase `{text}` (expected Plan, Build, Stabilize, Refactor, Publish or Done)")
                })
        })
        .transpose()?;
    let mut session = Session::open(&args.store)?;
    let Some(current) = session.latest(&id)? else {
        return not_found(out, format, &id);
    };
    if current.kind() != Kind::TaskSeed {
        return refused(
            out,
            format,
            "wrong_kind",
            &format!("{id} is not a TaskSeed"),
        );
    }
    let now = session.orch.phase(&id).unwrap_or(Phase::Plan);
    let fields = |phase: Phase, changed: bool| json!({"id": id.as_str(), "phase": phase.as_str(), "changed": changed});
    match target {
        None => done(
            out,
            format,
            &format!("{id} is in phase {now}"),
            fields(now, false),
        ),
        Some(to) if to == now => done(
            out,
            format,
            &format!("{id} is already in phase {now}"),
            fields(now, false),
        ),
        Some(to) => match session.orch.advance_phase(&id, to) {
            Ok(phase) => {
                session.save()?;
                done(
                    out,
                    format,
                    &format!("{id}: phase {now} -> {phase}"),
                    fields(phase, true),
                )
            }
            Err(e) => refusal(out, format, e),
        },
    }
}
