//! Tests for the branch supervisor: each case runs the supervisor over `acme/app` on the
//! in-memory GitHub and compares the ordered writes (its action log), the events (`=>`),
//! the warnings (`!`) and the resulting watermarks.

use super::*;
use crate::testkit::{
    BOT, at, block_on, check_run, commit_by, config_with, login, merged, repo, sha,
};
use mp_core::branch::IncidentKey;
use mp_core::config::{self, Config};
use mp_core::context::{CheckRun, PrState, RefUpdate, RefUpdateKind};
use mp_core::ids::PrNumber;
use mp_core::port::IssueState;
use mp_github_fake::world::{Commit, IssueRecord, Pull, Repo, commit_sha};
use mp_github_fake::{Endpoint, Failure, MemoryGitHub};

const APP: &str = "acme/app";
const GOV: &str = "acme/governance";
/// The commit both watermarks start at.
const BASE: &str = "1";
const NOW: &str = "2026-03-01T12:00:00Z";
/// The incident's body updated with the auto-revert note, as the action log shows it.
const UPDATED_100: &str = "update body of acme/governance#100: **Post-merge re-validation failed** on `acme/app` at `c100000`.";
const AUTO_REVERT_ENV: &str =
    "bot_app_slug: mp-gate\nrequired_checks: [test]\nmerge_enabled: true\nauto_revert_pr: true\n";

/// The in-memory GitHub, the configuration, the watermarks and the per-tick run.
struct World {
    github: MemoryGitHub,
    /// How many of GitHub's writes earlier checks compared.
    seen: usize,
    config: Config,
    state: Watermarks,
    run: SupervisorRun,
}

/// A world commit made of a port commit, with `checks`.
fn commit_of(context: &CommitContext, checks: Vec<CheckRun>) -> Commit {
    Commit {
        id: context.sha.to_string(),
        sha: context.sha.clone(),
        message: context.message(),
        parents: context.parents.clone(),
        author: context.author_login.clone(),
        committer: context.committer_login.clone(),
        date: context.committed_at,
        checks,
        check_workflows: Default::default(),
    }
}

/// A closed issue numbered `number`, so that the next one GitHub numbers is one more.
fn earlier_issue(number: u64) -> IssueRecord {
    IssueRecord {
        number: PrNumber::new(number),
        title: "an earlier issue".to_owned(),
        body: String::new(),
        author: Some(login("alice")),
        state: IssueState::Closed,
        labels: Vec::new(),
        events: Vec::new(),
        comments: Vec::new(),
        reactions: Vec::new(),
        created_at: None,
    }
}

/// `acme/app` whose `main` is the base commit (of 1 February) then `new` (oldest first, a commit without
/// parents on the one before it), each new commit with a green `test` run, and whose next
/// pull request is `#500`; both watermarks at the base; the governance repository has a
/// `main` without ADRs, and its next issue is `#100`.
fn world(new: Vec<CommitContext>) -> World {
    let mut app = Repo::new(repo(APP));
    // Older than every commit the tests add, as a base is.
    let mut base = merged(BASE, "chore: base");
    base.committed_at = Some(at("2026-02-01T10:00:00Z"));
    let mut head = base.sha.clone();
    app.commits.push(commit_of(&base, Vec::new()));
    for mut commit in new {
        if commit.parents.is_empty() {
            commit.parents.push(head.clone());
        }
        head = commit.sha.clone();
        app.commits
            .push(commit_of(&commit, vec![check_run("test", "success")]));
    }
    app.branches.insert("main".to_owned(), head);
    app.issues.push(earlier_issue(499));
    let mut governance = Repo::new(repo(GOV));
    let readme = merged("9", "docs: governance");
    governance.commits.push(commit_of(&readme, Vec::new()));
    governance.branches.insert("main".to_owned(), readme.sha);
    governance
        .files
        .insert("README.md".to_owned(), "governance\n".to_owned());
    governance.issues.push(earlier_issue(99));
    let mut github = mp_github_fake::World::new(at(NOW), "mp-gate");
    github.repos = vec![app, governance];
    let mut state = Watermarks::new();
    for layer in Layer::ALL {
        state.set(&repo(APP), layer, sha(BASE));
    }
    World {
        github: MemoryGitHub::new(github),
        seen: 0,
        config: config_with(&[]),
        state,
        run: SupervisorRun::new(login(BOT)),
    }
}

