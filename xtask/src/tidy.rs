//! Architecture checks: the allowed dependency edges between crates (read from
//! `cargo metadata`), the `//!` header every source file opens with, and mp-core driving
//! no port (no `async` outside its port trait declarations).
//!
//! They run as plain `#[test]`s, so `cargo test --workspace` fails when an invariant breaks.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::Value;

/// Our crates and the ones among them each may depend on (DESIGN.md §2).
const ALLOWED_INTERNAL: &[(&str, &[&str])] = &[
    ("mp-core", &[]),
    ("mp-contracts", &[]),
    ("mp-skills", &["mp-core"]),
    ("mp-github", &["mp-core"]),
    ("mp-github-fake", &["mp-core", "mp-github"]),
    // The tick's drivers: over mp-core's ports, never the binary or the service.
    ("mp-tick", &["mp-core"]),
    ("mp-serve", &["mp-core", "mp-tick"]),
    (
        "mp-cli",
        &[
            "mp-core",
            "mp-contracts",
            "mp-skills",
            "mp-github",
            "mp-github-fake",
            "mp-serve",
            "mp-tick",
        ],
    ),
    (
        "xtask",
        &[
            "mp-core",
            "mp-contracts",
            "mp-skills",
            "mp-github",
            "mp-github-fake",
            "mp-serve",
            "mp-tick",
        ],
    ),
];

/// Edges between our crates that must not exist in any kind, dev-dependencies included: the
/// domain never reaches its drivers, and the drivers never reach the binary or the service.
const NEVER_ANY_KIND: &[(&str, &str)] = &[
    ("mp-core", "mp-tick"),
    ("mp-tick", "mp-cli"),
    ("mp-tick", "mp-serve"),
];

/// External crates that must never be in a crate's normal dependency closure.
const FORBIDDEN_EXTERNAL: &[(&str, &[&str])] = &[
    (
        "mp-core",
        &[
            "reqwest",
            "hyper",
            "ureq",
            "tokio",
            "async-std",
            "smol",
            "wasmtime",
            "wasmi",
            "clap",
            "git2",
            "gix",
            "octocrab",
        ],
    ),
    (
        "mp-contracts",
        &[
            "reqwest", "hyper", "ureq", "wasmtime", "wasmi", "clap", "octocrab",
        ],
    ),
    (
        "mp-skills",
        &["reqwest", "hyper", "ureq", "clap", "octocrab"],
    ),
    // The service takes its GitHub adapter from the embedder: no HTTP client of its own.
    (
        "mp-serve",
        &["reqwest", "ureq", "clap", "octocrab", "wasmi", "wasmtime"],
    ),
];

/// The fake GitHub (world format, in-memory GitHub, loopback server): test code, the `mp`
/// binary's world commands and xtask may use it; production libraries never, not even
/// through another crate (decisions/0050). A dev-dependency is fine: it builds only the
/// crate's tests.
const FAKE: &str = "mp-github-fake";

/// The library crates that must not have [`FAKE`] in their normal dependency closure.
const NEVER_LINK_THE_FAKE: &[&str] = &[
    "mp-core",
    "mp-contracts",
    "mp-skills",
    "mp-github",
    "mp-tick",
    "mp-serve",
];

/// One broken dependency rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation(pub String);

struct Graph {
    /// package id -> name
    names: BTreeMap<String, String>,
    /// package id -> normal/build dependency ids
    deps: BTreeMap<String, Vec<String>>,
    /// package id -> dependency ids of every kind (dev included)
    any_kind: BTreeMap<String, Vec<String>>,
}

