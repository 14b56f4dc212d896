//! Tests for the whole tick: the durable state (first run, fail closed before any write,
//! a save after every repository and on every way out), the rate-limit reserve and
//! secondary limits, and the fail-safe burn-in clock.

use std::sync::Mutex;

use super::*;
use crate::testkit::{
    BOT, TRAILERS, at, block_on, check_run, commit_by, config_with, login, repo, sha,
};
use crate::{PR_PATH_RESERVE, lease, run_repository_pass};
use mp_core::approval::UNSIGNED_RECEIPTS_WARNING;
use mp_core::config::{self, Config};
use mp_core::context::CommitContext;
use mp_core::gate::burn_in::BurnInStatus;
use mp_core::port::Write;
use mp_core::port::{AuditError, AuditRecord, GitHubError};
use mp_core::state::{BOT_STATE_BRANCH, BURN_IN_STATE_PATH, Layer, WATERMARKS_PATH, Watermarks};
use mp_github_fake::world::Commit;
use mp_github_fake::{Endpoint, Failure, MemoryGitHub};

const GOV: &str = "acme/governance";
const NOW: &str = "2026-03-01T12:00:00Z";
const PUT_STATE: &str = "put acme/governance@bot-state bot-state/branch_supervisor_watermarks.json: chore(bot-state): update branch_supervisor watermarks";
const TAKE_LEASE: &str =
    "put acme/governance@bot-state bot-state/lease.json: chore(bot-state): take the tick lease";
const GIVE_BACK_LEASE: &str = "put acme/governance@bot-state bot-state/lease.json: chore(bot-state): give back the tick lease";
const PUT_BURN_IN: &str = "put acme/governance@bot-state bot-state/l4_burn_in.json: chore(bot-state): update l4 burn-in clock";
const BURN_IN_ENV: &str =
    "bot_app_slug: mp-gate\nrequired_checks: [test]\nmerge_enabled: true\nl4_burn_in_days: 3\n";
/// The rate-limit budget of the world until a test sets another.
const BUDGET: u32 = 4321;

/// The base commits of `main`: `acme/app` at `0a…`, `acme/old` at `0b…`.
const BASES: [(&str, &str); 2] = [("acme/app", "0a"), ("acme/old", "0b")];

/// The in-memory GitHub, the audit log and how many of GitHub's writes were taken.
struct Fake {
    github: MemoryGitHub,
    audit: NoAudit,
    seen: Mutex<usize>,
}

/// The audit log of these tests: records nothing.
struct NoAudit;

#[async_trait::async_trait]
impl AuditLog for NoAudit {
    async fn append(&self, _record: &AuditRecord) -> Result<(), AuditError> {
        Ok(())
    }
}

impl Fake {
    /// GitHub's writes since the last take: an issue as `issue <repo>#<n> [<labels>]:
    /// <title>`, a file as `put <repo>@<branch> <path>: <message>`, any other write as
    /// the action log shows it.
    fn take_log(&self) -> Vec<String> {
        let actions = self.github.actions();
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let new = actions[*seen..]
            .iter()
            .map(|action| match action {
                Write::PutFile { repo, write, .. } => format!(
                    "put {repo}@{} {}: {}",
                    write.branch, write.path, write.message
                ),
                other => crate::testkit::write_line(other),
            })
            .collect();
        *seen = actions.len();
        new
    }

    /// Changes repository `name` as someone other than the bot would; its branches' logs
    /// follow their history where the change left them without one.
    fn edit<R>(&self, name: &str, edit: impl FnOnce(&mut mp_github_fake::world::Repo) -> R) -> R {
        self.github.edit_world(|world| {
            let found = world
                .repo_mut(&repo(name))
                .expect("a repository of the world");
            let result = edit(found);
            found.fill_activity(Some(&login(BOT)));
            result
        })
    }

    /// Writes a file on `bot-state` of the governance repository, as a person would.
    fn add_file(&self, path: &str, text: &str) {
        self.edit(GOV, |r| {
            r.branch_files
                .entry(BOT_STATE_BRANCH.to_owned())
                .or_default()
                .insert(path.to_owned(), text.to_owned())
        });
    }

    /// A file on `bot-state` of the governance repository.
    fn file_text(&self, path: &str) -> Option<String> {
        self.github.read(|world| {
            let files = world.repo(&repo(GOV))?.branch_files.get(BOT_STATE_BRANCH)?;
            files.get(path).cloned()
        })
    }

    /// Gives the governance repository a `bot-state` branch (mp's commit `5…`), without
    /// a file.
    fn add_state_branch(&self) {
        self.edit(GOV, |r| {
            let state = sha("5");
            r.commits.push(Commit {
                id: state.to_string(),
                sha: state.clone(),
                message: "chore: state".to_owned(),
                parents: Vec::new(),
                author: Some(login(BOT)),
                committer: Some(login(BOT)),
                date: Some(at("2026-03-01T10:00:00Z")),
                checks: Vec::new(),
                check_workflows: Default::default(),
            });
            r.branches.insert(BOT_STATE_BRANCH.to_owned(), state);
        });
    }

    fn fail(&self, failure: Failure) {
        self.github.fail(failure);
    }
}