impl World {
    fn with_config(mut self, replaced: &[(&str, &str)]) -> Self {
        self.config = config_with(replaced);
        self
    }

    /// A fresh per-tick run (budget and caches), as the next tick would have.
    fn next_tick(&mut self) {
        self.run = SupervisorRun::new(login(BOT));
    }

    /// Changes repository `name` as someone other than the bot would.
    fn edit<R>(&self, name: &str, edit: impl FnOnce(&mut Repo) -> R) -> R {
        self.github.edit_world(|world| {
            edit(
                world
                    .repo_mut(&repo(name))
                    .expect("a repository of the world"),
            )
        })
    }

    /// Puts a file on the default branch of repository `name`.
    fn add_file(&self, name: &str, path: &str, text: &str) {
        self.edit(name, |r| r.files.insert(path.to_owned(), text.to_owned()));
    }

    /// Replaces the check runs of commit `prefix` of `acme/app`.
    fn set_checks(&self, prefix: &str, runs: Vec<CheckRun>) {
        self.edit(APP, |r| {
            let commit = r
                .commits
                .iter_mut()
                .find(|c| c.sha == sha(prefix))
                .expect("a commit of acme/app");
            commit.checks = runs;
        });
    }

    fn body_of(&self, number: u64) -> String {
        self.github.read(|world| {
            world
                .repo(&repo(GOV))
                .and_then(|r| r.issue(PrNumber::new(number)))
                .map(|i| i.body.clone())
                .unwrap_or_default()
        })
    }

    /// GitHub's writes since the last call: an issue as `issue <repo>#<n> [<labels>]:
    /// <title>`, any other write as the action log shows it.
    fn take_writes(&mut self) -> Vec<String> {
        let actions = self.github.actions();
        let new = actions[self.seen..]
            .iter()
            .map(crate::testkit::write_line)
            .collect();
        self.seen = actions.len();
        new
    }
}

fn short_mark(state: &Watermarks, layer: Layer) -> String {
    state
        .get(&repo(APP), layer)
        .map_or_else(|| "-".to_owned(), |sha| sha.short().to_owned())
}

/// Runs the supervisor over `acme/app` at `when` and compares the writes logged since the
/// last run, the events, the warnings and the watermarks with `expected`.
#[track_caller]
fn check(world: &mut World, when: &str, expected: &[&str]) -> SupervisorReport {
    let report = block_on(run_branch_supervisor(
        &world.github,
        &world.config,
        &mut world.state,
        &repo(APP),
        &mut world.run,
        at(when),
    ));
    let mut lines = world.take_writes();
    lines.extend(report.events.iter().map(|e| format!("=> {e}")));
    lines.extend(report.warnings.iter().map(|w| format!("! {w}")));
    lines.push(format!(
        "state: l5={} l2={} unsettled={} pending={}",
        short_mark(&world.state, Layer::L5),
        short_mark(&world.state, Layer::L2),
        world.state.unsettled_count(),
        world.state.pending_break_glass(&repo(APP)).len(),
    ));
    assert_eq!(lines, expected);
    report
}

fn failing(world: &World, prefix: &str, state: &str) {
    world.set_checks(prefix, vec![check_run("test", state)]);
}

#[test]
fn a_repository_seen_for_the_first_time_bootstraps_at_head_and_scans_nothing() {
    let mut w = world(vec![
        commit_by("c1", "[break-glass-outage] hotfix", Some("mallory")),
        commit_by("c2", "direct push", Some("mallory")),
    ]);
    w.state = Watermarks::new();
    let report = check(
        &mut w,
        NOW,
        &[
            "=> bootstrapped l5, l2 at c200000; nothing older is scanned",
            "state: l5=c200000 l2=c200000 unsettled=0 pending=0",
        ],
    );
    assert_eq!(report.metrics.bootstrapped, 1);
    assert_eq!(report.metrics.l5_commits + report.metrics.l2_commits, 0);

    // Only the missing layer bootstraps; the other one scans as usual.
    let mut w = world(vec![commit_by("c1", "direct push", Some("mallory"))]);
    w.state = Watermarks::new();
    w.state.set(&repo(APP), Layer::L5, sha(BASE));
    check(
        &mut w,
        NOW,
        &[
            "issue acme/governance#100 [decision:unauthorized-push]: [decision:unauthorized-push] c100000",
            "=> bootstrapped l2 at c100000; nothing older is scanned",
            "=> decision:unauthorized-push c100000: opened acme/governance#100",
            "state: l5=c100000 l2=c100000 unsettled=0 pending=0",
        ],
    );
}