fn graph(metadata: &Value) -> anyhow::Result<Graph> {
    let mut names = BTreeMap::new();
    for package in metadata["packages"]
        .as_array()
        .context("metadata has no packages")?
    {
        let id = package["id"].as_str().context("package without id")?;
        let name = package["name"].as_str().context("package without name")?;
        names.insert(id.to_owned(), name.to_owned());
    }
    let mut deps = BTreeMap::new();
    let mut any_kind = BTreeMap::new();
    for node in metadata["resolve"]["nodes"]
        .as_array()
        .context("metadata has no resolve graph")?
    {
        let id = node["id"].as_str().context("node without id")?;
        let mut edges = Vec::new();
        let mut all = Vec::new();
        for dep in node["deps"].as_array().into_iter().flatten() {
            if let Some(dep_id) = dep["pkg"].as_str() {
                all.push(dep_id.to_owned());
            }
            let runtime = dep["dep_kinds"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|k| k["kind"].is_null() || k["kind"].as_str() == Some("build"));
            if runtime && let Some(dep_id) = dep["pkg"].as_str() {
                edges.push(dep_id.to_owned());
            }
        }
        deps.insert(id.to_owned(), edges);
        any_kind.insert(id.to_owned(), all);
    }
    Ok(Graph {
        names,
        deps,
        any_kind,
    })
}

/// Every crate in the normal dependency closure of the package `id` (named `name`), once
/// each, with the path that reaches it.
fn closure<'g>(graph: &'g Graph, id: &'g str, name: &'g str) -> Vec<(&'g str, Vec<&'g str>)> {
    let mut reached = Vec::new();
    let mut seen = BTreeSet::new();
    let mut stack: Vec<(&str, Vec<&str>)> = vec![(id, vec![name])];
    while let Some((current, path)) = stack.pop() {
        for dep in graph.deps.get(current).into_iter().flatten() {
            if !seen.insert(dep.as_str()) {
                continue;
            }
            let dep_name = graph.names.get(dep).map_or("?", String::as_str);
            let mut next = path.clone();
            next.push(dep_name);
            reached.push((dep_name, next.clone()));
            stack.push((dep.as_str(), next));
        }
    }
    reached
}

/// Checks a `cargo metadata --format-version 1` document against the dependency rules.
pub fn check_edges(metadata: &Value) -> anyhow::Result<Vec<Violation>> {
    let graph = graph(metadata)?;
    let ours: BTreeSet<&str> = ALLOWED_INTERNAL.iter().map(|(name, _)| *name).collect();
    let mut violations = Vec::new();
    for (id, name) in &graph.names {
        let Some((_, allowed)) = ALLOWED_INTERNAL.iter().find(|(n, _)| n == name) else {
            continue;
        };
        // Direct edges between our crates.
        for dep in graph.deps.get(id).into_iter().flatten() {
            let dep_name = graph.names.get(dep).map_or("?", String::as_str);
            if ours.contains(dep_name) && !allowed.contains(&dep_name) {
                violations.push(Violation(format!("{name} must not depend on {dep_name}")));
            }
        }
        // Edges that must not exist even as dev-dependencies.
        for dep in graph.any_kind.get(id).into_iter().flatten() {
            let dep_name = graph.names.get(dep).map_or("?", String::as_str);
            if NEVER_ANY_KIND.contains(&(name.as_str(), dep_name)) {
                violations.push(Violation(format!(
                    "{name} must not depend on {dep_name}, not even for its tests"
                )));
            }
        }
        // Forbidden crates anywhere in the normal dependency closure.
        if let Some((_, forbidden)) = FORBIDDEN_EXTERNAL.iter().find(|(n, _)| n == name) {
            for (dep_name, path) in closure(&graph, id, name) {
                if forbidden.contains(&dep_name) {
                    violations.push(Violation(format!(
                        "{name} must not depend on {dep_name} (via {})",
                        path.join(" -> ")
                    )));
                }
            }
        }
        // The fake GitHub nowhere in a production library's normal dependency closure.
        if NEVER_LINK_THE_FAKE.contains(&name.as_str()) {
            for (dep_name, path) in closure(&graph, id, name) {
                if dep_name == FAKE {
                    violations.push(Violation(format!(
                        "{name} must not link the fake GitHub {FAKE} (via {}); a dev-dependency is fine (decisions/0050)",
                        path.join(" -> ")
                    )));
                }
            }
        }
    }
    violations.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(violations)
}

