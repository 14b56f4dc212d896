//! Tests of the sandbox: load-time import checks, caps, and verdict decoding, each over a
//! WAT module from `testdata/`.

use mp_core::classifier::{RuleId, Vote, max_vote};
use mp_core::quadrant::Quadrant;
use mp_core::severity::Severity;
use mp_core::skill::{BranchHook, ClassifierRule, Validator};

use super::*;
use crate::test_support::{commit, pr};

/// Which interface a fixture is run through.
#[derive(Clone, Copy)]
enum As {
    Validator,
    Rule,
    Hook,
}

/// Loads `wat` as skill `s`, runs it once through `kind` with a small fuel budget, and
/// compares the one-line outcome (the verdict's or the failure's `Display`).
#[track_caller]
fn check(wat: &str, kind: As, expected: &str) {
    let limits = Limits {
        fuel: 2_000_000,
        ..Limits::default()
    };
    let pr = pr(vec![commit(0x11, "feat: add a thing")]);
    let outcome = SkillModule::from_wat("s", wat).and_then(|module| match kind {
        As::Validator => WasmValidator::new(module, Severity::P1, limits)
            .check(&pr)
            .map(|v| v.to_string()),
        As::Rule => WasmClassifierRule::new(module, limits)
            .evaluate(&pr)
            .map(|v| v.to_string()),
        As::Hook => WasmBranchHook::new(module, limits)
            .on_commit(&pr.commits[0])
            .map(|v| v.to_string()),
    });
    let line = match outcome {
        Ok(line) => line,
        Err(failure) => failure.to_string(),
    };
    assert_eq!(line, expected);
}

#[test]
fn pass_validator() {
    check(
        include_str!("testdata/pass_validator.wat"),
        As::Validator,
        "pass",
    );
}

#[test]
fn fail_validator() {
    check(
        include_str!("testdata/fail_validator.wat"),
        As::Validator,
        "fail: always fails",
    );
}

#[test]
fn classifier_votes_d() {
    check(
        include_str!("testdata/vote_d.wat"),
        As::Rule,
        "voted D: touches the deploy scripts",
    );
}

#[test]
fn hook_raises_an_incident() {
    check(
        include_str!("testdata/hook_incident.wat"),
        As::Hook,
        "incident decision:changelog-missing",
    );
}

#[test]
fn user_vote_a_cannot_lower_a_built_in_b() {
    let module = SkillModule::from_wat("lenient", include_str!("testdata/vote_a.wat"))
        .expect("fixture loads");
    let user = WasmClassifierRule::new(module, Limits::default())
        .evaluate(&pr(Vec::new()))
        .expect("fixture votes")
        .into_vote(RuleId::User("lenient".into()));
    let built_in = Vote::new(RuleId::PathDefault, Quadrant::B, "src/lib.rs is critical");
    let verdict = max_vote(vec![built_in, user]);
    assert_eq!(verdict.quadrant, Quadrant::B);
    assert_eq!(
        verdict.votes[1].to_string(),
        "lenient voted A: looks harmless"
    );
}

#[test]
fn network_import_is_refused_at_load() {
    check(
        include_str!("testdata/network_import.wat"),
        As::Validator,
        "skill s failed at load (skill_imports_network, fatal): imports network access `wasi_snapshot_preview1.sock_send`",
    );
}

#[test]
fn other_imports_are_refused_at_load() {
    check(
        include_str!("testdata/forbidden_import.wat"),
        As::Validator,
        "skill s failed at load (skill_imports_forbidden, fatal): imports `wasi_snapshot_preview1.fd_write`; only `mp.log` is allowed",
    );
}

#[test]
fn missing_exports_are_refused_at_load() {
    check(
        include_str!("testdata/no_exports.wat"),
        As::Validator,
        "skill s failed at load (skill_load_failed, fatal): could not be loaded: missing export memory, alloc, call",
    );
}

#[test]
fn infinite_loop_is_stopped_by_fuel() {
    check(
        include_str!("testdata/infinite_loop.wat"),
        As::Validator,
        "skill s failed at run (skill_timeout, retryable): ran out of its budget of 1000 ms (2000000 fuel)",
    );
}

#[test]
fn memory_bomb_is_stopped_by_the_cap() {
    check(
        include_str!("testdata/memory_bomb.wat"),
        As::Validator,
        "skill s failed at run (skill_memory_exceeded, needs_user_report): exceeded its memory cap of 16777216 bytes",
    );
}

