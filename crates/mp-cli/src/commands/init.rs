//! `mp init`: write a starter configuration directory from flags, or by asking on a
//! terminal (the arguments are defined here too).
//!
//! The files come from `mp_core::config::starter`; this module gathers the values, writes
//! the files so that a failure leaves nothing behind, and loads what it wrote with the
//! strict loader before it reports success.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;
use mp_core::config::starter::{
    self, STARTER_FILES, StarterConfig, StarterField, StarterValueError, StarterValues,
};
use mp_core::config::{self, ConfigFiles};
use serde_json::json;

use crate::Exit;
use crate::cli::Format;
use crate::commands::config_validate::{NotConfigured, read_config_dir};

/// Arguments of `mp init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The owner's GitHub login: the one person whose ready-to-merge label, approval and
    /// inbox vote count.
    #[arg(long, value_name = "LOGIN")]
    pub owner: Option<String>,
    /// The governance repository: holds the configuration, the decision inbox and the
    /// bot's state (the `bot-state` branch).
    #[arg(long, value_name = "OWNER/REPO")]
    pub governance: Option<String>,
    /// A repository mp supervises (repeatable). Add the governance repository too if its
    /// own pull requests should be gated.
    #[arg(long = "repo", value_name = "OWNER/REPO")]
    pub repos: Vec<String>,
    /// The slug of the GitHub App the bot runs as (github.com/apps/SLUG).
    #[arg(long, value_name = "SLUG")]
    pub app_slug: Option<String>,
    /// A check run every pull request needs green (repeatable), e.g. `test`.
    #[arg(long = "required-check", value_name = "NAME")]
    pub required_checks: Vec<String>,
    /// The directory to create (its parent directories too).
    #[arg(long, value_name = "DIR", default_value = "config")]
    pub out: PathBuf,
    /// Write into a DIR that already holds files, replacing only owner.yml, projects.yml
    /// and env.yml (every other file is kept).
    #[arg(long)]
    pub force: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// The flag that gives `field`.
fn flag(field: StarterField) -> &'static str {
    match field {
        StarterField::Owner => "--owner",
        StarterField::Governance => "--governance",
        StarterField::Repo => "--repo",
        StarterField::AppSlug => "--app-slug",
        StarterField::RequiredCheck => "--required-check",
        _ => "a flag",
    }
}

pub fn run(args: &InitArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let values = if std::io::stdin().is_terminal() {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        let mut prompt = std::io::stderr();
        ask_missing(args, &mut input, &mut prompt)?
    } else {
        from_flags(args)?
    };
    let starter = StarterConfig::parse(&values).map_err(|problems| refusal(&problems))?;
    let files = starter.render();
    let written = write_config(&args.out, &files, args.force)?;
    report(args, &written, out)?;
    Ok(Exit::Ok)
}

/// The values given as flags. Every missing required flag is named at once, with the
/// given values that are refused.
fn from_flags(args: &InitArgs) -> anyhow::Result<StarterValues> {
    let mut missing = Vec::new();
    if args.owner.is_none() {
        missing.push(StarterField::Owner);
    }
    if args.governance.is_none() {
        missing.push(StarterField::Governance);
    }
    if args.repos.is_empty() {
        missing.push(StarterField::Repo);
    }
    if args.app_slug.is_none() {
        missing.push(StarterField::AppSlug);
    }
    let values = StarterValues {
        owner: args.owner.clone().unwrap_or_default(),
        governance: args.governance.clone().unwrap_or_default(),
        repos: args.repos.clone(),
        app_slug: args.app_slug.clone().unwrap_or_default(),
        required_checks: args.required_checks.clone(),
    };
    if missing.is_empty() {
        return Ok(values);
    }
    let flags: Vec<&str> = missing.iter().map(|field| flag(*field)).collect();
    let pronoun = if missing.len() == 1 { "it" } else { "them" };
    let mut message = format!(
        "missing {}: standard input is not a terminal, so mp init cannot ask for {pronoun}; give {pronoun} on the command line; nothing was written",
        flags.join(", ")
    );
    if let Err(problems) = StarterConfig::parse(&values) {
        for problem in problems.iter().filter(|p| !missing.contains(&p.field())) {
            message.push_str(&format!("\n  {}: {problem}", flag(problem.field())));
        }
    }
    bail!(message)
}