/// wasmi must dispatch with its portable loop: its default dispatch by tail calls relies
/// on an optimisation stable Rust does not guarantee, and a skill looping on a failing
/// `memory.grow` overflows the host's stack with it in a release build (the process
/// aborts). Debug builds always use the loop, so only this rule keeps release builds safe.
pub fn check_wasmi_dispatch(metadata: &Value) -> Option<Violation> {
    let ids: BTreeSet<&str> = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["name"].as_str() == Some("wasmi"))
        .filter_map(|p| p["id"].as_str())
        .collect();
    let nodes = metadata["resolve"]["nodes"]
        .as_array()
        .into_iter()
        .flatten();
    for node in nodes.filter(|n| n["id"].as_str().is_some_and(|id| ids.contains(id))) {
        let portable = node["features"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|f| f.as_str() == Some("portable-dispatch"));
        if !portable {
            return Some(Violation(
                "wasmi must be built with its `portable-dispatch` feature (see check_wasmi_dispatch in xtask/src/tidy.rs)".to_owned(),
            ));
        }
    }
    None
}

fn cargo_metadata(root: &Path) -> anyhow::Result<Value> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(root)
        .args(["metadata", "--format-version", "1", "--locked"])
        .output()
        .context("running cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    serde_json::from_slice(&output.stdout).context("parsing cargo metadata")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// Source files whose first line is not a `//!` comment.
pub fn files_without_header(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for dir in ["crates", "xtask/src"] {
        rust_files(&root.join(dir), &mut files)?;
    }
    let mut missing = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)?;
        if !text.starts_with("//!") {
            missing.push(file.strip_prefix(root).unwrap_or(&file).to_path_buf());
        }
    }
    missing.sort();
    Ok(missing)
}

/// The places where mp-core would drive a port: an `async fn`, `.await` or async block
/// outside the declaration of a port trait (a top-level `pub trait` under
/// `#[async_trait]`, whose provided methods may call the trait's own methods). A use-case
/// that awaits a port belongs in mp-tick. `path` names the file in the messages.
fn async_outside_port_traits(path: &str, text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_port_trait = false;
    let mut under_async_trait = false;
    for (index, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        if in_port_trait {
            in_port_trait = line != "}";
            continue;
        }
        if code.starts_with("#[") {
            under_async_trait |= code.contains("async_trait");
            continue;
        }
        if line.starts_with("pub trait ") && under_async_trait {
            in_port_trait = true;
            under_async_trait = false;
            continue;
        }
        under_async_trait = false;
        let code = code.split(" //").next().unwrap_or(code);
        if ["async fn", ".await", "async move", "async {"]
            .iter()
            .any(|token| has_token(code, token))
        {
            found.push(format!(
                "{path}:{}: mp-core drives no port: `{}` is async outside a port trait declaration (the use-case belongs in mp-tick)",
                index + 1,
                code.trim_end()
            ));
        }
    }
    found
}

/// Whether `token` occurs in `code` as a whole word: no identifier character right
/// before or after it (`.await` but not `.awaits_owner_only()`).
fn has_token(code: &str, token: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    code.match_indices(token).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + token.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// Every Rust file of `krate` under the directories `dirs`, as its path from `root`
/// (forward slashes) and its text, in path order.
fn crate_sources(root: &Path, krate: &str, dirs: &[&str]) -> anyhow::Result<Vec<(String, String)>> {
    let mut files = Vec::new();
    for dir in dirs {
        let dir = root.join("crates").join(krate).join(dir);
        if dir.is_dir() {
            rust_files(&dir, &mut files)?;
        }
    }
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file)?;
            let shown = file
                .strip_prefix(root)
                .unwrap_or(&file)
                .to_string_lossy()
                .replace('\\', "/");
            Ok((shown, text))
        })
        .collect()
}

/// [`async_outside_port_traits`] over every source file of mp-core.
fn core_drives_ports(root: &Path) -> anyhow::Result<Vec<String>> {
    let sources = crate_sources(root, "mp-core", &["src", "examples", "tests", "benches"])?;
    Ok(sources
        .iter()
        .flat_map(|(shown, text)| async_outside_port_traits(shown, text))
        .collect())
}

/// The files of mp-tick that may implement a GitHub port: the three wrappers it ships
/// (dry run, recording, and the lease fence of the pull-request path) and the
/// pull-request path's test port, which forwards every call to the in-memory GitHub.
const TICK_GITHUB_IMPLS: &[&str] = &[
    "crates/mp-tick/src/dry_run.rs",
    "crates/mp-tick/src/keeper.rs",
    "crates/mp-tick/src/recording.rs",
    "crates/mp-tick/src/tests/held.rs",
];

