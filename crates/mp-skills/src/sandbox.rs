//! The WebAssembly sandbox that runs user skills (see `docs/skills-abi.md`).
//!
//! A module is checked when it is loaded: it may import nothing but the host log function
//! `mp.log(ptr, len)` (anything that looks like sockets or HTTP is refused as
//! `skill_imports_network`, anything else as `skill_imports_forbidden`), and it must export
//! `memory`, `alloc(len) -> ptr` and `call(ptr, len) -> u64`. Every call gets a fresh
//! store, so no state survives from one call to the next, with four caps: a fuel budget
//! (the deterministic measure of the time budget), a wall-clock backstop that stops the
//! call at its time budget whatever the fuel says (the call runs in slices of fuel, the
//! clock checked between them), a memory cap and an output-size cap. A host call costs fuel
//! for its work, as instructions do. Every way a call can go wrong comes back as a
//! [`SkillFailure`] with its cause; nothing here panics on
//! guest behaviour.

use std::time::{Duration, Instant};

use mp_core::skill::{FailureCause, FailureStage, SkillFailure};
use wasmi::errors::{ErrorKind, InstantiationError, MemoryError};
use wasmi::{
    Caller, Config, Engine, ExternType, Linker, Memory, Module, Store, StoreLimits,
    StoreLimitsBuilder, TrapCode, TypedFunc, TypedResumableCall, ValType,
};

mod input;
mod verdict;
mod wasm_skill;

#[cfg(test)]
mod tests;

pub use input::{commit_json, pr_json};
pub use verdict::{parse_classifier_vote, parse_hook_result, parse_validation_result};
pub use wasm_skill::{WasmBranchHook, WasmClassifierRule, WasmValidator};

/// The host module name of the only import a skill may have.
pub const HOST_MODULE: &str = "mp";
/// The field name of the host log function, `mp.log(ptr: i32, len: i32)`.
pub const HOST_LOG: &str = "log";

/// Fuel per call standing for the one-second budget: the same answer on every machine.
/// About 0.55 G fuel/s in a release build on the 2-core build machine, so the wall-clock
/// backstop ([`Limits::clock`]) is what stops an endless loop at one second there (see
/// `docs/skills-abi.md`, "Fuel and time").
pub const DEFAULT_FUEL: u64 = 1_000_000_000;
/// Linear-memory cap per call: 16 MiB.
pub const DEFAULT_MEMORY_BYTES: usize = 16 * 1024 * 1024;
/// Largest verdict a skill may return: 64 KiB.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// Log bytes kept per call (longer logs are cut).
pub const DEFAULT_MAX_LOG_BYTES: usize = 8 * 1024;
/// Most fuel a call runs on between two looks at the clock: about 10 ms of plain
/// instructions. A call gets a fiftieth of its budget per slice within
/// [`MIN_FUEL_SLICE`]..=[`FUEL_SLICE`], so instructions that take more time per fuel
/// overrun a short budget by little.
pub const FUEL_SLICE: u64 = 10 * FUEL_PER_MS;
/// Least fuel of a slice: the clock is not looked at more than about once a millisecond.
pub const MIN_FUEL_SLICE: u64 = FUEL_PER_MS;
/// Fuel a call costs (entering the callee's body costs one more): a call and its return
/// take about three times a plain instruction in wasmi. Measured with `cargo run
/// --release -p mp-skills --example budget`, as the two below.
pub const CALL_FUEL: u8 = 2;
/// Fuel a tail call (`return_call`) costs: replacing the caller's frame takes wasmi longer
/// than pushing a new one.
pub const TAIL_CALL_FUEL: u8 = 3;
/// Fuel an indirect call costs: a call that also checks the table entry's type. An
/// indirect tail call costs one more.
pub const CALL_INDIRECT_FUEL: u8 = 3;
/// Fuel a `memory.grow` costs before the bytes it adds (charged by wasmi per byte): a
/// refused grow still asks the memory's limiter, about five plain instructions.
pub const MEMORY_GROW_FUEL: u8 = 5;

/// wasmi's fuel per operator (one per simple instruction, nothing for blocks and `end`),
/// with calls, returns and `memory.grow` priced by their time ([`CALL_FUEL`],
/// [`TAIL_CALL_FUEL`], [`CALL_INDIRECT_FUEL`], [`MEMORY_GROW_FUEL`]), so a loop of them
/// runs no longer per fuel than a plain loop.
fn operator_costs() -> wasmi::OperatorCost {
    wasmi::OperatorCost {
        call: CALL_FUEL,
        return_call: TAIL_CALL_FUEL,
        call_indirect: CALL_INDIRECT_FUEL,
        return_call_indirect: CALL_INDIRECT_FUEL + 1,
        return_: 1,
        memory_grow: MEMORY_GROW_FUEL,
        ..wasmi::OperatorCost::default()
    }
}