#[test]
fn an_incident_held_back_by_the_issue_cap_holds_the_watermark_until_it_is_opened() {
    let mut w = world(vec![commit_by(
        "c1",
        "direct push\n\nSee `docs/ghost.md` for details.",
        Some("mallory"),
    )]);
    w.run = SupervisorRun::new(login(BOT)).with_issue_budget(1);
    let report = check(
        &mut w,
        NOW,
        &[
            "issue acme/governance#100 [decision:unauthorized-push]: [decision:unauthorized-push] c100000",
            "=> decision:unauthorized-push c100000: opened acme/governance#100",
            "=> decision:hallucination-detected c100000: deferred (the per-tick cap of 30 new issues is reached)",
            "state: l5=1000000 l2=c100000 unsettled=0 pending=0",
        ],
    );
    assert_eq!(
        (report.metrics.l5_incidents, report.metrics.issues_deferred),
        (1, 1)
    );
    assert_eq!(w.run.issues_left(), 0);

    w.next_tick();
    check(
        &mut w,
        NOW,
        &[
            "issue acme/governance#101 [decision:hallucination-detected]: [decision:hallucination-detected] c100000",
            "=> decision:unauthorized-push c100000: already reported as acme/governance#100 (open)",
            "=> decision:hallucination-detected c100000: opened acme/governance#101",
            "state: l5=c100000 l2=c100000 unsettled=0 pending=0",
        ],
    );
}

#[test]
fn several_offenders_of_one_label_roll_up_into_one_issue() {
    let mut w = world(vec![
        commit_by("c1", "direct push one", Some("mallory")),
        commit_by("c2", "direct push two", None),
    ]);
    let key = IncidentKey::rollup(&repo(APP), &[sha("c1"), sha("c2")]);
    check(
        &mut w,
        NOW,
        &[
            &format!(
                "issue acme/governance#100 [decision:unauthorized-push]: [decision:unauthorized-push] {key}"
            ),
            &format!("=> decision:unauthorized-push {key}: opened acme/governance#100"),
            "state: l5=c200000 l2=c200000 unsettled=0 pending=0",
        ],
    );
    let body = w.body_of(100);
    assert!(body.contains("**2 commits on `acme/app` raised `decision:unauthorized-push`"));
    assert!(body.contains("- landed by: `unknown` (push"), "{body}");
}

#[test]
fn at_most_100_commits_per_layer_are_processed_and_the_rest_wait() {
    let new: Vec<CommitContext> = (1..=105)
        .map(|i| merged(&format!("d{i:03x}"), &format!("chore: step {i}")))
        .collect();
    let mut w = world(new);
    let report = check(
        &mut w,
        NOW,
        &["state: l5=d064000 l2=d064000 unsettled=0 pending=0"],
    );
    assert_eq!(
        (
            report.metrics.l5_commits,
            report.metrics.l2_commits,
            report.metrics.commits_deferred
        ),
        (100, 100, 10)
    );
    check(
        &mut w,
        NOW,
        &["state: l5=d069000 l2=d069000 unsettled=0 pending=0"],
    );
}

#[test]
fn an_unsettled_commit_stops_l2_until_it_settles_or_stalls_after_24_hours() {
    let mut w = world(vec![merged("c1", "feat: one"), merged("c2", "feat: two")]);
    failing(&w, "c1", "cancelled");
    let waiting = "=> l2 c100000: post-merge re-validation unsettled: check 'test' was cancelled; unsettled since 2026-03-01T12:00:00Z; escalates at 2026-03-02T12:00:00Z (24 h)";
    let report = check(
        &mut w,
        NOW,
        &[
            waiting,
            "state: l5=c200000 l2=1000000 unsettled=1 pending=0",
        ],
    );
    assert_eq!(report.metrics.l2_commits, 1, "c2 waits behind c1");
    assert_eq!(
        w.state.unsettled_since(&repo(APP), &sha("c1")),
        Some(at(NOW))
    );
    check(
        &mut w,
        "2026-03-02T11:59:59Z",
        &[
            waiting,
            "state: l5=c200000 l2=1000000 unsettled=1 pending=0",
        ],
    );
    check(
        &mut w,
        "2026-03-02T12:00:00Z",
        &[
            "issue acme/governance#100 [decision:l2-stalled]: [decision:l2-stalled] c100000",
            "=> decision:l2-stalled c100000: opened acme/governance#100",
            "state: l5=c200000 l2=c200000 unsettled=0 pending=0",
        ],
    );
    assert!(w.body_of(100).contains("since `2026-03-01T12:00:00Z`"));
}

