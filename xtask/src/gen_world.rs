//! `cargo xtask gen-world --repos N --prs M [--seed S] [--out FILE]`: writes a synthetic
//! world file (mp-github-fake's `synthetic_world`) for benchmarks and load tests of `mp tick`.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{Context as _, bail};
use mp_github_fake::world::synthetic::SYNTHETIC_RECEIPT_KEY;
use mp_github_fake::world::{synthetic_world, world_to_yaml};

/// What to generate, from the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// Application repositories.
    pub repos: usize,
    /// Open pull requests per repository.
    pub prs: usize,
    /// The generator's seed.
    pub seed: u64,
    /// Where to write; `None` is stdout.
    pub out: Option<PathBuf>,
}

/// The seed when `--seed` is not given.
pub const DEFAULT_SEED: u64 = 1;

/// Reads `--repos N --prs M [--seed S] [--out FILE]`, in any order.
pub fn parse_args(args: &[&str]) -> anyhow::Result<Args> {
    let mut repos = None;
    let mut prs = None;
    let mut seed = DEFAULT_SEED;
    let mut out = None;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let Some(value) = rest.next() else {
            bail!("{flag} needs a value");
        };
        let number = |what: &str| -> anyhow::Result<u64> {
            value
                .parse()
                .with_context(|| format!("{what} expects a whole number, got {value:?}"))
        };
        match *flag {
            "--repos" => repos = Some(number("--repos")?),
            "--prs" => prs = Some(number("--prs")?),
            "--seed" => seed = number("--seed")?,
            "--out" => out = Some(PathBuf::from(value)),
            other => bail!("unknown option {other:?}; expected --repos, --prs, --seed or --out"),
        }
    }
    let Some(repos) = repos else {
        bail!("--repos is required");
    };
    let Some(prs) = prs else {
        bail!("--prs is required");
    };
    if repos == 0 {
        bail!("--repos must be at least 1");
    }
    Ok(Args {
        repos: usize::try_from(repos).context("--repos is too large")?,
        prs: usize::try_from(prs).context("--prs is too large")?,
        seed,
        out,
    })
}

/// The world file text for `args`.
pub fn render(args: &Args) -> String {
    let world = synthetic_world(args.repos, args.prs, args.seed);
    world_to_yaml(&world, Some(SYNTHETIC_RECEIPT_KEY))
}

/// Generates the world and writes it to `--out` (or stdout).
pub fn run(args: &[&str]) -> anyhow::Result<()> {
    let args = parse_args(args)?;
    let text = render(&args);
    let target = match &args.out {
        Some(path) => {
            std::fs::write(path, &text).with_context(|| format!("writing {}", path.display()))?;
            path.display().to_string()
        }
        None => {
            std::io::stdout()
                .write_all(text.as_bytes())
                .context("writing the world to stdout")?;
            "stdout".to_owned()
        }
    };
    #[allow(clippy::print_stderr)]
    {
        eprintln!(
            "wrote {} repositories x {} open pull requests ({} in all, seed {}, {} KiB) to {target}",
            args.repos,
            args.prs,
            args.repos * args.prs,
            args.seed,
            text.len() / 1024
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests;
