//! `cargo xtask gen-audit-log`: a synthetic audit log of N records (lines) in the format
//! `mp tick --audit-log` writes (docs/report.md), for the `mp agents` benchmark
//! (`cargo xtask bench agents`, docs/performance.md). Deterministic for a seed.
//!
//! The log is a run of ticks five minutes apart over 20 repositories. Each tick appends a
//! classification record for each new head, one `pr` record per open pull request, now and
//! then an `incident` or `revert` record naming a recent merge, and one `tick` record. About
//! 200 pull requests are open at a time, from 40 authors declaring 6 tools and 12 models;
//! each lives some ticks (blocked or waiting, a new head now and then, its check runs
//! growing), then merges (four in five) or disappears (closed).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

const REPOS: u64 = 20;
const OPEN: usize = 200;
const TOOLS: [&str; 6] = [
    "claude-code",
    "codex",
    "aider",
    "cursor-agent",
    "gemini-cli",
    "copilot-agent",
];
const CONDITIONS: [&str; 6] = [
    "c1_ready_to_merge",
    "c2_checks_green",
    "c3_protected_paths",
    "c4_base_is_main",
    "c5_trailers",
    "l4_agent_registry",
];
/// 2026-01-01T00:00:00Z.
const START: i64 = 1_767_225_600;
const TICK_SECONDS: i64 = 300;

/// The options of `gen-audit-log`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Lines to write.
    pub records: u64,
    /// The seed.
    pub seed: u64,
    /// Where to write.
    pub out: PathBuf,
}

fn parse(args: &[&str]) -> anyhow::Result<Options> {
    let mut options = Options {
        records: 1_000_000,
        seed: 36,
        out: PathBuf::from("target/bench-agents/audit.jsonl"),
    };
    let mut rest = args;
    while let [flag, value, tail @ ..] = rest {
        match *flag {
            "--records" => options.records = value.parse().context("--records")?,
            "--seed" => options.seed = value.parse().context("--seed")?,
            "--out" => options.out = PathBuf::from(value),
            other => bail!("gen-audit-log: unknown option {other}"),
        }
        rest = tail;
    }
    if !rest.is_empty() {
        bail!("gen-audit-log: --records N [--seed S] [--out FILE]");
    }
    Ok(options)
}