/// Fuel a host call costs before its work: the guest leaves the interpreter and comes back
/// (about 40 ns a call, measured with `cargo run --release -p mp-skills --example budget`).
pub const HOST_CALL_FUEL: u64 = 50;

/// The caps of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Fuel budget; running out is `skill_timeout`.
    pub fuel: u64,
    /// Time budget of the call's run; past it the call stops as `skill_timeout` whatever
    /// fuel is left (looked at least every [`FUEL_SLICE`] fuel). `None`: fuel alone.
    pub clock: Option<Duration>,
    /// Linear-memory cap in bytes; growing past it is `skill_memory_exceeded`.
    pub memory_bytes: usize,
    /// Largest verdict in bytes; a longer one is `skill_output_too_large`.
    pub max_output_bytes: usize,
    /// Log bytes kept per call.
    pub max_log_bytes: usize,
}

/// Fuel standing for one millisecond of the time budget ([`DEFAULT_FUEL`] / 1000).
pub const FUEL_PER_MS: u64 = DEFAULT_FUEL / 1000;

impl Limits {
    /// The caps `skills.yml` asks for: `call_budget_ms` as fuel ([`FUEL_PER_MS`] per
    /// millisecond), `memory_mib` and `output_kib` as bytes.
    pub fn from_policy(limits: &mp_core::config::skills::SkillLimits) -> Self {
        Self {
            fuel: u64::from(limits.call_budget_ms) * FUEL_PER_MS,
            clock: Some(Duration::from_millis(u64::from(limits.call_budget_ms))),
            memory_bytes: usize::try_from(limits.memory_mib)
                .unwrap_or(usize::MAX / (1024 * 1024))
                .saturating_mul(1024 * 1024),
            max_output_bytes: usize::try_from(limits.output_kib)
                .unwrap_or(usize::MAX / 1024)
                .saturating_mul(1024),
            max_log_bytes: DEFAULT_MAX_LOG_BYTES,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            fuel: DEFAULT_FUEL,
            clock: Some(Duration::from_secs(1)),
            memory_bytes: DEFAULT_MEMORY_BYTES,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            max_log_bytes: DEFAULT_MAX_LOG_BYTES,
        }
    }
}

/// What one successful call produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOutput {
    /// The verdict bytes (JSON by the ABI; decoded by the caller).
    pub verdict: Vec<u8>,
    /// Fuel the call used (instantiation included).
    pub fuel_used: u64,
    /// What the skill wrote through `mp.log`, cut at [`Limits::max_log_bytes`].
    pub log: String,
}

/// A loaded, checked skill module, ready to be called any number of times.
#[derive(Debug)]
pub struct SkillModule {
    name: String,
    engine: Engine,
    module: Module,
}

impl SkillModule {
    /// Loads a module from WebAssembly text (`.wat`).
    ///
    /// # Errors
    /// `skill_load_failed` when the text does not parse, plus every error of
    /// [`SkillModule::from_wasm`].
    pub fn from_wat(name: &str, text: &str) -> Result<Self, SkillFailure> {
        let bytes = wat::parse_str(text).map_err(|e| load_failed(name, e.to_string()))?;
        Self::from_wasm(name, &bytes)
    }

    /// Loads a module from WebAssembly binary (`.wasm`), refusing forbidden imports and
    /// missing exports.
    ///
    /// # Errors
    /// `skill_imports_network`, `skill_imports_forbidden`, or `skill_load_failed` (not
    /// valid WebAssembly, missing or mistyped exports).
    pub fn from_wasm(name: &str, bytes: &[u8]) -> Result<Self, SkillFailure> {
        let mut config = Config::default();
        config.consume_fuel(true).operator_cost(operator_costs());
        let engine = Engine::new(&config);
        let module = Module::new(&engine, bytes).map_err(|e| load_failed(name, e.to_string()))?;
        for import in module.imports() {
            check_import(name, import.module(), import.name(), import.ty())?;
        }
        check_exports(name, &module)?;
        Ok(Self {
            name: name.to_owned(),
            engine,
            module,
        })
    }