#[test]
fn an_unsettled_commit_that_turns_green_settles_and_l2_moves_on() {
    let mut w = world(vec![merged("c1", "feat: one"), merged("c2", "feat: two")]);
    failing(&w, "c1", "in_progress");
    check(
        &mut w,
        NOW,
        &[
            "=> l2 c100000: post-merge re-validation unsettled: check 'test' has not completed (status in_progress); unsettled since 2026-03-01T12:00:00Z; escalates at 2026-03-02T12:00:00Z (24 h)",
            "state: l5=c200000 l2=1000000 unsettled=1 pending=0",
        ],
    );
    failing(&w, "c1", "success");
    check(
        &mut w,
        NOW,
        &["state: l5=c200000 l2=c200000 unsettled=0 pending=0"],
    );
}

#[test]
fn a_real_failure_opens_one_incident_with_recovery_instructions_and_settles() {
    let mut w = world(vec![merged("c1", "feat: one")]);
    failing(&w, "c1", "failure");
    let report = check(
        &mut w,
        NOW,
        &[
            "issue acme/governance#100 [decision:post-merge-revalidation]: [decision:post-merge-revalidation] c100000",
            "=> decision:post-merge-revalidation c100000: opened acme/governance#100",
            "state: l5=c100000 l2=c100000 unsettled=0 pending=0",
        ],
    );
    assert_eq!(report.metrics.l2_incidents, 1);
    let body = w.body_of(100);
    assert!(body.contains("- check 'test' failed with conclusion failure"));
    assert!(body.contains(&format!("git revert {}", sha("c1"))));
    assert!(body.ends_with("<!-- merge-gate:dedupe:c100000 -->"));
}

#[test]
fn auto_revert_opens_an_unlabelled_revert_pull_request_for_a_single_parent_commit() {
    let mut w =
        world(vec![merged("c1", "feat: one")]).with_config(&[(config::ENV_FILE, AUTO_REVERT_ENV)]);
    failing(&w, "c1", "failure");
    let note = "**Auto-revert:** opened acme/app#500 from branch `revert/c100000` to revert `c100000`. It goes through the normal gate and is never labelled `ready-to-merge`; the owner may fast-track it with `decision:auto-revert`.";
    let report = check(
        &mut w,
        NOW,
        &[
            "issue acme/governance#100 [decision:post-merge-revalidation]: [decision:post-merge-revalidation] c100000",
            &format!(
                "push revert acme/app@revert/c100000: {} reverts c100000",
                commit_sha(&repo(APP), "revert of c100000").short()
            ),
            "open pull request acme/app#500: Revert bad commit c100000 (post-merge re-validation) (revert/c100000 -> main)",
            UPDATED_100,
            "=> decision:post-merge-revalidation c100000: opened acme/governance#100",
            &format!("=> auto-revert c100000: {note}"),
            "state: l5=c100000 l2=c100000 unsettled=0 pending=0",
        ],
    );
    assert_eq!(report.metrics.auto_revert_prs, 1);
    assert!(
        w.body_of(100)
            .ends_with(&format!("{note}\n\n<!-- merge-gate:dedupe:c100000 -->"))
    );
    let message = w.github.read(|world| {
        let app = world.repo(&repo(APP)).expect("acme/app");
        let head = app
            .branch_head("revert/c100000")
            .expect("the revert branch");
        app.commit(head)
            .map(|c| c.message.clone())
            .unwrap_or_default()
    });
    assert_eq!(
        message,
        format!(
            "Revert \"feat: one\"\n\nThis reverts commit {}.\n\nAgent-Tool: github-actions\nAgent-Model: n/a\nAgent-Session: s_bot-revert\nAgent-Machine: bot\nTask-Ref: Issue#100",
            sha("c1")
        )
    );
}