#[test]
fn trap_is_reported_with_its_cause() {
    check(
        include_str!("testdata/trap.wat"),
        As::Validator,
        "skill s failed at run (skill_trap, needs_user_report): trapped: wasm `unreachable` instruction executed",
    );
}

#[test]
fn malformed_verdict_is_reported() {
    check(
        include_str!("testdata/malformed_verdict.wat"),
        As::Validator,
        "skill s failed at output (skill_malformed_verdict, needs_user_report): answered a malformed verdict: `passed` is false but `failure_reason` is missing or empty",
    );
}

#[test]
fn non_json_verdict_is_reported() {
    check(
        include_str!("testdata/not_json.wat"),
        As::Validator,
        "skill s failed at output (skill_malformed_verdict, needs_user_report): answered a malformed verdict: expected value at line 1 column 1",
    );
}

#[test]
fn validator_answer_through_a_classifier_is_malformed() {
    check(
        include_str!("testdata/pass_validator.wat"),
        As::Rule,
        "skill s failed at output (skill_malformed_verdict, needs_user_report): answered a malformed verdict: unknown field `passed`, expected `quadrant` or `reasoning` at line 1 column 9",
    );
}

#[test]
fn oversized_output_is_refused() {
    check(
        include_str!("testdata/huge_output.wat"),
        As::Validator,
        "skill s failed at output (skill_output_too_large, needs_user_report): answered 1048576 bytes, more than the cap of 65536",
    );
}