    /// The skill's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs one call: writes `input` into a fresh instance, calls `call` and reads back the
    /// verdict bytes.
    ///
    /// # Errors
    /// `skill_timeout` (fuel ran out), `skill_memory_exceeded`, `skill_trap`,
    /// `skill_output_too_large`, or `skill_load_failed` when the exports do not have the
    /// ABI's types.
    pub fn call(&self, input: &[u8], limits: &Limits) -> Result<CallOutput, SkillFailure> {
        let started = Instant::now();
        let mut store = Store::new(
            &self.engine,
            HostState {
                limiter: StoreLimitsBuilder::new()
                    .memory_size(limits.memory_bytes)
                    .memories(1)
                    .tables(1)
                    .instances(1)
                    .table_elements(10_000)
                    .trap_on_grow_failure(true)
                    .build(),
                log: Vec::new(),
                max_log_bytes: limits.max_log_bytes,
                fuel_debt: 0,
            },
        );
        store.limiter(|state| &mut state.limiter);
        store
            .set_fuel(limits.fuel)
            .map_err(|e| self.fail(FailureStage::Instantiate, trap(e.to_string())))?;

        let mut linker = Linker::<HostState>::new(&self.engine);
        linker
            .func_wrap(HOST_MODULE, HOST_LOG, host_log)
            .map_err(|e| self.fail(FailureStage::Instantiate, trap(e.to_string())))?;
        let instance = linker
            .instantiate_and_start(&mut store, &self.module)
            .map_err(|e| self.runtime(FailureStage::Instantiate, &store, limits, &e))?;

        let memory = instance
            .get_memory(&store, "memory")
            .ok_or_else(|| self.fail(FailureStage::Instantiate, missing("memory")))?;
        let alloc: TypedFunc<i32, i32> = instance
            .get_typed_func(&store, "alloc")
            .map_err(|e| self.fail(FailureStage::Instantiate, mistyped("alloc", &e)))?;
        let call: TypedFunc<(i32, i32), i64> = instance
            .get_typed_func(&store, "call")
            .map_err(|e| self.fail(FailureStage::Instantiate, mistyped("call", &e)))?;

        let len = i32::try_from(input.len()).map_err(|_| {
            self.fail(
                FailureStage::Input,
                trap(format!("input of {} bytes is too large", input.len())),
            )
        })?;
        let ptr = alloc
            .call(&mut store, len)
            .map_err(|e| self.runtime(FailureStage::Input, &store, limits, &e))?;
        write(&memory, &mut store, ptr, input).map_err(|detail| {
            self.fail(
                FailureStage::Input,
                trap(format!("alloc({len}) returned {ptr}, {detail}")),
            )
        })?;

        let (packed, fuel_left) =
            self.run_sliced(&call, &mut store, (ptr, len), limits, started)?;
        // The ABI packs the answer as (ptr << 32) | len; reinterpret the i64 bits.
        let packed = u64::from_ne_bytes(packed.to_ne_bytes());
        let out_ptr = packed >> 32;
        let out_len = packed & 0xFFFF_FFFF;
        if out_len > limits.max_output_bytes as u64 {
            return Err(self.fail(
                FailureStage::Output,
                FailureCause::OutputTooLarge {
                    len: out_len,
                    max: limits.max_output_bytes as u64,
                },
            ));
        }
        let verdict = read(&memory, &store, out_ptr, out_len).map_err(|detail| {
            self.fail(
                FailureStage::Output,
                FailureCause::MalformedVerdict {
                    detail: format!("answer at {out_ptr} of {out_len} bytes {detail}"),
                },
            )
        })?;
        let fuel_used = limits.fuel.saturating_sub(fuel_left);
        let log = String::from_utf8_lossy(&store.data().log).into_owned();
        Ok(CallOutput {
            verdict,
            fuel_used,
            log,
        })
    }