/// `cargo xtask gen-audit-log [--records N] [--seed S] [--out FILE]`.
pub fn run(args: &[&str]) -> anyhow::Result<()> {
    let options = parse(args)?;
    let written = write(&options.out, options.records, options.seed)?;
    #[allow(clippy::print_stderr)]
    {
        eprintln!(
            "gen-audit-log: {} records ({written} bytes) in {}",
            options.records,
            options.out.display()
        );
    }
    Ok(())
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

struct Pr {
    repo: u64,
    number: u64,
    author: u64,
    head: u64,
    runs: u64,
    opened: i64,
    approved: Option<i64>,
    ticks_left: u64,
    merges: bool,
}

/// `at` (Unix seconds, after 1970) as RFC 3339 in UTC.
fn instant(at: i64) -> String {
    let (days, rest) = (at.div_euclid(86_400), at.rem_euclid(86_400));
    // The proleptic Gregorian date of a day count, by 400-year eras.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

fn sha(rng: &mut Rng) -> String {
    format!(
        "{:016x}{:016x}{:08x}",
        rng.next(),
        rng.next(),
        rng.next() as u32
    )
}

/// Writes `records` lines to `path`; returns the bytes written.
///
/// # Errors
/// When the file cannot be written.
pub fn write(path: &Path, records: u64, seed: u64) -> anyhow::Result<u64> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let file = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut out = Counting {
        inner: BufWriter::with_capacity(1 << 20, file),
        lines: 0,
        bytes: 0,
        limit: records,
    };
    let mut rng = Rng(seed.max(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut open: Vec<Pr> = Vec::with_capacity(OPEN * 2);
    let mut next_number = vec![1u64; REPOS as usize];
    let mut recent_merges: Vec<(u64, String)> = Vec::new();
    let mut tick = 0i64;
    while !out.full() {
        let now = START + tick * TICK_SECONDS;
        let ts = instant(now);
        // New pull requests keep about OPEN open.
        while open.len() < OPEN {
            let repo = rng.below(REPOS);
            let number = next_number[repo as usize];
            next_number[repo as usize] += 1;
            open.push(Pr {
                repo,
                number,
                author: rng.below(40),
                head: 1,
                runs: 0,
                opened: now - 60 * rng.below(60) as i64,
                approved: None,
                ticks_left: 1 + rng.below(20),
                merges: rng.chance(80),
            });
            out.line(&format!(
                r#"{{"ts":"{ts}","pr":"acme/repo-{repo}#{number}","head_sha":"{}","quadrant":"B","votes":[{{"rule":"R-docs-only","quadrant":"A","reasoning":"only documentation changes"}},{{"rule":"R-default","quadrant":"B","reasoning":"an ordinary change"}}]}}"#,
                sha(&mut rng)
            ))?;
        }
        let mut merged = 0u64;
        let mut blocked = 0u64;
        let mut still_open = Vec::with_capacity(open.len());
        for mut pr in open.drain(..) {
            if rng.chance(5) {
                pr.head += 1;
            }
            pr.runs = (pr.runs + rng.below(2)).min(12);
            if pr.approved.is_none() && rng.chance(15) {
                pr.approved = Some(now - 60 * rng.below(5) as i64);
            }
            let tool = TOOLS[(pr.author % TOOLS.len() as u64) as usize];
            let model = format!("{tool}-model-{}", pr.author % 2);
            let head = format!("{:040x}", (pr.repo << 48) | (pr.number << 8) | pr.head);
            let (action, blocked_by, merged_sha) = if pr.ticks_left == 0 && pr.merges {
                let merged_sha = sha(&mut rng);
                recent_merges.push((pr.repo, merged_sha.clone()));
                if recent_merges.len() > 64 {
                    recent_merges.remove(0);
                }
                merged += 1;
                (
                    "merged",
                    String::new(),
                    format!(r#","merged_sha":"{merged_sha}""#),
                )
            } else if pr.ticks_left == 0 {
                // Closed: it simply stops appearing.
                continue;
            } else {
                let first = CONDITIONS[rng.below(CONDITIONS.len() as u64) as usize];
                let codes = if rng.chance(30) {
                    let second = CONDITIONS[rng.below(CONDITIONS.len() as u64) as usize];
                    if second == first {
                        format!(r#""{first}""#)
                    } else {
                        format!(r#""{first}","{second}""#)
                    }
                } else {
                    format!(r#""{first}""#)
                };
                blocked += 1;
                ("blocked", codes, String::new())
            };
            let approved = pr
                .approved
                .map_or_else(|| "null".to_owned(), |at| format!(r#""{}""#, instant(at)));
            out.line(&format!(
                r#"{{"action":"{action}","agent":{{"author":"agent-{author}","machine":"runner-{machine}","model":"{model}","session":"s_{repo}-{number}","tool":"{tool}"}},"approved_at":{approved},"blocked_by":[{blocked_by}],"check_runs":{runs},"dry_run":false,"head_sha":"{head}"{merged_sha},"opened_at":"{opened}","pr":"acme/repo-{repo}#{number}","quadrant":"B","record":"pr","ts":"{ts}"}}"#,
                author = pr.author,
                machine = pr.author % 8,
                repo = pr.repo,
                number = pr.number,
                runs = pr.runs,
                opened = instant(pr.opened),
            ))?;
            if action == "merged" {
                continue;
            }
            pr.ticks_left -= 1;
            still_open.push(pr);
        }
        open = still_open;
        if !recent_merges.is_empty() && rng.chance(3) {
            let (repo, sha) = recent_merges[rng.below(recent_merges.len() as u64) as usize].clone();
            out.line(&format!(
                r#"{{"dry_run":false,"issue":{issue},"label":"decision:post-merge-revalidation","record":"incident","repo":"acme/repo-{repo}","shas":["{sha}"],"ts":"{ts}"}}"#,
                issue = 1000 + tick
            ))?;
            if rng.chance(50) {
                out.line(&format!(
                    r#"{{"dry_run":false,"incident":{issue},"pull":{pull},"record":"revert","repo":"acme/repo-{repo}","sha":"{sha}","ts":"{ts}"}}"#,
                    issue = 1000 + tick,
                    pull = 900_000 + tick
                ))?;
            }
        }
        out.line(&format!(
            r#"{{"api_calls":{calls},"dry_run":false,"http":null,"inbox":[],"merge_mode":"merge","metrics":{{"blocked":{blocked},"merged":{merged}}},"quadrants":{{"A":0,"B":{classified},"C":0,"D":0}},"record":"tick","repos":[],"ts":"{ts}","warnings":0}}"#,
            calls = 40 + rng.below(40),
            classified = blocked + merged,
        ))?;
        tick += 1;
    }
    out.inner.flush().context("writing the log")?;
    Ok(out.bytes)
}

/// A writer that stops at `limit` lines.
struct Counting {
    inner: BufWriter<File>,
    lines: u64,
    bytes: u64,
    limit: u64,
}

impl Counting {
    fn full(&self) -> bool {
        self.lines >= self.limit
    }

    fn line(&mut self, text: &str) -> anyhow::Result<()> {
        if self.full() {
            return Ok(());
        }
        self.inner.write_all(text.as_bytes())?;
        self.inner.write_all(b"\n")?;
        self.lines += 1;
        self.bytes += text.len() as u64 + 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_are_rfc_3339() {
        assert_eq!(instant(START), "2026-01-01T00:00:00Z");
        assert_eq!(instant(951_782_400 + 86_399), "2000-02-29T23:59:59Z");
        assert_eq!(instant(0), "1970-01-01T00:00:00Z");
    }

    #[test]
    fn the_log_has_the_records_asked_for_each_a_json_object() {
        let dir = std::env::temp_dir().join(format!("gen-audit-log-{}", std::process::id()));
        let path = dir.join("audit.jsonl");
        write(&path, 5_000, 7).expect("written");
        let text = std::fs::read_to_string(&path).expect("read");
        let _ = std::fs::remove_dir_all(&dir);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5_000);
        let mut kinds = std::collections::BTreeMap::<String, u64>::new();
        for line in &lines {
            let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let kind = value["record"]
                .as_str()
                .unwrap_or("classification")
                .to_owned();
            *kinds.entry(kind).or_default() += 1;
        }
        assert!(kinds["pr"] > 4_000, "{kinds:?}");
        assert!(
            kinds["tick"] > 10 && kinds.contains_key("classification"),
            "{kinds:?}"
        );
    }
}