/// The world with the pull requests numbered `pulls` in `acme/app`, each Quadrant A and
/// green: head `a<n>…` on `main`, one commit with good trailers committed and pushed
/// (branch created) at 10:00, `README.md` modified, `test` green from GitHub Actions,
/// `ready-to-merge` applied by the owner at 11:00 (no receipt yet); both supervised
/// repositories at their base commit (of 1 February), the governance repository's `main`
/// at `f…` (next issue `#100`), and, when `state` is given, a `bot-state` branch holding
/// it as the watermarks file.
fn world(pulls: Vec<u64>, state: Option<&str>) -> Fake {
    let quoted = |prefix: &str| format!("\"{}\"", sha(prefix));
    let base = |prefix: &str| {
        format!(
            "      - {{id: {}, message: \"chore: base\", author: \"{BOT}\", committer: \"{BOT}\", date: 2026-02-01T10:00:00Z}}\n",
            quoted(prefix)
        )
    };
    let mut commits = base("0a");
    let mut branches = format!("main: {}", quoted("0a"));
    let mut listed = String::new();
    for n in &pulls {
        let head = quoted(&format!("a{n}"));
        let message = format!("docs: change {n}\n\n{TRAILERS}").replace('\n', "\\n");
        commits.push_str(&format!(
            "      - {{id: {head}, message: \"{message}\", parents: [{}], date: 2026-03-01T10:00:00Z, checks: [{{name: test, app: github-actions}}]}}\n",
            quoted("0a")
        ));
        branches.push_str(&format!(", change-{n}: {head}"));
        listed.push_str(&format!(
            "      - number: {n}
        title: \"docs: change {n}\"
        author: agent-bob
        head: change-{n}
        labels: [ready-to-merge]
        events: [{{labeled: ready-to-merge, by: alice, at: 2026-03-01T11:00:00Z}}]
        files: [{{path: README.md, status: modified, additions: 1}}]
        pushes: [{{type: branch_creation, to: {head}, by: agent-bob, at: 2026-03-01T10:00:00Z}}]
        created_at: 2026-03-01T09:00:00Z
"
        ));
    }
    let pulls_yaml = if listed.is_empty() {
        String::new()
    } else {
        format!("    pulls:\n{listed}")
    };
    let text = format!(
        "now: {NOW}
bot: mp-gate
rate_limit: {{remaining: {BUDGET}}}
repos:
  - name: acme/app
    commits:
{commits}    branches: {{{branches}}}
{pulls_yaml}  - name: acme/old
    commits:
{old}    branches: {{main: {old_head}}}
  - name: {GOV}
    commits:
      - {{id: {gov}, message: \"docs: governance\", committer: \"{BOT}\", date: 2026-02-01T10:00:00Z}}
    branches: {{main: {gov}}}
    issues:
      - {{number: 99, title: an earlier issue, state: closed}}
",
        old = base("0b"),
        old_head = quoted("0b"),
        gov = quoted("f"),
    );
    let parsed = mp_github_fake::parse_world("run.yaml", &text, None)
        .unwrap_or_else(|err| panic!("the test world parses: {err}\n{text}"));
    let fake = Fake {
        github: MemoryGitHub::new(parsed),
        audit: NoAudit,
        seen: Mutex::new(0),
    };
    if let Some(text) = state {
        fake.add_state_branch();
        fake.add_file(WATERMARKS_PATH, text);
    }
    fake
}

/// Lands `commits` (green `test` runs) on the `main` of `name`, after its base.
fn land(fake: &Fake, name: &str, commits: Vec<CommitContext>) {
    fake.edit(name, |r| {
        let mut head = r.branch_head("main").cloned().expect("a main branch");
        for mut commit in commits {
            if commit.parents.is_empty() {
                commit.parents.push(head.clone());
            }
            head = commit.sha.clone();
            r.commits.push(Commit {
                id: commit.sha.to_string(),
                sha: commit.sha.clone(),
                message: commit.message(),
                parents: commit.parents.clone(),
                author: commit.author_login.clone(),
                committer: commit.committer_login.clone(),
                date: commit.committed_at,
                checks: vec![check_run("test", "success")],
                check_workflows: Default::default(),
            });
        }
        r.branches.insert("main".to_owned(), head);
        // GitHub's log of `main` follows the pushes.
        r.activity.remove("main");
    });
}

/// Both repositories scanned up to their base commits.
fn settled() -> String {
    let mut state = Watermarks::new();
    for (name, base) in BASES {
        for layer in Layer::ALL {
            state.set(&repo(name), layer, sha(base));
        }
    }
    state.to_json()
}

fn stored_state(fake: &Fake) -> Option<String> {
    fake.file_text(WATERMARKS_PATH)
}

/// Runs one tick at `when` and compares the writes, then the outcomes (`=>`) and the
/// warnings (`!`), or the error, with `expected`.
#[track_caller]
fn check(
    fake: &Fake,
    config: &Config,
    when: &str,
    expected: &[&str],
) -> Result<FullTickReport, TickError> {
    let options = TickOptions::from_config(config);
    let result = block_on(run_tick(
        &fake.github,
        &fake.audit,
        config,
        &options,
        at(when),
    ));
    let mut lines = without_lease(fake.take_log());
    match &result {
        Ok(report) => {
            lines.extend(report.outcomes.iter().map(|o| format!("=> {o}")));
            lines.extend(
                report
                    .warnings
                    .iter()
                    .filter(|w| *w != UNSIGNED_RECEIPTS_WARNING)
                    .map(|w| format!("! {w}")),
            );
        }
        Err(error) => lines.push(format!("error: {error}")),
    }
    assert_eq!(lines, expected);
    result
}

/// The log without the lease's two writes, after checking that a tick which took the lease
/// wrote nothing before it (but the first run's branch and file) and gave it back last.
fn without_lease(lines: Vec<String>) -> Vec<String> {
    let Some(taken) = lines.iter().position(|l| l == TAKE_LEASE) else {
        assert!(
            !lines.iter().any(|l| l == GIVE_BACK_LEASE),
            "given back, never taken: {lines:?}"
        );
        return lines;
    };
    assert!(
        lines[..taken]
            .iter()
            .all(|l| l.starts_with("create branch ") || l == PUT_STATE),
        "a write before the lease: {lines:?}"
    );
    let last_write = lines.iter().rposition(|l| !l.starts_with('!'));
    assert_eq!(
        last_write.map(|i| lines[i].as_str()),
        Some(GIVE_BACK_LEASE),
        "the lease is given back after every other write: {lines:?}"
    );
    lines
        .into_iter()
        .filter(|l| l != TAKE_LEASE && l != GIVE_BACK_LEASE)
        .collect()
}

fn unavailable(route: &str) -> GitHubError {
    GitHubError::Unavailable {
        route: route.to_owned(),
        message: "bad gateway".to_owned(),
    }
}

#[test]
fn a_corrupt_or_unreadable_state_fails_the_tick_closed_before_any_write() {
    // A mergeable pull request shows that the pull-request path never ran.
    let corrupt = world(vec![1], Some("{\"acme/app\": "));
    let error = check(
        &corrupt,
        &config_with(&[]),
        NOW,
        &[
            "error: bot-state file bot-state/branch_supervisor_watermarks.json is corrupt, failing closed (the owner restores it by hand: docs/state.md, \"Recovering the state\"): not JSON: EOF while parsing a value at line 1 column 13",
        ],
    );
    assert!(matches!(error, Err(TickError::StateCorrupt { .. })));

    let no_file = world(vec![1], None);
    no_file.add_state_branch();
    let error = check(
        &no_file,
        &config_with(&[]),
        NOW,
        &[
            "error: bot-state file bot-state/branch_supervisor_watermarks.json cannot be loaded, failing closed: the bot-state branch of acme/governance exists but has no state file; the owner restores it by hand (docs/state.md, \"Recovering the state\")",
        ],
    );
    assert!(matches!(error, Err(TickError::StateUnavailable { .. })));

    let unreadable = world(vec![1], Some(&settled()));
    unreadable.fail(
        Failure::on(Endpoint::GetContents, unavailable("GET /contents/{path}"))
            .in_repo(&repo(GOV))
            .with_value(WATERMARKS_PATH),
    );
    let error = check(
        &unreadable,
        &config_with(&[]),
        NOW,
        &[
            "error: bot-state file bot-state/branch_supervisor_watermarks.json cannot be loaded, failing closed: cannot read the state file: GET /contents/{path}: bad gateway",
        ],
    );
    assert!(matches!(error, Err(TickError::StateUnavailable { .. })));
}

#[test]
fn the_first_run_creates_the_state_branch_and_the_next_tick_writes_nothing_new() {
    let fake = world(Vec::new(), None);
    let report = check(
        &fake,
        &config_with(&[]),
        NOW,
        &[
            "create branch acme/governance@bot-state at f000000",
            PUT_STATE,
            PUT_STATE,
            PUT_STATE,
            "! first run: created the bot-state branch of acme/governance at f000000",
        ],
    )
    .expect("the tick runs");
    assert_eq!(report.supervisor_metrics.bootstrapped, 2);
    assert_eq!(report.state_writes, 2, "one save per repository");
    assert_eq!(stored_state(&fake), Some(settled()));
    check(&fake, &config_with(&[]), NOW, &[]).expect("the tick runs");
}

#[test]
fn the_state_is_saved_after_each_repository() {
    let fake = world(Vec::new(), Some(&settled()));
    land(
        &fake,
        "acme/app",
        vec![commit_by("c1", "direct push", Some("mallory"))],
    );
    land(
        &fake,
        "acme/old",
        vec![commit_by("c2", "direct push", Some("mallory"))],
    );
    let report = check(
        &fake,
        &config_with(&[]),
        NOW,
        &[
            "issue acme/governance#100 [decision:unauthorized-push]: [decision:unauthorized-push] c100000",
            PUT_STATE,
            "issue acme/governance#101 [decision:unauthorized-push]: [decision:unauthorized-push] c200000",
            PUT_STATE,
        ],
    )
    .expect("the tick runs");
    assert_eq!(report.supervisor_metrics.l5_incidents, 2);
    let stored = Watermarks::parse(&stored_state(&fake).expect("saved")).expect("valid");
    assert_eq!(stored.get(&repo("acme/old"), Layer::L5), Some(&sha("c2")));
}

#[test]
fn the_final_save_runs_even_when_the_pull_request_path_ends_the_tick() {
    // A compact (valid, not canonical) state: any save rewrites it.
    let compact = format!(r#"{{"acme/app":"{}"}}"#, sha("0a"));

    let no_bot = world(vec![1], Some(&compact));
    no_bot.fail(Failure::on(
        Endpoint::GetApp,
        GitHubError::Unavailable {
            route: "GET /app".to_owned(),
            message: "bad credentials".to_owned(),
        },
    ));
    check(
        &no_bot,
        &config_with(&[]),
        NOW,
        &[
            "error: cannot learn the bot user, failing closed (receipts cannot be recognised): GET /app: bad credentials",
        ],
    )
    .expect_err("the tick fails closed");

    let limited = world(vec![1], Some(&compact));
    limited.fail(
        Failure::on(
            Endpoint::ListPullCommits,
            GitHubError::RateLimited { remaining: 0 },
        )
        .with_value("1"),
    );
    let report = check(
        &limited,
        &config_with(&[]),
        NOW,
        &[
            PUT_STATE,
            "=> acme/app#1 skipped: cannot read the pull request: rate limit exhausted: 0 calls left",
            "! primary rate limit reached at acme/app#1; the rest of the pull requests wait for the next tick",
            "! a rate limit stopped the pull-request path (see the warnings); the branch supervisor waits for the next tick",
        ],
    )
    .expect("the tick ends early without failing");
    assert!(report.supervisor.is_empty());
    assert!(report.metrics.rate_limited);

    // A secondary limit is a request to pause: no further call this tick, the state saved.
    let throttled = world(vec![1, 2], Some(&compact));
    throttled.fail(
        Failure::on(
            Endpoint::ListPullCommits,
            GitHubError::Throttled {
                retry_after_secs: 60,
            },
        )
        .with_value("1"),
    );
    let report = check(
        &throttled,
        &config_with(&[]),
        NOW,
        &[
            PUT_STATE,
            "=> acme/app#1 skipped: cannot read the pull request: secondary rate limit; retry after 60 s",
            "! GitHub's secondary rate limit at acme/app#1: no more calls this tick (GitHub asks for at least a minute's pause); 1 pull request(s) of acme/app and the repositories after it wait for the next tick",
            "! a rate limit stopped the pull-request path (see the warnings); the branch supervisor waits for the next tick",
        ],
    )
    .expect("the tick ends early without failing");
    assert!(report.supervisor.is_empty());
    assert_eq!(report.outcomes.len(), 1, "acme/app#2 is not touched");
}

#[test]
fn under_the_rate_limit_reserve_the_tick_saves_and_ends_early() {
    let fake = world(Vec::new(), Some(&settled()));
    land(
        &fake,
        "acme/app",
        vec![commit_by("c1", "direct push", Some("mallory"))],
    );
    land(
        &fake,
        "acme/old",
        vec![commit_by("c2", "direct push", Some("mallory"))],
    );
    // Other clients of the installation spend the budget down to 150 calls as the scan of
    // acme/app starts; its own calls (the branch, its log, the comparison, the incident,
    // its runs and the save) leave 143.
    fake.github
        .drop_rate_limit_at(Endpoint::ListCommits, &repo("acme/app"), 150);
    let reason = "rate-limit reserve reached: 143 calls left (reserve 200); repositories left for the next tick: 1";
    let report = check(
        &fake,
        &config_with(&[]),
        NOW,
        &[
            "issue acme/governance#100 [decision:unauthorized-push]: [decision:unauthorized-push] c100000",
            PUT_STATE,
            &format!("! {reason}"),
        ],
    )
    .expect("the tick ends early without failing");
    let json = report.metrics_json();
    assert_eq!(json["rate_limited"], true);
    assert_eq!(json["ended_early_reason"], reason);
    // At the end of the tick: the lease given back spent one more.
    assert_eq!(json["rate_limit_remaining"], 142);
    assert_eq!(json["l5_incidents"], 1);
    assert_eq!(json["l2_unsettled"], 0);
    let stored = Watermarks::parse(&stored_state(&fake).expect("saved")).expect("valid");
    assert_eq!(stored.get(&repo("acme/app"), Layer::L5), Some(&sha("c1")));
    assert_eq!(stored.get(&repo("acme/old"), Layer::L5), Some(&sha("0b")));
}

/// A tick over very many pull requests must not spend the hour before the branch
/// supervisor runs: under the pull-request path's reserve it stops before the next
/// repository, and the supervisor still gets its share.
#[test]
fn the_pull_request_path_keeps_a_reserve_for_the_supervisor() {
    let fake = world(vec![1], Some(&settled()));
    land(
        &fake,
        "acme/app",
        vec![commit_by("c1", "direct push", Some("mallory"))],
    );
    // One call under the reserve at the start; the lease and the state spend 8 before
    // the pull-request path looks (the old fake spent nothing on them).
    fake.github
        .edit_world(|w| w.rate_limit_remaining = Some(PR_PATH_RESERVE - 1));
    let report = check(
        &fake,
        &config_with(&[]),
        NOW,
        &[
            "issue acme/governance#100 [decision:unauthorized-push]: [decision:unauthorized-push] c100000",
            PUT_STATE,
            "! rate-limit reserve of the pull-request path reached: 391 calls left (reserve 400, kept for the branch supervisor and the state); repositories left for the next tick: 1",
        ],
    )
    .expect("the tick runs");
    assert!(report.outcomes.is_empty(), "no pull request was touched");
    assert_eq!(
        report.metrics_json()["l5_incidents"],
        1,
        "the supervisor ran"
    );
}

#[test]
fn a_repository_under_a_secondary_rate_limit_is_skipped_and_the_others_continue() {
    let fake = world(Vec::new(), Some(&settled()));
    land(
        &fake,
        "acme/app",
        vec![commit_by("c1", "direct push", Some("mallory"))],
    );
    land(
        &fake,
        "acme/old",
        vec![commit_by("c2", "direct push", Some("mallory"))],
    );
    fake.fail(
        Failure::on(
            Endpoint::ListCommits,
            GitHubError::Throttled {
                retry_after_secs: 30,
            },
        )
        .in_repo(&repo("acme/app")),
    );
    let report = check(
        &fake,
        &config_with(&[]),
        NOW,
        &[
            "issue acme/governance#100 [decision:unauthorized-push]: [decision:unauthorized-push] c200000",
            PUT_STATE,
            "! acme/app: scan stopped: secondary rate limit; retry after 30 s; the repository waits for the next tick",
        ],
    )
    .expect("the tick runs");
    assert_eq!(report.ended_early_reason, None);
    assert!(!report.metrics.rate_limited);
}

#[test]
fn a_stale_state_blob_is_a_warning_and_the_next_save_rereads_it() {
    let fake = world(Vec::new(), Some(&settled()));
    land(
        &fake,
        "acme/app",
        vec![commit_by("c1", "direct push", Some("mallory"))],
    );
    let stale = GitHubError::Conflict {
        what: "acme/governance bot-state/branch_supervisor_watermarks.json".to_owned(),
        message: "sha does not match".to_owned(),
    };
    fake.fail(
        Failure::on(Endpoint::PutContents, stale)
            .in_repo(&repo(GOV))
            .with_value(WATERMARKS_PATH),
    );
    let warning = "! bot-state/branch_supervisor_watermarks.json not saved (acme/governance bot-state/branch_supervisor_watermarks.json: sha does not match); the blob is re-read on the next save";
    check(
        &fake,
        &config_with(&[]),
        NOW,
        &[
            "issue acme/governance#100 [decision:unauthorized-push]: [decision:unauthorized-push] c100000",
            warning,
            warning,
            warning,
        ],
    )
    .expect("the tick goes on");
    assert_eq!(stored_state(&fake), Some(settled()), "nothing was saved");

    // Next tick: the scan repeats, the incident dedupes, and the save goes through.
    fake.github.heal();
    check(&fake, &config_with(&[]), NOW, &[PUT_STATE]).expect("the tick runs");
}

#[test]
fn the_burn_in_clock_starts_promotes_and_restarts_when_its_file_is_bad() {
    let config = config_with(&[(config::ENV_FILE, BURN_IN_ENV)]);
    let fake = world(Vec::new(), Some(&settled()));
    let report = check(&fake, &config, NOW, &[PUT_BURN_IN]).expect("the tick runs");
    assert_eq!(report.burn_in, Some(BurnInStatus::Started));
    assert_eq!(
        fake.file_text(BURN_IN_STATE_PATH).as_deref(),
        Some("{\n  \"advisory_started_at\": \"2026-03-01T12:00:00Z\"\n}\n")
    );

    let report = check(&fake, &config, "2026-03-03T12:00:00Z", &[]).expect("the tick runs");
    assert_eq!(
        report.burn_in,
        Some(BurnInStatus::Advisory {
            promotes_at: at("2026-03-04T12:00:00Z")
        })
    );

    let report =
        check(&fake, &config, "2026-03-04T12:00:00Z", &[PUT_BURN_IN]).expect("the tick runs");
    assert_eq!(report.l4_promoted, 1);
    assert_eq!(report.metrics_json()["l4_promoted"], 1);
    let report = check(&fake, &config, "2026-03-05T12:00:00Z", &[]).expect("the tick runs");
    assert_eq!(report.l4_promoted, 0, "promotion counts once");

    // A corrupt clock restarts (fail safe), unlike corrupt watermarks (fail closed).
    fake.add_file(BURN_IN_STATE_PATH, "not json");
    let report = check(&fake, &config, NOW, &[PUT_BURN_IN]).expect("the tick runs");
    assert!(
        matches!(report.burn_in, Some(BurnInStatus::Restarted { .. })),
        "{:?}",
        report.burn_in
    );
}

/// A lease file holding `scope` for `holder` until `until`.
fn lease_text(scope: &str, holder: &str, until: &str) -> String {
    format!(
        "{{\"leases\": {{\"{scope}\": {{\"holder\": \"{holder}\", \"since\": \"2026-03-01T11:59:00Z\", \"until\": \"{until}\"}}}}}}\n"
    )
}

fn run_with(
    fake: &Fake,
    options: &TickOptions,
    when: &str,
) -> (Result<FullTickReport, TickError>, Vec<String>) {
    let config = config_with(&[]);
    let result = block_on(run_tick(
        &fake.github,
        &fake.audit,
        &config,
        options,
        at(when),
    ));
    (result, fake.take_log())
}

fn lease_error(result: Result<FullTickReport, TickError>) -> Option<String> {
    match result {
        Err(error @ TickError::Lease(_)) => Some(error.to_string()),
        _ => None,
    }
}

#[test]
fn a_second_tick_finds_the_lease_held_and_writes_nothing() {
    // NOW is 12:00; another tick took the lease at 11:59 until 12:02.
    let fake = world(vec![1], Some(&settled()));
    let held = lease_text("all", "mp tick on cron-1 pid 7", "2026-03-01T12:02:00Z");
    fake.add_file(lease::LEASE_PATH, &held);
    let options = TickOptions::from_config(&config_with(&[])).with_lease_holder("me");
    let (result, log) = run_with(&fake, &options, NOW);
    assert_eq!(
        lease_error(result).as_deref(),
        Some(
            "another tick holds the lease (all, mp tick on cron-1 pid 7) until 2026-03-01T12:02:00Z"
        )
    );
    assert_eq!(log, Vec::<String>::new(), "not merged, nothing written");
    assert_eq!(fake.file_text(lease::LEASE_PATH), Some(held));

    // Once it has expired, the next tick takes it, merges, and gives it back.
    let (result, log) = run_with(&fake, &options, "2026-03-01T12:02:00Z");
    result.expect("the tick runs");
    assert_eq!(log.first().map(String::as_str), Some(TAKE_LEASE), "{log:?}");
    assert_eq!(
        log.last().map(String::as_str),
        Some(GIVE_BACK_LEASE),
        "{log:?}"
    );
    assert!(
        log.iter().any(|l| l.starts_with("merge acme/app#1")),
        "{log:?}"
    );
    assert_eq!(
        fake.file_text(lease::LEASE_PATH).as_deref(),
        Some("{\n  \"leases\": {}\n}\n"),
        "given back, the expired entry dropped"
    );
}

#[test]
fn a_hand_written_lease_that_outlasts_any_tick_holds_no_one_out() {
    // An agent with push access writes a lease until 2099: mp never takes one that long.
    let fake = world(vec![1], Some(&settled()));
    let forged = lease_text("all", "mp tick on cron-1 pid 7", "2099-01-01T00:00:00Z");
    fake.add_file(lease::LEASE_PATH, &forged);
    let options = TickOptions::from_config(&config_with(&[]));
    let (result, log) = run_with(&fake, &options, NOW);
    result.expect("the tick runs");
    assert!(
        log.iter().any(|l| l.starts_with("merge acme/app#1")),
        "{log:?}"
    );
}

#[test]
fn shards_of_one_count_share_the_lease_and_every_other_tick_waits() {
    let held = lease_text("0/2", "shard zero", "2026-03-01T12:02:00Z");
    let outcome = |options: TickOptions| {
        let fake = world(Vec::new(), Some(&settled()));
        fake.add_file(lease::LEASE_PATH, &held);
        let (result, _) = run_with(&fake, &options, NOW);
        lease_error(result).unwrap_or_else(|| "ran".to_owned())
    };
    let base = || TickOptions::from_config(&config_with(&[]));
    let shard = |text: &str| Shard::parse(text).expect("a shard");
    let held_by_zero =
        "another tick holds the lease (0/2, shard zero) until 2026-03-01T12:02:00Z".to_owned();
    assert_eq!(
        [
            outcome(base().with_shard(shard("1/2"))),
            outcome(base().with_shard(shard("0/2"))),
            outcome(base().with_shard(shard("1/3"))),
            outcome(base()),
        ],
        [
            "ran".to_owned(),
            held_by_zero.clone(),
            held_by_zero.clone(),
            held_by_zero,
        ]
    );
}

#[test]
fn a_broken_lease_file_fails_the_tick_closed() {
    let fake = world(vec![1], Some(&settled()));
    fake.add_file(lease::LEASE_PATH, "not json");
    let (result, log) = run_with(&fake, &TickOptions::from_config(&config_with(&[])), NOW);
    let error = lease_error(result).unwrap_or_default();
    assert!(
        error.starts_with("cannot take the tick lease (bot-state/lease.json): not a lease file"),
        "{error}"
    );
    assert_eq!(log, Vec::<String>::new());
}

#[test]
fn a_service_renews_its_lease_and_loses_it_only_to_another_tick_after_expiry() {
    let fake = world(Vec::new(), Some(&settled()));
    let governance = repo(GOV);
    let mut lease = block_on(lease::Lease::take(
        &fake.github,
        &governance,
        None,
        &"mp serve".into(),
        at(NOW),
    ))
    .expect("taken");
    block_on(lease.renew(&fake.github, at("2026-03-01T12:01:00Z"))).expect("renewed");
    let text = fake.file_text(lease::LEASE_PATH).expect("a lease file");
    assert!(
        text.contains("\"until\": \"2026-03-01T12:04:00Z\""),
        "{text}"
    );
    fake.take_log();
    // A cron tick at 12:03:30 finds it held: the renewal counted.
    let options = TickOptions::from_config(&config_with(&[]));
    let (result, log) = run_with(&fake, &options, "2026-03-01T12:03:30Z");
    assert!(lease_error(result).is_some());
    assert_eq!(log, Vec::<String>::new());

    // Not renewed in time: a cron tick takes it over, and the service's renewal says so.
    let (result, _) = run_with(
        &fake,
        &options.clone().with_lease_holder("cron"),
        "2026-03-01T12:04:00Z",
    );
    result.expect("the cron tick runs");
    let cron = lease_text("all", "cron", "2026-03-01T12:06:00Z");
    fake.add_file(lease::LEASE_PATH, &cron);
    let error =
        block_on(lease.renew(&fake.github, at("2026-03-01T12:03:59Z"))).expect_err("taken over");
    assert_eq!(
        error.to_string(),
        "the tick lease (all) was lost: cron holds it until 2026-03-01T12:06:00Z; stopping before the next write"
    );
}

#[test]
fn a_tick_under_a_held_lease_neither_takes_nor_gives_it_back() {
    let fake = world(vec![1], Some(&settled()));
    let held = lease_text("all", "mp serve", "2026-03-01T12:02:00Z");
    fake.add_file(lease::LEASE_PATH, &held);
    let options = TickOptions::from_config(&config_with(&[])).with_lease_held();
    let (result, log) = run_with(&fake, &options, NOW);
    result.expect("the tick runs");
    assert!(
        log.iter().all(|l| !l.contains(lease::LEASE_PATH)),
        "{log:?}"
    );
    assert!(
        log.iter().any(|l| l.starts_with("merge acme/app#1")),
        "{log:?}"
    );
    assert_eq!(fake.file_text(lease::LEASE_PATH), Some(held));
}

/// A virtual clock that moves `step` seconds on every reading, from NOW.
struct Stepping {
    readings: Mutex<i64>,
    step: i64,
}

impl mp_core::port::Clock for Stepping {
    fn now(&self) -> Timestamp {
        let mut readings = self
            .readings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *readings += 1;
        at(NOW).plus_seconds(*readings * self.step)
    }
}

fn stepping(step: i64) -> std::sync::Arc<dyn mp_core::port::Clock> {
    std::sync::Arc::new(Stepping {
        readings: Mutex::new(0),
        step,
    })
}

const RENEW_LEASE: &str =
    "put acme/governance@bot-state bot-state/lease.json: chore(bot-state): renew the tick lease";

#[test]
fn a_long_tick_renews_its_lease_between_steps_and_repositories() {
    let fake = world(vec![1], Some(&settled()));
    // Each look at the clock is 20 s later: a third of the 3-minute lease passes every
    // third look (the tick looks before every step, repository, pull request and write).
    let options = TickOptions::from_config(&config_with(&[])).with_lease_clock(stepping(20));
    let (result, log) = run_with(&fake, &options, NOW);
    result.expect("the tick runs");
    let renewals = log.iter().filter(|l| *l == RENEW_LEASE).count();
    assert!(
        renewals >= 3,
        "renewed before each step and repository: {log:?}"
    );
    assert_eq!(log.first().map(String::as_str), Some(TAKE_LEASE), "{log:?}");
    assert_eq!(
        log.last().map(String::as_str),
        Some(GIVE_BACK_LEASE),
        "{log:?}"
    );
    assert!(
        log.iter().any(|l| l.starts_with("merge acme/app#1")),
        "{log:?}"
    );
}

#[test]
fn a_tick_frozen_past_its_lease_stops_before_its_next_write() {
    let fake = world(vec![1], Some(&settled()));
    // The first look at the clock after taking the lease is 200 s later: it has expired.
    let options = TickOptions::from_config(&config_with(&[])).with_lease_clock(stepping(200));
    let (result, log) = run_with(&fake, &options, NOW);
    let error = lease_error(result).unwrap_or_default();
    assert!(
        error.starts_with("the tick lease (all) was lost: it expired at 2026-03-01T12:03:00Z"),
        "{error}"
    );
    assert_eq!(
        log,
        vec![TAKE_LEASE.to_owned()],
        "nothing after the lease: no merge, no save, no give-back"
    );
}

/// `mp serve`'s resync in two parts (decisions/0066): the global part visits no
/// repository, and a repository's pass decides what the whole tick decides for it.
#[test]
fn the_global_part_visits_no_repository_and_a_repository_pass_decides_as_the_tick() {
    let config = config_with(&[]);
    let prepare = || {
        let fake = world(vec![1], Some(&settled()));
        land(
            &fake,
            "acme/old",
            vec![commit_by("c2", "direct push", Some("mallory"))],
        );
        fake
    };
    let whole = prepare();
    let options = TickOptions::from_config(&config);
    let full = block_on(run_tick(
        &whole.github,
        &whole.audit,
        &config,
        &options,
        at(NOW),
    ))
    .expect("the whole tick runs");
    assert!(
        full.outcomes.iter().any(|o| o.pr == "acme/app#1"),
        "{full:?}"
    );
    assert_eq!(full.supervisor_metrics.l5_incidents, 1);

    let parts = prepare();
    let global = block_on(run_tick(
        &parts.github,
        &parts.audit,
        &config,
        &options.clone().with_global_work_only(),
        at(NOW),
    ))
    .expect("the global part runs");
    assert!(global.outcomes.is_empty(), "{global:?}");
    assert!(
        global.supervisor.is_empty(),
        "no branch supervisor: {global:?}"
    );
    let writes = without_lease(parts.take_log());
    assert!(writes.is_empty(), "nothing to write: {writes:?}");

    let pass = block_on(run_repository_pass(
        &parts.github,
        &parts.audit,
        &config,
        &options.with_repos(vec![repo("acme/app")]),
        at(NOW),
    ))
    .expect("the repository pass runs");
    let shown = |report: &FullTickReport| -> Vec<String> {
        report
            .outcomes
            .iter()
            .filter(|o| o.pr.starts_with("acme/app#"))
            .map(ToString::to_string)
            .collect()
    };
    assert_eq!(shown(&pass), shown(&full));
    assert!(pass.supervisor.is_empty(), "the caller supervises");
    assert_eq!(
        stored_state(&parts),
        Some(settled()),
        "a pass loads and saves no watermarks"
    );
}

/// The index of the first and of the last line of `log` naming a write to `acme/app`.
fn app_writes(log: &[String]) -> (usize, usize) {
    let writes: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(_, line)| line.contains("acme/app"))
        .map(|(index, _)| index)
        .collect();
    (
        writes.first().copied().unwrap_or_default(),
        writes.last().copied().unwrap_or_default(),
    )
}

#[test]
fn a_long_pull_request_step_renews_the_lease_between_pull_requests_and_keeps_it() {
    let fake = world(vec![1, 2, 3, 4], Some(&settled()));
    // 20 s a look: the pull-request step alone lasts several renewal periods.
    let options = TickOptions::from_config(&config_with(&[])).with_lease_clock(stepping(20));
    let (result, log) = run_with(&fake, &options, NOW);
    let report = result.expect("the tick keeps its lease throughout");
    let (first, last) = app_writes(&log);
    let inside = log[first..last]
        .iter()
        .filter(|line| *line == RENEW_LEASE)
        .count();
    assert!(
        inside >= 2,
        "renewed inside the pull-request step: {log:#?}"
    );
    assert_eq!(report.metrics.merged, 1, "{log:#?}");
    assert_eq!(
        log.last().map(String::as_str),
        Some(GIVE_BACK_LEASE),
        "{log:#?}"
    );
}

/// A clock that moves `step` seconds on every reading and, at its first reading (the
/// tick's first look after taking its lease), makes every later write of the lease file
/// fail as GitHub unavailable.
struct FailingRenewals {
    fake: std::sync::Arc<Fake>,
    readings: Mutex<i64>,
    step: i64,
}

impl mp_core::port::Clock for FailingRenewals {
    fn now(&self) -> Timestamp {
        let mut readings = self
            .readings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *readings == 0 {
            self.fake.fail(
                Failure::on(Endpoint::PutContents, unavailable("PUT /contents/{path}"))
                    .with_value(lease::LEASE_PATH),
            );
        }
        *readings += 1;
        at(NOW).plus_seconds(*readings * self.step)
    }
}

#[test]
fn a_tick_that_cannot_renew_its_lease_stops_writing_at_the_renew_deadline() {
    let fake = std::sync::Arc::new(world(vec![1, 2, 3, 4], Some(&settled())));
    let clock = FailingRenewals {
        fake: fake.clone(),
        readings: Mutex::new(0),
        step: 20,
    };
    let options =
        TickOptions::from_config(&config_with(&[])).with_lease_clock(std::sync::Arc::new(clock));
    let (result, log) = run_with(&fake, &options, NOW);
    let error = lease_error(result).unwrap_or_default();
    assert!(
        error.starts_with("the tick lease (all) was lost: not renewed within the renew deadline"),
        "{error}"
    );
    // Renewals failed from the first look on: the tick wrote only within the first two
    // minutes (six looks), then nothing: no later pull request, no save, no give-back.
    assert_eq!(
        log.first().map(String::as_str),
        Some(TAKE_LEASE),
        "{log:#?}"
    );
    assert!(
        log.iter().all(|line| line != RENEW_LEASE
            && line != GIVE_BACK_LEASE
            && line != PUT_STATE
            && !line.contains("acme/app#4")),
        "{log:#?}"
    );
}

#[test]
fn a_killed_ticks_lease_holds_the_next_tick_off_for_at_most_one_short_lease() {
    // A tick on another machine took the default three-minute lease at NOW and was killed
    // (no give-back, no renewal): its entry stays.
    let fake = world(vec![1], Some(&settled()));
    let terms = lease::LeaseTerms::default();
    let until = at(NOW).plus_seconds(terms.seconds());
    let dead = format!(
        "{{\"leases\": {{\"all\": {{\"holder\": \"tick@lost-runner\", \"since\": \"{NOW}\", \"until\": \"{until}\", \"incarnation\": {{\"host\": \"lost-runner\", \"pid\": 7, \"started\": \"x\"}}}}}}}}\n"
    );
    fake.add_file(lease::LEASE_PATH, &dead);
    fake.take_log();
    let options = TickOptions::from_config(&config_with(&[]))
        .with_lease_holder("tick@next-runner")
        .with_lease_terms(terms);
    // A second before it expires: held, nothing written.
    let (result, log) = run_with(&fake, &options, &at(NOW).plus_seconds(179).to_string());
    assert!(
        lease_error(result)
            .unwrap_or_default()
            .starts_with("another tick holds the lease (all, tick@lost-runner"),
        "{log:?}"
    );
    assert!(log.is_empty(), "{log:?}");
    // One lease duration after the killed tick's last renewal: the next tick runs.
    let (result, log) = run_with(&fake, &options, &until.to_string());
    result.expect("the lease has expired");
    assert!(
        log.iter().any(|l| l.starts_with("merge acme/app#1")),
        "{log:?}"
    );
}

#[test]
fn the_pull_request_path_leaves_the_repositories_past_its_time_budget_for_the_next_tick() {
    let fake = world(vec![1], Some(&settled()));
    // 20 s a look at the clock, a budget of 10 s: the first repository runs, the second
    // waits for the next tick.
    // Both repositories gated.
    let config = config_with(&[(
        config::PROJECTS_FILE,
        "governance_repo: acme/governance\nsupervised_repos: [acme/app, acme/old]\n",
    )]);
    let options = TickOptions::from_config(&config)
        .with_lease_clock(stepping(20))
        .with_pr_path_budget(std::time::Duration::from_secs(10));
    let result = block_on(run_tick(
        &fake.github,
        &fake.audit,
        &config,
        &options,
        at(NOW),
    ));
    let log = fake.take_log();
    let report = result.expect("the tick runs");
    assert!(
        report.warnings.iter().any(|w| w
            .starts_with("time budget of the pull-request path reached after")
            && w.ends_with("repositories left for the next tick: 1")),
        "{:#?}",
        report.warnings
    );
    assert!(
        log.iter().any(|l| l.starts_with("merge acme/app#1")),
        "{log:?}"
    );
    // The supervisor still runs, and the state is saved.
    assert!(log.iter().any(|l| l == PUT_STATE), "{log:?}");
}

/// A clock frozen at NOW until the in-memory GitHub has been asked `endpoint` about
/// `repo`, then `jump` seconds later: a tick that froze (or was stopped) in the middle
/// of a step, after that step's last renewal of its lease.
struct JumpsAfter {
    github: std::sync::Arc<MemoryGitHub>,
    endpoint: Endpoint,
    repo: RepoName,
    jump: i64,
}

impl mp_core::port::Clock for JumpsAfter {
    fn now(&self) -> Timestamp {
        let asked =
            self.github.call_log().iter().any(|call| {
                call.endpoint == self.endpoint && call.repo.as_ref() == Some(&self.repo)
            });
        at(NOW).plus_seconds(if asked { self.jump } else { 0 })
    }
}

/// The branch supervisor's writes go through the lease's fence one by one
/// (decisions/0077): a tick whose clock passes the renew deadline while the supervisor
/// scans `acme/old` (after the step renewed its lease) writes neither the incident nor
/// anything after it, and never calls GitHub for them. With the clock frozen it does.
#[test]
fn the_supervisor_writes_nothing_past_the_renew_deadline_inside_its_step() {
    let run = |jump: i64| {
        let fake = world(vec![1], Some(&settled()));
        land(
            &fake,
            "acme/old",
            vec![commit_by("c2", "direct push", Some("mallory"))],
        );
        let github = std::sync::Arc::new(fake.github);
        github.log_calls();
        let clock = JumpsAfter {
            github: github.clone(),
            endpoint: Endpoint::ListCommits,
            repo: repo("acme/old"),
            jump,
        };
        let options = TickOptions::from_config(&config_with(&[]))
            .with_lease_clock(std::sync::Arc::new(clock));
        let result = block_on(run_tick(
            github.as_ref(),
            &NoAudit,
            &config_with(&[]),
            &options,
            at(NOW),
        ));
        let writes: Vec<String> = github
            .actions()
            .iter()
            .map(crate::testkit::write_line)
            .collect();
        let issue_calls = github
            .call_log()
            .iter()
            .filter(|call| call.endpoint == Endpoint::CreateIssue)
            .count();
        (result, writes, issue_calls)
    };
    // Frozen: the supervisor opens its incident for the direct push on acme/old.
    let (result, frozen, issue_calls) = run(0);
    result.expect("the tick runs");
    let incident = frozen
        .iter()
        .position(|w| w.starts_with("issue acme/governance#"))
        .unwrap_or_else(|| panic!("no incident: {frozen:#?}"));
    assert_eq!(issue_calls, 1);
    // 130 s pass inside the scan of acme/old: past the renew deadline (two thirds of the
    // three-minute lease), the incident is refused before GitHub is called, and the tick
    // stops there: what it wrote is what the frozen tick wrote before the incident (no
    // state save after it, no give-back).
    let (result, writes, issue_calls) = run(130);
    let error = lease_error(result).unwrap_or_default();
    assert!(
        error.starts_with("the tick lease (all) was lost: not renewed within the renew deadline"),
        "{error}"
    );
    assert_eq!(issue_calls, 0, "{writes:#?}");
    assert_eq!(writes, frozen[..incident], "{frozen:#?}");
}