/// The values given as flags, and an answer for each missing one, asked on `prompt` and
/// read from `input` (a line each; a wrong answer is explained and asked again).
fn ask_missing(
    args: &InitArgs,
    input: &mut dyn BufRead,
    prompt: &mut dyn Write,
) -> anyhow::Result<StarterValues> {
    let owner = match &args.owner {
        Some(owner) => owner.clone(),
        None => ask(
            input,
            prompt,
            StarterField::Owner,
            "Your GitHub login (the one person whose approval counts)",
            |text| starter::check_owner(text).map(|()| text.to_owned()),
        )?,
    };
    let governance = match &args.governance {
        Some(governance) => governance.clone(),
        None => ask(
            input,
            prompt,
            StarterField::Governance,
            "The governance repository (OWNER/REPO)",
            |text| starter::check_repo(StarterField::Governance, text).map(|_| text.to_owned()),
        )?,
    };
    let repos = if args.repos.is_empty() {
        ask(
            input,
            prompt,
            StarterField::Repo,
            "The repositories mp supervises (OWNER/REPO, separated by spaces or commas)",
            |text| {
                let repos = split_list(text, &[' ', ',']);
                let mut seen = std::collections::BTreeSet::new();
                for repo in &repos {
                    let name = starter::check_repo(StarterField::Repo, repo)?;
                    if !seen.insert(name) {
                        return Err(StarterValueError::listed_twice(StarterField::Repo, repo));
                    }
                }
                Ok(repos)
            },
        )?
    } else {
        args.repos.clone()
    };
    let app_slug = match &args.app_slug {
        Some(slug) => slug.clone(),
        None => ask(
            input,
            prompt,
            StarterField::AppSlug,
            "The GitHub App's slug (github.com/apps/SLUG)",
            |text| starter::check_app_slug(text).map(|()| text.to_owned()),
        )?,
    };
    let required_checks = if args.required_checks.is_empty() {
        ask_optional(
            input,
            prompt,
            "The checks every pull request needs green (separated by commas; empty for none)",
            |text| {
                let checks = split_list(text, &[',']);
                for check in &checks {
                    starter::check_check_name(check)?;
                }
                Ok(checks)
            },
        )?
    } else {
        args.required_checks.clone()
    };
    Ok(StarterValues {
        owner,
        governance,
        repos,
        app_slug,
        required_checks,
    })
}

