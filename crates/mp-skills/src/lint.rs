//! `mp skills lint`: every gap of every user skill under a folder — a module without a
//! contract, an incomplete contract, or a module the sandbox refuses.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::contract;
use crate::registry::is_module;
use crate::sandbox::SkillModule;

#[cfg(test)]
mod tests;

/// One gap of one skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintFinding {
    /// The file the gap is in (the contract document or the module).
    pub path: PathBuf,
    /// A stable code: `contract_missing`, a `contract_*` gap code, or a `skill_*` load code.
    pub code: &'static str,
    /// One line naming the gap.
    pub message: String,
}

impl fmt::Display for LintFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}: {}",
            self.path.display(),
            self.code,
            self.message
        )
    }
}

/// What a lint run looked at and found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LintReport {
    /// The modules found, sorted.
    pub modules: Vec<PathBuf>,
    /// Every gap, in module order.
    pub findings: Vec<LintFinding>,
}

/// Lints every `.wasm` / `.wat` module under `dir` (three folder levels deep) with its
/// contract document `<name>.md`.
///
/// # Errors
/// When `dir` or one of its folders cannot be read.
pub fn lint_dir(dir: &Path) -> std::io::Result<LintReport> {
    let mut modules = Vec::new();
    collect(dir, 0, &mut modules)?;
    modules.sort();
    let mut findings = Vec::new();
    for module in &modules {
        findings.extend(lint_skill(module));
    }
    Ok(LintReport { modules, findings })
}

fn collect(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() && depth < 3 {
            collect(&path, depth + 1, out)?;
        } else if is_module(&path) {
            out.push(path);
        }
    }
    Ok(())
}

/// The gaps of one module and its contract.
fn lint_skill(module: &Path) -> Vec<LintFinding> {
    let mut findings = Vec::new();
    let name = module
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let contract_path = module.with_extension("md");
    match std::fs::read_to_string(&contract_path) {
        Ok(text) => findings.extend(contract::lint(&text).into_iter().map(|gap| LintFinding {
            path: contract_path.clone(),
            code: gap.code(),
            message: gap.to_string(),
        })),
        Err(_) => findings.push(LintFinding {
            path: module.to_owned(),
            code: "contract_missing",
            message: format!("no contract document {name}.md beside the module"),
        }),
    }
    let loaded = match std::fs::read(module) {
        Ok(bytes) if module.extension().is_some_and(|e| e == "wat") => {
            SkillModule::from_wat(name, &String::from_utf8_lossy(&bytes)).map(drop)
        }
        Ok(bytes) => SkillModule::from_wasm(name, &bytes).map(drop),
        Err(e) => {
            findings.push(LintFinding {
                path: module.to_owned(),
                code: "skill_load_failed",
                message: format!("cannot read the module: {e}"),
            });
            return findings;
        }
    };
    if let Err(failure) = loaded {
        findings.push(LintFinding {
            path: module.to_owned(),
            code: failure.code(),
            message: failure.cause.to_string(),
        });
    }
    findings
}