#[test]
fn auto_revert_fails_closed_for_a_merge_commit_or_unreadable_parents() {
    let mut merge = merged("c1", "Merge branch 'x'");
    merge.parents = vec![sha(BASE), sha("e1")];
    let mut w = world(vec![merge]).with_config(&[(config::ENV_FILE, AUTO_REVERT_ENV)]);
    // The merged side: one green commit on the base, which the merge brought too.
    let mut side = merged("e1", "feat: side");
    side.parents = vec![sha(BASE)];
    w.edit(APP, |r| {
        r.commits
            .insert(1, commit_of(&side, vec![check_run("test", "success")]));
    });
    failing(&w, "c1", "failure");
    let note = "Auto-revert PR **not** created (stage: `multi-parent-merge`). Falling back to incident-only: automatic revert refused: merge commit with 2 parents (1000000, e100000); inspect with `git show --format=%P <sha>`, verify the mainline parent and run `git revert -m N <sha>` by hand";
    let report = check(
        &mut w,
        NOW,
        &[
            "issue acme/governance#100 [decision:post-merge-revalidation]: [decision:post-merge-revalidation] c100000",
            UPDATED_100,
            "=> decision:post-merge-revalidation c100000: opened acme/governance#100",
            &format!("=> auto-revert c100000: {note}"),
            "state: l5=c100000 l2=c100000 unsettled=0 pending=0",
        ],
    );
    assert_eq!(report.metrics.auto_revert_prs, 0);
    let body = w.body_of(100);
    assert!(
        body.contains(&format!("git revert -m N {}", sha("c1"))),
        "{body}"
    );
    assert!(body.contains(note));

    let mut w =
        world(vec![merged("c1", "feat: one")]).with_config(&[(config::ENV_FILE, AUTO_REVERT_ENV)]);
    failing(&w, "c1", "failure");
    w.github.fail(
        Failure::on(
            Endpoint::GetCommit,
            GitHubError::Unavailable {
                route: "GET /commits/{sha}".to_owned(),
                message: "bad gateway".to_owned(),
            },
        )
        .in_repo(&repo(APP)),
    );
    check(
        &mut w,
        NOW,
        &[
            "issue acme/governance#100 [decision:post-merge-revalidation]: [decision:post-merge-revalidation] c100000",
            UPDATED_100,
            "=> decision:post-merge-revalidation c100000: opened acme/governance#100",
            "=> auto-revert c100000: Auto-revert PR **not** created (stage: `parent-inspection`). Falling back to incident-only: automatic revert refused: the commit's parents could not be read, so a single parent is not proven (GET /commits/{sha}: bad gateway); follow the recovery instructions above",
            "state: l5=c100000 l2=c100000 unsettled=0 pending=0",
        ],
    );
}

#[test]
fn a_break_glass_commit_needs_an_allowlisted_pusher_and_an_adr_naming_its_sha_in_time() {
    let glass = |committer: &str| {
        let mut commit = commit_by(
            "c1",
            "[break-glass-outage] restart workers",
            Some(committer),
        );
        commit.committed_at = Some(at("2026-02-27T10:00:00Z"));
        commit
    };
    // Allowlisted, no ADR, deadline passed.
    let mut w = world(vec![glass("alice")]);
    check(
        &mut w,
        NOW,
        &[
            "issue acme/governance#100 [decision:break-glass-unaudited]: [decision:break-glass-unaudited] c100000",
            "=> decision:break-glass-unaudited c100000: opened acme/governance#100",
            "state: l5=c100000 l2=c100000 unsettled=0 pending=0",
        ],
    );
    assert!(w.body_of(100).contains(
        "the 24-hour deadline counted from its push at 2026-02-27T10:00:00Z (GitHub's activity log) has passed"
    ));

    // Allowlisted, with an ADR naming only the short SHA: a prefix names nothing.
    let mut w = world(vec![glass("alice")]);
    w.add_file(
        GOV,
        "docs/decisions/0007-outage.md",
        "# Outage\n\nWorkers restarted in c100000.\n",
    );
    check(
        &mut w,
        NOW,
        &[
            "issue acme/governance#100 [decision:break-glass-unaudited]: [decision:break-glass-unaudited] c100000",
            "=> decision:break-glass-unaudited c100000: opened acme/governance#100",
            "state: l5=c100000 l2=c100000 unsettled=0 pending=0",
        ],
    );

    // Allowlisted, with an ADR naming the full SHA.
    let mut w = world(vec![glass("alice")]);
    w.add_file(
        GOV,
        "docs/decisions/0007-outage.md",
        &format!("# Outage\n\nWorkers restarted in {}.\n", sha("c1")),
    );
    check(
        &mut w,
        NOW,
        &["state: l5=c100000 l2=c100000 unsettled=0 pending=0"],
    );

    // Not allowlisted: no ADR lookup needed.
    let mut w = world(vec![glass("mallory")]);
    check(
        &mut w,
        NOW,
        &[
            "issue acme/governance#100 [decision:break-glass-unauthorized]: [decision:break-glass-unauthorized] c100000",
            "=> decision:break-glass-unauthorized c100000: opened acme/governance#100",
            "state: l5=c100000 l2=c100000 unsettled=0 pending=0",
        ],
    );
}