#[test]
fn log_receives_the_input_and_fuel_is_counted() {
    let module =
        SkillModule::from_wat("echo", include_str!("testdata/echo_log.wat")).expect("loads");
    let output = module
        .call(br#"{"pr":{"number":7}}"#, &Limits::default())
        .expect("call succeeds");
    assert_eq!(output.log, r#"{"pr":{"number":7}}"#);
    assert!(
        output.fuel_used > 0 && output.fuel_used < 10_000,
        "{}",
        output.fuel_used
    );
}

#[test]
fn an_endless_loop_stops_at_its_time_budget_whatever_fuel_is_left() {
    let module =
        SkillModule::from_wat("spin", include_str!("testdata/infinite_loop.wat")).expect("loads");
    let limits = Limits {
        fuel: u64::MAX / 2,
        clock: Some(std::time::Duration::from_millis(20)),
        ..Limits::default()
    };
    let failure = module.call(b"{}", &limits).expect_err("never answers");
    assert_eq!(
        failure.to_string(),
        "skill spin failed at run (skill_timeout, retryable): ran out of its budget of 20 ms (9223372036854775807 fuel)"
    );
}

#[test]
fn a_call_without_a_clock_runs_in_slices_to_the_end_of_its_fuel() {
    // Three slices and a bit: the call is resumed across them and still answers.
    let module =
        SkillModule::from_wat("count", include_str!("testdata/count_loop.wat")).expect("loads");
    let limits = Limits {
        fuel: 3 * FUEL_SLICE + 7,
        clock: None,
        ..Limits::default()
    };
    let output = module.call(b"{}", &limits).expect("answers");
    assert_eq!(output.verdict, br#"{"passed":true,"failure_reason":null}"#);
    assert!(output.fuel_used > FUEL_SLICE, "{}", output.fuel_used);
    let spin =
        SkillModule::from_wat("spin", include_str!("testdata/infinite_loop.wat")).expect("loads");
    let failure = spin.call(b"{}", &limits).expect_err("never answers");
    assert_eq!(
        failure.cause,
        FailureCause::Timeout {
            fuel: 3 * FUEL_SLICE + 7,
            budget_ms: None
        }
    );
}

#[test]
fn host_calls_cost_fuel_for_their_work() {
    let module =
        SkillModule::from_wat("logger", include_str!("testdata/log_loop.wat")).expect("loads");
    let input = br#"{"pr":{"number":7}}"#;
    let output = module.call(input, &Limits::default()).expect("answers");
    let per_call = HOST_CALL_FUEL + input.len() as u64;
    assert!(
        output.fuel_used >= 100 * per_call,
        "100 log calls of {per_call} fuel each, {} used",
        output.fuel_used
    );
    // A budget below what the calls cost stops the call.
    let limits = Limits {
        fuel: 50 * per_call,
        clock: None,
        ..Limits::default()
    };
    let failure = module.call(input, &limits).expect_err("out of fuel");
    assert_eq!(failure.code(), "skill_timeout");
}

/// A skill that runs `body` 1,000 times, then answers `{}`.
fn looping(fields: &str, body: &str) -> SkillModule {
    let wat = format!(
        r#"(module {fields}
  (memory (export "memory") 1 64)
  (func (export "alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "call") (param i32 i32) (result i64)
    (local $n i32)
    (local.set $n (i32.const 1000))
    (loop $l
      {body}
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $l (local.get $n)))
    (i32.store8 (i32.const 0) (i32.const 123))
    (i32.store8 (i32.const 1) (i32.const 125))
    (i64.const 2)))"#
    );
    SkillModule::from_wat("looping", &wat).expect("loads")
}

fn fuel_of(module: &SkillModule) -> u64 {
    module
        .call(b"{}", &Limits::default())
        .expect("answers")
        .fuel_used
}

#[test]
fn calls_and_memory_grow_cost_what_they_take() {
    let empty = fuel_of(&looping("", "(nop)"));
    let call = fuel_of(&looping("(func $f)", "(call $f)"));
    let indirect = fuel_of(&looping(
        "(type $t (func)) (table 1 funcref) (elem (i32.const 0) $f) (func $f)",
        "(call_indirect (type $t) (i32.const 0))",
    ));
    let grow = fuel_of(&looping("", "(drop (memory.grow (i32.const 0)))"));
    let tail = fuel_of(&looping(
        "(func $f (result i32) (return_call $g)) (func $g (result i32) (i32.const 0))",
        "(drop (call $f))",
    ));
    // 1,000 iterations, each paying the instruction's price, one fuel for its constant
    // operand or, for a call, for entering the callee's body; a few fuel of set-up differ.
    let per_iteration = |used: u64| (used.saturating_sub(empty) + 500) / 1000;
    assert_eq!(
        (
            per_iteration(call),
            per_iteration(indirect),
            per_iteration(grow),
            per_iteration(tail)
        ),
        (
            u64::from(CALL_FUEL) + 1,
            u64::from(CALL_INDIRECT_FUEL) + 2,
            u64::from(MEMORY_GROW_FUEL) + 1,
            // A call, then a tail call, each entering a body, then the callee's constant.
            u64::from(CALL_FUEL) + 1 + u64::from(TAIL_CALL_FUEL) + 1 + 1
        ),
        "empty loop {empty}, call {call}, call_indirect {indirect}, memory.grow {grow}, \
         call then tail call {tail}"
    );
}

#[test]
fn large_input_is_written_after_alloc_grows_memory() {
    let module =
        SkillModule::from_wat("big", include_str!("testdata/pass_validator.wat")).expect("loads");
    let input = vec![b' '; 300_000];
    let output = module
        .call(&input, &Limits::default())
        .expect("call succeeds");
    assert_eq!(output.verdict, br#"{"passed":true,"failure_reason":null}"#);
}

#[test]
fn example_no_todos_in_prod() {
    let wat = include_str!("../../../../examples/skills/no_todos_in_prod/no_todos_in_prod.wat");
    let module = SkillModule::from_wat("no_todos_in_prod", wat).expect("example loads");
    let skill = WasmValidator::new(module, Severity::P1, Limits::default());
    let verdict = |subject: &str| {
        skill
            .check(&pr(vec![commit(0x11, "feat: fine"), commit(0x12, subject)]))
            .map(|v| v.to_string())
    };
    assert_eq!(verdict("fix: parser"), Ok("pass".to_owned()));
    assert_eq!(
        verdict("wip: todo finish \"this\""),
        Ok("fail: a commit subject contains TODO".to_owned())
    );
    // "TODO" in a body is not a subject.
    assert_eq!(verdict("fix: x\n\nTODO later"), Ok("pass".to_owned()));
}

#[test]
fn oversized_initial_memory_is_refused() {
    check(
        include_str!("testdata/big_initial_memory.wat"),
        As::Validator,
        "skill s failed at instantiate (skill_memory_exceeded, needs_user_report): exceeded its memory cap of 16777216 bytes",
    );
}

#[test]
fn limits_from_the_policy_turn_milliseconds_into_fuel_and_sizes_into_bytes() {
    let limits = Limits::from_policy(&mp_core::config::skills::SkillLimits {
        call_budget_ms: 20,
        memory_mib: 4,
        output_kib: 8,
    });
    assert_eq!(limits.fuel, 20_000_000);
    assert_eq!(limits.clock, Some(std::time::Duration::from_millis(20)));
    assert_eq!(limits.memory_bytes, 4 * 1024 * 1024);
    assert_eq!(limits.max_output_bytes, 8 * 1024);
    let defaults = Limits::from_policy(&mp_core::config::skills::SkillLimits::default());
    assert_eq!(defaults, Limits::default());
}