    /// Runs `call` in slices of at most [`FUEL_SLICE`] fuel, looking at the clock between
    /// them: the fuel budget and the time budget both hold. Returns the answer and the fuel
    /// left.
    fn run_sliced(
        &self,
        call: &TypedFunc<(i32, i32), i64>,
        store: &mut Store<HostState>,
        params: (i32, i32),
        limits: &Limits,
        started: Instant,
    ) -> Result<(i64, u64), SkillFailure> {
        let timeout = || self.fail(FailureStage::Run, timeout(limits));
        let slice = (limits.fuel / 50).clamp(MIN_FUEL_SLICE, FUEL_SLICE);
        let left = store.get_fuel().unwrap_or(0);
        let first = left.min(slice);
        // Fuel not yet handed to the store.
        let mut reserve = left - first;
        store
            .set_fuel(first)
            .map_err(|e| self.fail(FailureStage::Run, trap(e.to_string())))?;
        let mut state = call.call_resumable(&mut *store, params);
        loop {
            let debt = std::mem::take(&mut store.data_mut().fuel_debt);
            reserve = reserve.saturating_sub(debt);
            match state {
                Ok(TypedResumableCall::Finished(packed)) => {
                    let left = reserve.saturating_add(store.get_fuel().unwrap_or(0));
                    return Ok((packed, left));
                }
                Ok(TypedResumableCall::OutOfFuel(paused)) => {
                    if limits.clock.is_some_and(|clock| started.elapsed() >= clock) {
                        return Err(timeout());
                    }
                    let held = store.get_fuel().unwrap_or(0);
                    let needed = paused.required_fuel().saturating_sub(held);
                    let next = reserve.min(slice.max(needed));
                    if reserve == 0 || next < needed {
                        return Err(timeout());
                    }
                    reserve -= next;
                    store
                        .set_fuel(held + next)
                        .map_err(|e| self.fail(FailureStage::Run, trap(e.to_string())))?;
                    state = paused.resume(&mut *store);
                }
                Ok(TypedResumableCall::HostTrap(paused)) => {
                    // The only host function never fails; a host trap is a bug, not a verdict.
                    return Err(self.fail(
                        FailureStage::Run,
                        trap(format!("host error: {}", paused.host_error())),
                    ));
                }
                Err(error) => {
                    // The store's fuel reads 0 at the end of every slice: with fuel left in
                    // reserve, only wasmi's own out-of-fuel trap is a timeout.
                    let out_of_fuel = error.as_trap_code() == Some(TrapCode::OutOfFuel);
                    let failure = self.runtime(FailureStage::Run, store, limits, &error);
                    return Err(
                        if reserve > 0
                            && !out_of_fuel
                            && matches!(failure.cause, FailureCause::Timeout { .. })
                        {
                            self.fail(FailureStage::Run, trap(error.to_string()))
                        } else {
                            failure
                        },
                    );
                }
            }
        }
    }

    fn fail(&self, stage: FailureStage, cause: FailureCause) -> SkillFailure {
        SkillFailure::new(self.name.clone(), stage, cause)
    }

    /// Classifies an error raised while guest code ran.
    fn runtime(
        &self,
        stage: FailureStage,
        store: &Store<HostState>,
        limits: &Limits,
        error: &wasmi::Error,
    ) -> SkillFailure {
        let cause = if error.as_trap_code() == Some(TrapCode::OutOfFuel)
            || store.get_fuel().is_ok_and(|left| left == 0)
        {
            timeout(limits)
        } else if error.as_trap_code() == Some(TrapCode::GrowthOperationLimited)
            || matches!(
                error.kind(),
                ErrorKind::Memory(
                    MemoryError::ResourceLimiterDeniedAllocation | MemoryError::OutOfBoundsGrowth
                ) | ErrorKind::Instantiation(InstantiationError::FailedToInstantiateMemory(
                    MemoryError::ResourceLimiterDeniedAllocation
                ))
            )
        {
            FailureCause::MemoryExceeded {
                limit_bytes: limits.memory_bytes as u64,
            }
        } else {
            trap(error.to_string())
        };
        self.fail(stage, cause)
    }
}

/// `skill_timeout` under `limits`: the same cause whichever budget ran out first.
fn timeout(limits: &Limits) -> FailureCause {
    FailureCause::Timeout {
        fuel: limits.fuel,
        budget_ms: limits
            .clock
            .map(|clock| u64::try_from(clock.as_millis()).unwrap_or(u64::MAX)),
    }
}

/// Per-call host state.
struct HostState {
    limiter: StoreLimits,
    log: Vec<u8>,
    max_log_bytes: usize,
    /// Fuel host calls cost beyond what the store held, owed by the fuel in reserve.
    fuel_debt: u64,
}

/// `mp.log(ptr, len)`: appends guest bytes to the call's log, up to the cap. Out-of-bounds
/// arguments are ignored rather than trapping: logging must never change a verdict.
///
/// The call costs [`HOST_CALL_FUEL`] plus one fuel per byte it copied, taken from the fuel
/// the store holds (what is missing is owed by the call's reserve, and an empty store
/// stops the guest at its next instruction).
fn host_log(mut caller: Caller<'_, HostState>, ptr: i32, len: i32) {
    let copied = append_log(&mut caller, ptr, len);
    let cost = HOST_CALL_FUEL.saturating_add(copied as u64);
    if let Ok(held) = caller.get_fuel() {
        let _ = caller.set_fuel(held.saturating_sub(cost));
        let debt = cost.saturating_sub(held);
        let state = caller.data_mut();
        state.fuel_debt = state.fuel_debt.saturating_add(debt);
    }
}