#[test]
fn a_break_glass_commit_inside_its_deadline_is_audited_again_until_settled() {
    let mut commit = commit_by("c1", "[break-glass-outage] restart workers", Some("alice"));
    commit.committed_at = Some(at("2026-03-01T11:00:00Z"));
    let mut w = world(vec![commit]);
    check(
        &mut w,
        NOW,
        &[
            "=> break-glass c100000: no ADR yet; audited again until 2026-03-02T11:00:00Z",
            "state: l5=c100000 l2=c100000 unsettled=0 pending=1",
        ],
    );
    // Still no ADR within the deadline: nothing happens.
    w.next_tick();
    check(
        &mut w,
        "2026-03-02T10:00:00Z",
        &["state: l5=c100000 l2=c100000 unsettled=0 pending=1"],
    );
    // The deadline passed: the incident, and the commit stops waiting.
    w.next_tick();
    check(
        &mut w,
        "2026-03-02T11:00:00Z",
        &[
            "issue acme/governance#100 [decision:break-glass-unaudited]: [decision:break-glass-unaudited] c100000",
            "=> decision:break-glass-unaudited c100000: opened acme/governance#100",
            "state: l5=c100000 l2=c100000 unsettled=0 pending=0",
        ],
    );

    // With the ADR merged in time, the commit stops waiting without an incident.
    let mut commit = commit_by("c1", "[break-glass-outage] restart workers", Some("alice"));
    commit.committed_at = Some(at("2026-03-01T11:00:00Z"));
    let mut w = world(vec![commit]);
    check(
        &mut w,
        NOW,
        &[
            "=> break-glass c100000: no ADR yet; audited again until 2026-03-02T11:00:00Z",
            "state: l5=c100000 l2=c100000 unsettled=0 pending=1",
        ],
    );
    w.next_tick();
    w.add_file(
        GOV,
        "docs/decisions/0008-outage.md",
        &format!("Recorded: {}\n", sha("c1")),
    );
    check(
        &mut w,
        NOW,
        &["state: l5=c100000 l2=c100000 unsettled=0 pending=0"],
    );
}

#[test]
fn who_landed_a_commit_decides_never_who_the_commit_claims() {
    // Pull request #9, merged by `merger` as `c1`.
    let merged_as_c1 = |w: &World, merger: &str| {
        w.edit(APP, |r| {
            r.pulls.push(Pull {
                number: PrNumber::new(9),
                title: "feat: nine".to_owned(),
                body: String::new(),
                author: login("agent-bob"),
                head_ref: "feature-9".to_owned(),
                head_sha: sha(BASE),
                base_ref: "main".to_owned(),
                base_sha: sha(BASE),
                commits: Vec::new(),
                labels: Vec::new(),
                events: Vec::new(),
                files: Vec::new(),
                comments: Vec::new(),
                reactions: Vec::new(),
                state: PrState::Closed,
                merged: true,
                mergeable: true,
                merged_by: Some(login(merger)),
                merged_at: None,
                merge_commit: Some(sha("c1")),
                created_at: None,
                comments_unreadable: false,
                head_repo: None,
                pushes: Vec::new(),
            });
            // GitHub's log of `main`: the merge, by whoever merged.
            r.activity.remove("main");
            r.fill_activity(Some(&login(BOT)));
        });
    };
    let web_merge = || commit_by("c1", "Merge pull request #9", Some("web-flow"));

    // Merged in the web interface by the owner: GitHub logs a pr_merge by alice.
    let mut w = world(vec![web_merge()]);
    merged_as_c1(&w, "alice");
    check(
        &mut w,
        NOW,
        &["state: l5=c100000 l2=c100000 unsettled=0 pending=0"],
    );

    // Merged in the web interface by an agent.
    let mut w = world(vec![web_merge()]);
    merged_as_c1(&w, "mallory");
    check(
        &mut w,
        NOW,
        &[
            "issue acme/governance#100 [decision:unauthorized-push]: [decision:unauthorized-push] c100000",
            "=> decision:unauthorized-push c100000: opened acme/governance#100",
            "state: l5=c100000 l2=c100000 unsettled=0 pending=0",
        ],
    );
    assert!(
        w.body_of(100).contains(
            "- landed by: `mallory` (pr_merge at 2026-03-01T10:00:00Z, GitHub's activity log)"
        ),
        "{}",
        w.body_of(100)
    );

    // Committed as the owner, and as mp, but pushed by an agent.
    for claimed in ["alice", BOT] {
        let mut w = world(vec![commit_by("c1", "fix: quietly", Some(claimed))]);
        w.edit(APP, |r| {
            r.activity.insert(
                "main".to_owned(),
                vec![
                    RefUpdate {
                        kind: RefUpdateKind::BranchCreation,
                        before: None,
                        after: Some(sha(BASE)),
                        at: Some(at("2026-02-01T10:00:00Z")),
                        actor: Some(login(BOT)),
                    },
                    RefUpdate {
                        kind: RefUpdateKind::Push,
                        before: Some(sha(BASE)),
                        after: Some(sha("c1")),
                        at: Some(at("2026-03-01T10:00:00Z")),
                        actor: Some(login("mallory")),
                    },
                ],
            )
        });
        check(
            &mut w,
            NOW,
            &[
                "issue acme/governance#100 [decision:unauthorized-push]: [decision:unauthorized-push] c100000",
                "=> decision:unauthorized-push c100000: opened acme/governance#100",
                "state: l5=c100000 l2=c100000 unsettled=0 pending=0",
            ],
        );
        assert!(
            w.body_of(100).contains(&format!(
                "- committer the commit claims: `{claimed}` (not evidence)"
            )),
            "{}",
            w.body_of(100)
        );
    }
}