/// The implementations of a GitHub port (`GitHub`, `GitHubHistory`) in `text`, a file of
/// mp-tick at `path`, unless [`TICK_GITHUB_IMPLS`] lists it: mp-tick keeps no GitHub of
/// its own, its tests run over mp-github-fake's `MemoryGitHub` (decisions/0055).
fn own_githubs(path: &str, text: &str) -> Vec<String> {
    if TICK_GITHUB_IMPLS.contains(&path) {
        return Vec::new();
    }
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            let code = line.trim_start();
            code.starts_with("impl")
                && (has_token(code, "GitHub for") || has_token(code, "GitHubHistory for"))
        })
        .map(|(index, line)| {
            format!(
                "{path}:{}: mp-tick keeps no GitHub of its own (`{}`): its tests run over mp-github-fake's MemoryGitHub (decisions/0055)",
                index + 1,
                line.trim()
            )
        })
        .collect()
}

/// [`own_githubs`] over every source file of mp-tick.
fn tick_githubs(root: &Path) -> anyhow::Result<Vec<String>> {
    let sources = crate_sources(root, "mp-tick", &["src", "tests", "benches"])?;
    Ok(sources
        .iter()
        .flat_map(|(shown, text)| own_githubs(shown, text))
        .collect())
}

/// The tests docs/threat-model.md names that do not exist: in the last (`test`) column of
/// its attack tables,
/// each backticked name is a scenario directory under `fixtures/scenarios/` (a trailing
/// `*` matches a prefix), a test function when it follows `unit` or has no dash, and each
/// row must name at least one.
fn missing_threat_model_tests(root: &Path) -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string(root.join("docs/threat-model.md"))?;
    let mut scenarios = Vec::new();
    for entry in std::fs::read_dir(root.join("fixtures/scenarios"))? {
        scenarios.push(entry?.file_name().to_string_lossy().into_owned());
    }
    let mut sources = Vec::new();
    rust_files(&root.join("crates"), &mut sources)?;
    let mut functions = BTreeSet::new();
    for file in &sources {
        for line in std::fs::read_to_string(file)?.lines() {
            if let Some(rest) = line.trim_start().strip_prefix("fn ") {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                functions.insert(name);
            }
        }
    }
    let mut missing = Vec::new();
    let mut in_table = false;
    for row in text.lines() {
        if row.starts_with("| capability") {
            in_table = row.trim_end().ends_with("| test |");
            continue;
        }
        if !row.starts_with("| ") || row.starts_with("|---") {
            in_table &= row.starts_with("|---");
            continue;
        }
        if !in_table {
            continue;
        }
        let Some(cell) = row.trim_end_matches('|').rsplit('|').next() else {
            continue;
        };
        let names: Vec<&str> = cell.split('`').skip(1).step_by(2).collect();
        if names.is_empty() && !cell.contains("by construction") {
            missing.push(format!("a row names no test: {}", row.trim()));
        }
        for name in names {
            let found = match name.strip_suffix('*') {
                Some(prefix) => scenarios.iter().any(|s| s.starts_with(prefix)),
                None if name.contains('-') => scenarios.iter().any(|s| s == name),
                None => functions.contains(name),
            };
            if !found {
                missing.push(format!(
                    "docs/threat-model.md names `{name}`, which does not exist"
                ));
            }
        }
    }
    Ok(missing)
}

/// Runs every tidy check and fails with a list of problems.
/// Each package of a `cargo tree --prefix none -f '{p}|{f}'` listing, as `name vX.Y.Z`, with
/// the union of the features it is listed with (a package built for the host and for the
/// target is listed twice).
pub fn tree_features(listing: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut packages: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in listing.lines() {
        let line = line.trim();
        let line = line.strip_suffix(" (*)").unwrap_or(line);
        let Some((package, features)) = line.split_once('|') else {
            continue;
        };
        let name: Vec<&str> = package.split(' ').take(2).collect();
        packages.entry(name.join(" ")).or_default().extend(
            features
                .split(',')
                .filter(|f| !f.is_empty())
                .map(str::to_owned),
        );
    }
    packages
}