/// The non-empty items of `text`, split at any of `separators`, trimmed.
fn split_list(text: &str, separators: &[char]) -> Vec<String> {
    text.split(separators)
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Reads one answer line, trimmed; `None` at the end of the input.
fn read_answer(input: &mut dyn BufRead) -> anyhow::Result<Option<String>> {
    let mut line = String::new();
    let read = input
        .read_line(&mut line)
        .context("reading an answer from standard input")?;
    Ok((read > 0).then(|| line.trim().to_owned()))
}

/// Asks for a required value until `check` accepts an answer.
fn ask<T>(
    input: &mut dyn BufRead,
    prompt: &mut dyn Write,
    field: StarterField,
    question: &str,
    check: impl Fn(&str) -> Result<T, StarterValueError>,
) -> anyhow::Result<T> {
    loop {
        write!(prompt, "{question}: ")?;
        prompt.flush()?;
        let Some(answer) = read_answer(input)? else {
            writeln!(prompt)?;
            bail!(
                "no answer for {}: give it on the command line; nothing was written",
                flag(field)
            );
        };
        if answer.is_empty() {
            writeln!(prompt, "  a value is needed ({})", flag(field))?;
            continue;
        }
        match check(&answer) {
            Ok(value) => return Ok(value),
            Err(problem) => writeln!(prompt, "  {problem}")?,
        }
    }
}

/// Asks for an optional list until `check` accepts an answer; an empty answer (or the end
/// of the input) is an empty list.
fn ask_optional(
    input: &mut dyn BufRead,
    prompt: &mut dyn Write,
    question: &str,
    check: impl Fn(&str) -> Result<Vec<String>, StarterValueError>,
) -> anyhow::Result<Vec<String>> {
    loop {
        write!(prompt, "{question}: ")?;
        prompt.flush()?;
        let Some(answer) = read_answer(input)? else {
            writeln!(prompt)?;
            return Ok(Vec::new());
        };
        match check(&answer) {
            Ok(value) => return Ok(value),
            Err(problem) => writeln!(prompt, "  {problem}")?,
        }
    }
}

/// The error for refused values: one line per value, each naming its flag.
fn refusal(problems: &[StarterValueError]) -> anyhow::Error {
    let lines: Vec<String> = problems
        .iter()
        .map(|problem| format!("  {}: {problem}", flag(problem.field())))
        .collect();
    anyhow::anyhow!(
        "refused {} value{} (nothing was written):\n{}",
        problems.len(),
        if problems.len() == 1 { "" } else { "s" },
        lines.join("\n")
    )
}

/// What was written, for the report.
struct Written {
    files: Vec<PathBuf>,
    warnings: Vec<String>,
}

/// Writes `files` into `dir` so that a failure leaves nothing behind: a new directory is
/// filled under a temporary name beside it and renamed into place; an existing one (empty,
/// or with `force`) gets each file under a temporary name first, then the renames. What is
/// on disk is loaded with the strict loader before anything takes its final name.
fn write_config(
    dir: &Path,
    files: &[(&'static str, String)],
    force: bool,
) -> anyhow::Result<Written> {
    match std::fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => {
            bail!("{} exists and is not a directory", dir.display())
        }
        Ok(_) => write_into_existing(dir, files, force),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            if std::fs::symlink_metadata(dir).is_ok() {
                bail!(
                    "{} is a symbolic link to nothing; nothing was written",
                    dir.display()
                );
            }
            write_new(dir, files)
        }
        Err(error) => Err(error).with_context(|| format!("reading {}", dir.display())),
    }
}

/// Loads the configuration `files` make, refusing one with an error.
fn check_loads(files: &ConfigFiles, place: &Path) -> anyhow::Result<Vec<String>> {
    let report = config::load(files);
    if report.has_errors() {
        let lines: Vec<String> = report.errors().map(|p| format!("  {p}")).collect();
        bail!(
            "the configuration in {} would not be valid, so nothing was written:\n{}",
            place.display(),
            lines.join("\n")
        );
    }
    Ok(report.warnings().map(ToString::to_string).collect())
}

/// Creates `path` with `text` and flushes it to disk.
fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing {}", path.display()))
}