#[test]
fn every_commit_an_update_brought_is_scanned_whatever_its_date() {
    // An agent pushes a merge whose second parent is a commit dated long before the
    // watermark: both are the push's, and both are reported.
    let mut old = commit_by("b0", "sneak in a change", Some("mallory"));
    old.committed_at = Some(at("2020-01-01T00:00:00Z"));
    old.parents = vec![sha(BASE)];
    let mut merge = commit_by("c1", "Merge branch 'side'", Some("mallory"));
    merge.parents = vec![sha(BASE), sha("b0")];
    let mut w = world(vec![merge]);
    w.edit(APP, |r| {
        r.commits
            .insert(1, commit_of(&old, vec![check_run("test", "success")]));
        r.branches.insert("side".to_owned(), old.sha.clone());
        r.fill_activity(Some(&login(BOT)));
    });
    let key = IncidentKey::rollup(&repo(APP), &[sha("b0"), sha("c1")]);
    check(
        &mut w,
        NOW,
        &[
            &format!(
                "issue acme/governance#100 [decision:unauthorized-push]: [decision:unauthorized-push] {key}"
            ),
            &format!("=> decision:unauthorized-push {key}: opened acme/governance#100"),
            "state: l5=c100000 l2=c100000 unsettled=0 pending=0",
        ],
    );
}

#[test]
fn the_hallucination_guard_reports_missing_paths_unless_disabled() {
    let message =
        "docs: explain\n\nAdds `src/real.rs` and updates `docs/ghost.md` and `docs/ghost.md`.";
    let mut w = world(vec![merged("c1", message)]);
    // `c1` is the head of `main`: its files are `main`'s.
    w.add_file(APP, "src/real.rs", "fn main() {}\n");
    check(
        &mut w,
        NOW,
        &[
            "issue acme/governance#100 [decision:hallucination-detected]: [decision:hallucination-detected] c100000",
            "=> decision:hallucination-detected c100000: opened acme/governance#100",
            "state: l5=c100000 l2=c100000 unsettled=0 pending=0",
        ],
    );
    let body = w.body_of(100);
    assert!(
        body.contains("Missing paths:\n- `docs/ghost.md`\n\n"),
        "{body}"
    );
    assert!(!body.contains("src/real.rs"));

    let mut w = world(vec![merged("c1", message)]).with_config(&[(
        config::SKILLS_FILE,
        "disabled: [hook_hallucination_guard]\n",
    )]);
    check(
        &mut w,
        NOW,
        &["state: l5=c100000 l2=c100000 unsettled=0 pending=0"],
    );
}