/// Appends the guest's bytes at `ptr..ptr + len` to the log, up to its cap; the bytes
/// copied.
fn append_log(caller: &mut Caller<'_, HostState>, ptr: i32, len: i32) -> usize {
    let Some(memory) = caller.get_export("memory").and_then(|e| e.into_memory()) else {
        return 0;
    };
    let (Ok(start), Ok(len)) = (usize::try_from(ptr), usize::try_from(len)) else {
        return 0;
    };
    let (data, state) = memory.data_and_store_mut(caller);
    let room = state.max_log_bytes.saturating_sub(state.log.len());
    let take = len.min(room);
    match start.checked_add(take).and_then(|end| data.get(start..end)) {
        Some(bytes) => {
            state.log.extend_from_slice(bytes);
            take
        }
        None => 0,
    }
}

fn write(
    memory: &Memory,
    store: &mut Store<HostState>,
    ptr: i32,
    bytes: &[u8],
) -> Result<(), String> {
    let start = usize::try_from(ptr).map_err(|_| "a negative pointer".to_owned())?;
    memory
        .write(store, start, bytes)
        .map_err(|_| "outside linear memory".to_owned())
}

fn read(memory: &Memory, store: &Store<HostState>, ptr: u64, len: u64) -> Result<Vec<u8>, String> {
    let data = memory.data(store);
    let start = usize::try_from(ptr).map_err(|_| "is outside linear memory".to_owned())?;
    let len = usize::try_from(len).map_err(|_| "is outside linear memory".to_owned())?;
    start
        .checked_add(len)
        .and_then(|end| data.get(start..end))
        .map(<[u8]>::to_vec)
        .ok_or_else(|| format!("is outside linear memory of {} bytes", data.len()))
}

/// Import names that look like network access (sockets, HTTP, fetch, DNS).
const NETWORK_WORDS: [&str; 9] = [
    "sock", "http", "fetch", "net", "tcp", "udp", "dns", "connect", "url",
];

fn check_import(
    skill: &str,
    module: &str,
    field: &str,
    ty: &ExternType,
) -> Result<(), SkillFailure> {
    let is_log = module == HOST_MODULE
        && field == HOST_LOG
        && matches!(ty, ExternType::Func(f) if f.params() == [ValType::I32, ValType::I32] && f.results().is_empty());
    if is_log {
        return Ok(());
    }
    let both = format!("{module}.{field}").to_ascii_lowercase();
    let (module, field) = (module.to_owned(), field.to_owned());
    let cause = if NETWORK_WORDS.iter().any(|w| both.contains(w)) {
        FailureCause::ImportsNetwork { module, field }
    } else {
        FailureCause::ImportsForbidden { module, field }
    };
    Err(SkillFailure::new(skill, FailureStage::Load, cause))
}

fn check_exports(skill: &str, module: &Module) -> Result<(), SkillFailure> {
    let mut missing_names = Vec::new();
    for (wanted, is_func) in [("memory", false), ("alloc", true), ("call", true)] {
        let found = module.exports().any(|e| {
            e.name() == wanted
                && match e.ty() {
                    ExternType::Func(_) => is_func,
                    ExternType::Memory(_) => !is_func,
                    _ => false,
                }
        });
        if !found {
            missing_names.push(wanted);
        }
    }
    if missing_names.is_empty() {
        Ok(())
    } else {
        Err(load_failed(
            skill,
            format!("missing export {}", missing_names.join(", ")),
        ))
    }
}

fn load_failed(skill: &str, detail: String) -> SkillFailure {
    SkillFailure::new(
        skill,
        FailureStage::Load,
        FailureCause::LoadFailed { detail },
    )
}

fn trap(message: String) -> FailureCause {
    FailureCause::Trap { message }
}

fn missing(export: &str) -> FailureCause {
    FailureCause::LoadFailed {
        detail: format!("missing export {export}"),
    }
}

fn mistyped(export: &str, error: &wasmi::Error) -> FailureCause {
    FailureCause::LoadFailed {
        detail: format!("export {export} does not have the ABI's type: {error}"),
    }
}