/// The features the workspace's build turns on in a package of xtask's graph that xtask's own
/// resolution leaves off: each one makes `cargo xtask` build that package, and everything
/// above it, a second time.
pub fn feature_drift(
    workspace: &BTreeMap<String, BTreeSet<String>>,
    xtask: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<String> {
    xtask
        .iter()
        .filter_map(|(package, features)| {
            let missing: Vec<&str> = workspace
                .get(package)?
                .difference(features)
                .map(String::as_str)
                .collect();
            (!missing.is_empty()).then(|| {
                format!(
                    "xtask resolves {package} without the feature(s) {} that the workspace's build turns on: add them under \"Feature alignment\" in xtask/Cargo.toml, or `cargo xtask` builds the graph twice",
                    missing.join(", ")
                )
            })
        })
        .collect()
}

fn cargo_tree(root: &Path, args: &[&str]) -> anyhow::Result<BTreeMap<String, BTreeSet<String>>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(root)
        .args(["tree", "--locked", "--prefix", "none", "-f", "{p}|{f}"])
        .args(args)
        .output()
        .context("running cargo tree")?;
    if !output.status.success() {
        bail!(
            "cargo tree failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(tree_features(&String::from_utf8_lossy(&output.stdout)))
}

fn xtask_feature_drift(root: &Path) -> anyhow::Result<Vec<String>> {
    let host = ["--target", "host-tuple"];
    let workspace = cargo_tree(root, &["--workspace", host[0], host[1]])?;
    let xtask = cargo_tree(
        root,
        &["-p", "xtask", "-e", "normal,build", host[0], host[1]],
    )?;
    Ok(feature_drift(&workspace, &xtask))
}

pub fn run(root: &Path) -> anyhow::Result<()> {
    let metadata = cargo_metadata(root)?;
    let mut problems: Vec<String> = check_edges(&metadata)?
        .into_iter()
        .chain(check_wasmi_dispatch(&metadata))
        .map(|v| v.0)
        .collect();
    for file in files_without_header(root)? {
        problems.push(format!(
            "{} does not open with a //! comment",
            file.display()
        ));
    }
    problems.extend(missing_threat_model_tests(root)?);
    problems.extend(core_drives_ports(root)?);
    problems.extend(tick_githubs(root)?);
    problems.extend(xtask_feature_drift(root)?);
    if problems.is_empty() {
        return Ok(());
    }
    bail!(
        "tidy found {} problem(s):\n  {}",
        problems.len(),
        problems.join("\n  ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn metadata(edges: &[(&str, &str)]) -> Value {
        let mut names: BTreeSet<&str> = BTreeSet::new();
        for (a, b) in edges {
            names.insert(a);
            names.insert(b);
        }
        let packages: Vec<Value> = names
            .iter()
            .map(|n| json!({"id": format!("id-{n}"), "name": n}))
            .collect();
        let nodes: Vec<Value> = names
            .iter()
            .map(|n| {
                let deps: Vec<Value> = edges
                    .iter()
                    .filter(|(a, _)| a == n)
                    .map(|(_, b)| json!({"pkg": format!("id-{b}"), "dep_kinds": [{"kind": null}]}))
                    .collect();
                json!({"id": format!("id-{n}"), "deps": deps})
            })
            .collect();
        json!({"packages": packages, "resolve": {"nodes": nodes}})
    }

    #[test]
    fn a_feature_only_the_workspace_turns_on_is_drift() {
        let workspace = tree_features(
            "tokio v1.54.1|macros,rt,test-util\nmp-core v0.1.0 (/w/crates/mp-core)|\nslab v0.4.12|std (*)\n",
        );
        let xtask = tree_features("tokio v1.54.1|macros,rt\nslab v0.4.12|\nslab v0.4.12|std\n");
        let drift = feature_drift(&workspace, &xtask);
        assert_eq!(drift.len(), 1, "{drift:?}");
        assert!(
            drift[0].contains("tokio v1.54.1 without the feature(s) test-util"),
            "{drift:?}"
        );
        assert!(feature_drift(&workspace, &workspace).is_empty());
    }

    #[test]
    fn wasmi_without_portable_dispatch_is_a_problem() {
        let with = |features: Value| {
            json!({
                "packages": [{"id": "w", "name": "wasmi"}],
                "resolve": {"nodes": [{"id": "w", "deps": [], "features": features}]},
            })
        };
        assert!(check_wasmi_dispatch(&with(json!(["std", "auto-dispatch"]))).is_some());
        assert!(check_wasmi_dispatch(&with(json!(["std", "portable-dispatch"]))).is_none());
    }

    #[track_caller]
    fn check(edges: &[(&str, &str)], expected: &[&str]) {
        let got: Vec<String> = check_edges(&metadata(edges))
            .expect("well-formed")
            .into_iter()
            .map(|v| v.0)
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn allowed_edges_pass() {
        check(
            &[
                ("mp-cli", "mp-core"),
                ("mp-github", "mp-core"),
                ("mp-core", "regex"),
            ],
            &[],
        );
    }

    #[test]
    fn core_to_reqwest_fails() {
        check(
            &[("mp-core", "reqwest")],
            &["mp-core must not depend on reqwest (via mp-core -> reqwest)"],
        );
    }

    #[test]
    fn forbidden_crate_is_found_transitively() {
        check(
            &[("mp-core", "helper"), ("helper", "tokio")],
            &["mp-core must not depend on tokio (via mp-core -> helper -> tokio)"],
        );
    }

    #[test]
    fn inward_edges_only() {
        check(
            &[("mp-core", "mp-github"), ("mp-contracts", "mp-core")],
            &[
                "mp-contracts must not depend on mp-core",
                "mp-core must not depend on mp-github",
            ],
        );
    }

    #[test]
    fn the_fake_is_for_the_binary_and_tests() {
        check(
            &[
                ("mp-cli", "mp-github-fake"),
                ("xtask", "mp-github-fake"),
                ("mp-github-fake", "mp-github"),
                ("mp-github-fake", "mp-core"),
            ],
            &[],
        );
    }

    #[test]
    fn no_library_links_the_fake() {
        for library in [
            "mp-core",
            "mp-contracts",
            "mp-skills",
            "mp-github",
            "mp-tick",
            "mp-serve",
        ] {
            let got: Vec<String> = check_edges(&metadata(&[(library, "mp-github-fake")]))
                .expect("well-formed")
                .into_iter()
                .map(|v| v.0)
                .filter(|v| v.contains("link the fake"))
                .collect();
            assert_eq!(
                got,
                [format!(
                    "{library} must not link the fake GitHub mp-github-fake (via {library} -> mp-github-fake); a dev-dependency is fine (decisions/0050)"
                )],
            );
        }
    }

    #[test]
    fn the_fake_is_found_through_another_crate() {
        check(
            &[("mp-serve", "helper"), ("helper", "mp-github-fake")],
            &[
                "mp-serve must not link the fake GitHub mp-github-fake (via mp-serve -> helper -> mp-github-fake); a dev-dependency is fine (decisions/0050)",
            ],
        );
    }

    #[test]
    fn the_client_never_depends_on_the_fake() {
        check(
            &[
                ("mp-github", "mp-github-fake"),
                ("mp-github-fake", "mp-github"),
            ],
            &[
                "mp-github must not depend on mp-github-fake",
                "mp-github must not link the fake GitHub mp-github-fake (via mp-github -> mp-github-fake); a dev-dependency is fine (decisions/0050)",
            ],
        );
    }

    #[test]
    fn a_dev_dependency_on_the_fake_is_fine() {
        let mut doc = metadata(&[("mp-serve", "mp-github-fake")]);
        let serve = doc["resolve"]["nodes"]
            .as_array_mut()
            .and_then(|nodes| nodes.iter_mut().find(|n| n["id"] == "id-mp-serve"))
            .expect("mp-serve's node");
        serve["deps"][0]["dep_kinds"] = json!([{"kind": "dev"}]);
        let got = check_edges(&doc).expect("well-formed");
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn dev_dependencies_do_not_count() {
        let mut doc = metadata(&[("mp-core", "tokio")]);
        doc["resolve"]["nodes"][0]["deps"][0]["dep_kinds"] = json!([{"kind": "dev"}]);
        let got = check_edges(&doc).expect("well-formed");
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn the_core_never_reaches_its_drivers_not_even_for_tests() {
        let mut doc = metadata(&[
            ("mp-core", "mp-tick"),
            ("mp-tick", "mp-serve"),
            ("mp-tick", "mp-github"),
        ]);
        for node in doc["resolve"]["nodes"]
            .as_array_mut()
            .expect("nodes")
            .iter_mut()
        {
            for dep in node["deps"].as_array_mut().expect("deps") {
                dep["dep_kinds"] = json!([{"kind": "dev"}]);
            }
        }
        let got: Vec<String> = check_edges(&doc)
            .expect("well-formed")
            .into_iter()
            .map(|v| v.0)
            .collect();
        assert_eq!(
            got,
            [
                "mp-core must not depend on mp-tick, not even for its tests",
                "mp-tick must not depend on mp-serve, not even for its tests",
            ]
        );
    }

    #[test]
    fn a_port_trait_may_await_its_own_methods() {
        let text = "//! A port.\n\n#[async_trait::async_trait]\npub trait Port: Send {\n    async fn one(&self) -> u32;\n    async fn two(&self) -> u32 {\n        self.one().await + 1\n    }\n}\n";
        assert_eq!(
            async_outside_port_traits("port.rs", text),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_core_use_case_that_awaits_a_port_is_a_problem() {
        let text = "//! A use-case.\n\n/// Reads.\npub async fn read(port: &dyn Port) -> u32 {\n    // an .await in a comment is fine\n    port.one().await\n}\n\nfn awaits() -> bool { report.awaits_owner_only() }\n\n#[async_trait::async_trait]\nimpl Port for Fake {\n    async fn one(&self) -> u32 { 1 }\n}\n";
        let found = async_outside_port_traits("use_case.rs", text);
        assert_eq!(found.len(), 3, "{found:#?}");
        assert!(
            found[0].starts_with("use_case.rs:4: mp-core drives no port"),
            "{found:#?}"
        );
        assert!(found[1].starts_with("use_case.rs:6: "), "{found:#?}");
        assert!(found[2].starts_with("use_case.rs:13: "), "{found:#?}");
    }

    #[test]
    fn mp_core_drives_no_port() {
        let found = core_drives_ports(&crate::workspace_root()).expect("read");
        assert!(found.is_empty(), "{found:#?}");
    }

    #[test]
    fn a_github_of_its_own_in_the_tick_is_a_problem() {
        let text = "//! A test.\n\n#[async_trait::async_trait]\nimpl GitHub for Fake {\n}\n\nimpl mp_core::port::GitHubHistory for Fake {\n}\n\nimpl AuditLog for Fake {\n}\n\nimpl MyGitHub for Other {\n}\n";
        let found = own_githubs("crates/mp-tick/src/run/tests.rs", text);
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(
            found[0].starts_with(
                "crates/mp-tick/src/run/tests.rs:4: mp-tick keeps no GitHub of its own"
            ),
            "{found:#?}"
        );
        assert!(
            found[1].starts_with("crates/mp-tick/src/run/tests.rs:7: "),
            "{found:#?}"
        );
        assert_eq!(
            own_githubs("crates/mp-tick/src/recording.rs", text),
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_tick_keeps_no_github_of_its_own() {
        let found = tick_githubs(&crate::workspace_root()).expect("read");
        assert!(found.is_empty(), "{found:#?}");
    }

    #[test]
    fn workspace_dependency_edges_are_allowed() {
        let root = crate::workspace_root();
        let violations =
            check_edges(&cargo_metadata(&root).expect("cargo metadata")).expect("graph");
        assert!(violations.is_empty(), "{violations:#?}");
    }

    #[test]
    fn every_test_the_threat_model_names_exists() {
        let missing = missing_threat_model_tests(&crate::workspace_root()).expect("read");
        assert!(missing.is_empty(), "{missing:#?}");
    }

    #[test]
    fn every_source_file_has_a_header() {
        let missing = files_without_header(&crate::workspace_root()).expect("walk");
        assert!(
            missing.is_empty(),
            "files without a //! header: {missing:#?}"
        );
    }
}