#[test]
fn an_incident_already_reported_in_a_closed_issue_stays_closed() {
    let mut w = world(vec![commit_by("c1", "direct push", Some("mallory"))]);
    w.edit(GOV, |r| {
        r.issues.push(IssueRecord {
            number: PrNumber::new(7),
            title: "[decision:unauthorized-push] c100000".to_owned(),
            body: "Edited by a person.\n\n<!-- merge-gate:dedupe:c100000 -->".to_owned(),
            state: IssueState::Closed,
            labels: vec!["decision:unauthorized-push".to_owned()],
            author: Some(login(BOT)),
            ..earlier_issue(7)
        });
    });
    let report = check(
        &mut w,
        NOW,
        &[
            "=> decision:unauthorized-push c100000: already reported as acme/governance#7 (closed)",
            "state: l5=c100000 l2=c100000 unsettled=0 pending=0",
        ],
    );
    assert_eq!(report.metrics.l5_incidents, 0);
}

#[test]
fn a_watermark_rewritten_away_moves_to_head_with_one_incident() {
    let mut w = world(vec![merged("c1", "feat: one")]);
    w.state.set(&repo(APP), Layer::L5, sha("dead"));
    w.state.track_unsettled(&repo(APP), &sha("beef"), at(NOW));
    w.state.set(&repo(APP), Layer::L2, sha("dead"));
    check(
        &mut w,
        NOW,
        &[
            "issue acme/governance#100 [decision:watermark-lost]: [decision:watermark-lost] c100000",
            "=> decision:watermark-lost c100000: opened acme/governance#100",
            "state: l5=c100000 l2=c100000 unsettled=0 pending=0",
        ],
    );
    let body = w.body_of(100);
    assert!(
        body.contains(&format!("- `acme/app`: `{}`", sha("dead"))),
        "{body}"
    );
    assert!(body.contains(&format!("- `acme/app:l2`: `{}`", sha("dead"))));
}

#[test]
fn a_secondary_rate_limit_stops_the_repository_without_moving_its_watermarks() {
    let mut w = world(vec![commit_by("c1", "direct push", Some("mallory"))]);
    w.github.fail(
        Failure::on(
            Endpoint::Compare,
            GitHubError::Throttled {
                retry_after_secs: 60,
            },
        )
        .in_repo(&repo(APP)),
    );
    let report = check(
        &mut w,
        NOW,
        &[
            "! acme/app: scan stopped: secondary rate limit; retry after 60 s; the repository waits for the next tick",
            "state: l5=1000000 l2=1000000 unsettled=0 pending=0",
        ],
    );
    assert_eq!(
        report.stopped.as_ref().map(SupervisorStop::code),
        Some("throttled")
    );
}

#[test]
fn revert_notes_go_just_before_the_dedupe_marker_once() {
    let key = IncidentKey::single(&sha("c1"));
    let body = "Text.\n\n<!-- merge-gate:dedupe:c100000 -->";
    let noted = with_note(body, "Note.", &key).expect("a new note is inserted");
    assert_eq!(
        noted,
        "Text.\n\nNote.\n\n<!-- merge-gate:dedupe:c100000 -->"
    );
    assert_eq!(with_note(&noted, "Note.", &key), None);
    assert_eq!(
        with_note("No marker.", "Note.", &key).as_deref(),
        Some("No marker.\n\nNote.")
    );
}

#[test]
fn a_required_check_missing_on_a_young_commit_is_waited_for_then_fails() {
    let mut w = world(vec![merged("c1", "feat: one")]);
    w.set_checks("c1", Vec::new());
    // 30 minutes after the commit: CI may not have started yet.
    check(
        &mut w,
        "2026-03-01T10:30:00Z",
        &[
            "=> l2 c100000: post-merge re-validation unsettled: required check 'test' has no run on the merged commit; unsettled since 2026-03-01T10:30:00Z; escalates at 2026-03-02T10:30:00Z (24 h)",
            "state: l5=c100000 l2=1000000 unsettled=1 pending=0",
        ],
    );
    // Two hours after the commit, past the 60-minute report timeout: a real failure.
    let report = check(
        &mut w,
        NOW,
        &[
            "issue acme/governance#100 [decision:post-merge-revalidation]: [decision:post-merge-revalidation] c100000",
            "=> decision:post-merge-revalidation c100000: opened acme/governance#100",
            "state: l5=c100000 l2=c100000 unsettled=0 pending=0",
        ],
    );
    assert_eq!(report.metrics.l2_incidents, 1);
}