/// `dir` does not exist: fill a temporary directory beside it, check it, rename it.
fn write_new(dir: &Path, files: &[(&'static str, String)]) -> anyhow::Result<Written> {
    let name = dir
        .file_name()
        .with_context(|| format!("{} does not name a directory", dir.display()))?;
    let parent = match dir.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let created = create_parents(&parent)?;
    let staging = parent.join(format!(
        ".{}.mp-init-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        std::fs::create_dir(&staging).with_context(|| format!("creating {}", staging.display()))?;
        for (file, text) in files {
            write_file(&staging.join(file), text)?;
        }
        let warnings = check_loads(&read_config_dir(&staging)?, dir)?;
        std::fs::rename(&staging, dir)
            .with_context(|| format!("renaming {} to {}", staging.display(), dir.display()))?;
        Ok(warnings)
    })();
    match result {
        Ok(warnings) => Ok(Written {
            files: files.iter().map(|(file, _)| dir.join(file)).collect(),
            warnings,
        }),
        Err(error) => {
            let _ = std::fs::remove_dir_all(&staging);
            for made in created.iter().rev() {
                let _ = std::fs::remove_dir(made);
            }
            Err(error)
        }
    }
}

/// Creates `dir` and its missing ancestors; returns the ones it created, outermost first.
fn create_parents(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut missing = Vec::new();
    let mut at = Some(dir);
    while let Some(path) = at.filter(|p| !p.as_os_str().is_empty()) {
        if path.exists() {
            break;
        }
        missing.push(path.to_path_buf());
        at = path.parent();
    }
    missing.reverse();
    for (index, path) in missing.iter().enumerate() {
        if let Err(error) = std::fs::create_dir(path) {
            for made in missing[..index].iter().rev() {
                let _ = std::fs::remove_dir(made);
            }
            return Err(error).with_context(|| format!("creating {}", path.display()));
        }
    }
    Ok(missing)
}

/// `dir` exists: refuse when it holds anything (without `force`), else write each file
/// under a temporary name, check the directory as it will be, and rename them.
fn write_into_existing(
    dir: &Path,
    files: &[(&'static str, String)],
    force: bool,
) -> anyhow::Result<Written> {
    let mut entries: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    if !force && !entries.is_empty() {
        let ours: Vec<&str> = STARTER_FILES
            .into_iter()
            .filter(|name| entries.iter().any(|e| e == name))
            .collect();
        let named = if ours.is_empty() {
            let mut shown: Vec<&str> = entries.iter().take(5).map(String::as_str).collect();
            if entries.len() > shown.len() {
                shown.push("...");
            }
            format!("it holds {}", shown.join(", "))
        } else {
            format!(
                "{} already exist{}",
                ours.join(", "),
                if ours.len() == 1 { "s" } else { "" }
            )
        };
        bail!(
            "{} is not empty ({named}); nothing was written (--force replaces {}, {} and {} there and keeps every other file)",
            dir.display(),
            STARTER_FILES[0],
            STARTER_FILES[1],
            STARTER_FILES[2]
        );
    }
    for (file, _) in files {
        let target = dir.join(file);
        if let Ok(meta) = std::fs::symlink_metadata(&target)
            && !meta.is_file()
        {
            bail!(
                "{} exists and is not a regular file; nothing was written",
                target.display()
            );
        }
    }
    let staged: Vec<(PathBuf, PathBuf)> = files
        .iter()
        .map(|(file, _)| {
            let temporary = dir.join(format!(".{file}.mp-init-{}.tmp", std::process::id()));
            (temporary, dir.join(file))
        })
        .collect();
    let result = (|| {
        for ((temporary, _), (_, text)) in staged.iter().zip(files) {
            write_file(temporary, text)?;
        }
        // The directory as it will be: the files kept, and ours as they are on disk.
        // An empty directory reads as "not configured": nothing is kept.
        let mut combined = match read_config_dir(dir) {
            Ok(files) => files,
            Err(e) if e.downcast_ref::<NotConfigured>().is_some() => ConfigFiles::new(),
            Err(e) => return Err(e),
        };
        for ((temporary, _), (file, _)) in staged.iter().zip(files) {
            let text = std::fs::read_to_string(temporary)
                .with_context(|| format!("reading {}", temporary.display()))?;
            combined.insert(*file, text);
        }
        check_loads(&combined, dir)
    })();
    let warnings = match result {
        Ok(warnings) => warnings,
        Err(error) => {
            for (temporary, _) in &staged {
                let _ = std::fs::remove_file(temporary);
            }
            return Err(error);
        }
    };
    let mut replaced = Vec::new();
    for (index, (temporary, target)) in staged.iter().enumerate() {
        if let Err(error) = std::fs::rename(temporary, target) {
            for (left, _) in &staged[index..] {
                let _ = std::fs::remove_file(left);
            }
            let done = if replaced.is_empty() {
                "none was replaced".to_owned()
            } else {
                format!("only {} was replaced", replaced.join(", "))
            };
            return Err(error).with_context(|| {
                format!(
                    "renaming {} to {} ({done})",
                    temporary.display(),
                    target.display()
                )
            });
        }
        replaced.push(target.display().to_string());
    }
    Ok(Written {
        files: staged.into_iter().map(|(_, target)| target).collect(),
        warnings,
    })
}

/// Prints what was written and what to do next.
fn report(args: &InitArgs, written: &Written, out: &mut dyn Write) -> anyhow::Result<()> {
    let dir = args.out.display().to_string();
    let files: Vec<String> = written
        .files
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    match args.format {
        Format::Json => crate::output::json(
            out,
            &json!({
                "directory": dir,
                "files": files,
                "merge_enabled": false,
                "warnings": written.warnings,
            }),
        ),
        Format::Text => {
            writeln!(out, "wrote {dir} (merge_enabled: false, observe mode):")?;
            for file in &files {
                writeln!(out, "  {file}")?;
            }
            for warning in &written.warnings {
                writeln!(out, "{warning}")?;
            }
            writeln!(out)?;
            writeln!(out, "Next steps (docs/quick-start.md):")?;
            writeln!(out, "  1. Check it:      mp config validate --config {dir}")?;
            let steps = [
                "  2. The App:       create the GitHub App, install it on the governance repository",
                "                    and every supervised one; in the governance repository, set",
                "                    MP_APP_ID, MP_APP_PRIVATE_KEY and MP_RECEIPT_KEY (step 2)",
                "  3. The workflow:  commit this directory to the governance repository with",
                "                    examples/workflows/mp-tick.yml as .github/workflows/mp-tick.yml",
                "  4. Merging:       after a few ticks of \"would have merged\", set",
                "                    merge_enabled: true in env.yml (step 5)",
            ];
            for step in steps {
                writeln!(out, "{step}")?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(owner: Option<&str>) -> InitArgs {
        InitArgs {
            owner: owner.map(str::to_owned),
            governance: None,
            repos: Vec::new(),
            app_slug: Some("jane-gate".to_owned()),
            required_checks: Vec::new(),
            out: PathBuf::from("config"),
            force: false,
            format: Format::Text,
        }
    }

    #[test]
    fn missing_values_are_asked_for_and_a_wrong_answer_is_asked_again() {
        let mut input: &[u8] = b"jane-doe\nnot-a-repo\njane-doe/governance\n\
            jane-doe/web Jane-Doe/Web\njane-doe/web, jane-doe/api\ntest, CI / lint\n";
        let mut prompt = Vec::new();
        let values = ask_missing(&args(None), &mut input, &mut prompt).expect("answers");
        assert_eq!(values.owner, "jane-doe");
        assert_eq!(values.governance, "jane-doe/governance");
        assert_eq!(values.repos, ["jane-doe/web", "jane-doe/api"]);
        assert_eq!(values.app_slug, "jane-gate", "given as a flag, not asked");
        assert_eq!(values.required_checks, ["test", "CI / lint"]);
        let prompt = String::from_utf8(prompt).expect("text");
        assert!(
            prompt.contains("invalid repository `not-a-repo`"),
            "{prompt}"
        );
        assert_eq!(
            prompt.matches("The governance repository").count(),
            2,
            "{prompt}"
        );
        assert!(
            prompt.contains("invalid repository `Jane-Doe/Web`: listed twice"),
            "{prompt}"
        );
        assert!(!prompt.contains("slug"), "{prompt}");
    }

    #[test]
    fn the_end_of_the_input_names_the_flag() {
        let mut input: &[u8] = b"jane-doe\n";
        let mut prompt = Vec::new();
        let error = ask_missing(&args(None), &mut input, &mut prompt).expect_err("no answer");
        assert!(error.to_string().contains("--governance"), "{error}");
    }

    #[test]
    fn an_empty_answer_for_the_checks_means_none() {
        let mut input: &[u8] = b"jane-doe/gov\njane-doe/app\n\n";
        let mut prompt = Vec::new();
        let values = ask_missing(&args(Some("jane")), &mut input, &mut prompt).expect("answers");
        assert!(values.required_checks.is_empty());
        assert_eq!(values.repos, ["jane-doe/app"]);
    }
}
