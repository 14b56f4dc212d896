//! Tests for the branch supervisor: each case runs the supervisor over `acme/app` on the
//! in-memory fake and compares the ordered writes, the events (`=>`), the warnings (`!`)
//! and the resulting watermarks.

use super::*;
use crate::testkit::{BOT, Fake, at, block_on, config_with, login, repo, sha};
use crate::testkit_history::{check_run, commit_by, merged};
use mp_core::branch::IncidentKey;
use mp_core::config::{self, Config};
use mp_core::context::{RefUpdate, RefUpdateKind};
use mp_core::ids::PrNumber;
use mp_core::port::{CommitPull, Issue, IssueState};

const APP: &str = "acme/app";
const GOV: &str = "acme/governance";
/// The commit both watermarks start at.
const BASE: &str = "1";
const NOW: &str = "2026-03-01T12:00:00Z";
const AUTO_REVERT_ENV: &str =
    "bot_app_slug: mp-gate\nrequired_checks: [test]\nmerge_enabled: true\nauto_revert_pr: true\n";

/// The fake world, the configuration, the watermarks and the per-tick run.
struct World {
    fake: Fake,
    config: Config,
    state: Watermarks,
    run: SupervisorRun,
}

/// `acme/app` whose `main` is the base commit then `new` (oldest first), each new commit
/// with a green `test` run; both watermarks at the base; the governance repository has a
/// `main` without ADRs.
fn world(new: Vec<CommitContext>) -> World {
    let fake = Fake::new(Vec::new());
    for commit in &new {
        fake.set_checks(APP, &commit.sha, vec![check_run("test", "success")]);
    }
    let mut main = vec![merged(BASE, "chore: base")];
    main.extend(new);
    fake.set_main(APP, main);
    fake.set_main(GOV, vec![merged("9", "docs: governance")]);
    fake.add_file(GOV, "main", "README.md", "governance\n");
    let mut state = Watermarks::new();
    for layer in Layer::ALL {
        state.set(&repo(APP), layer, sha(BASE));
    }
    World {
        fake,
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

    fn body_of(&self, number: u64) -> String {
        self.fake.with(|s| {
            s.issues
                .iter()
                .find(|i| i.number == PrNumber::new(number))
                .map(|i| i.body.clone())
                .unwrap_or_default()
        })
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
        &world.fake,
        &world.config,
        &mut world.state,
        &repo(APP),
        &mut world.run,
        at(when),
    ));
    let mut lines = world.fake.take_log();
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
    world
        .fake
        .set_checks(APP, &sha(prefix), vec![check_run("test", state)]);
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
            "revert acme/app c100000 on revert/c100000: Revert \"feat: one\"",
            "pull acme/app#500 revert/c100000 -> main: Revert bad commit c100000 (post-merge re-validation)",
            "edit-issue acme/governance#100",
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
    let message = w
        .fake
        .history(|h| h.branches[&(repo(APP), "revert/c100000".to_owned())][0].message());
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
    failing(&w, "c1", "failure");
    let note = "Auto-revert PR **not** created (stage: `multi-parent-merge`). Falling back to incident-only: automatic revert refused: merge commit with 2 parents (1000000, e100000); inspect with `git show --format=%P <sha>`, verify the mainline parent and run `git revert -m N <sha>` by hand";
    let report = check(
        &mut w,
        NOW,
        &[
            "issue acme/governance#100 [decision:post-merge-revalidation]: [decision:post-merge-revalidation] c100000",
            "edit-issue acme/governance#100",
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
    w.fake.fail_history(
        "commit",
        APP,
        GitHubError::Unavailable {
            route: "GET /commits/{sha}".to_owned(),
            message: "bad gateway".to_owned(),
        },
    );
    check(
        &mut w,
        NOW,
        &[
            "issue acme/governance#100 [decision:post-merge-revalidation]: [decision:post-merge-revalidation] c100000",
            "edit-issue acme/governance#100",
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
    w.fake.add_file(
        GOV,
        "main",
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
    w.fake.add_file(
        GOV,
        "main",
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
    w.fake.add_file(
        GOV,
        "main",
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
    let pulls = |merger: &str| {
        vec![CommitPull {
            number: PrNumber::new(9),
            merged_by: Some(login(merger)),
            merge_commit_sha: Some(sha("c1")),
        }]
    };
    let web_merge = || commit_by("c1", "Merge pull request #9", Some("web-flow"));

    // Merged in the web interface by the owner: GitHub logs a pr_merge by alice.
    let mut w = world(vec![web_merge()]);
    w.fake.history(|h| {
        h.commit_pulls
            .insert((repo(APP), sha("c1")), pulls("alice"))
    });
    check(
        &mut w,
        NOW,
        &["state: l5=c100000 l2=c100000 unsettled=0 pending=0"],
    );

    // Merged in the web interface by an agent.
    let mut w = world(vec![web_merge()]);
    w.fake.history(|h| {
        h.commit_pulls
            .insert((repo(APP), sha("c1")), pulls("mallory"))
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
        w.body_of(100).contains(
            "- landed by: `mallory` (pr_merge at 2026-03-01T10:00:00Z, GitHub's activity log)"
        ),
        "{}",
        w.body_of(100)
    );

    // Committed as the owner, and as mp, but pushed by an agent.
    for claimed in ["alice", BOT] {
        let mut w = world(vec![commit_by("c1", "fix: quietly", Some(claimed))]);
        w.fake.history(|h| {
            h.activity.insert(
                (repo(APP), "main".to_owned()),
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
    w.fake.history(|h| {
        h.branches
            .insert((repo(APP), "side".to_owned()), vec![old.clone()]);
    });
    w.fake
        .set_checks(APP, &sha("b0"), vec![check_run("test", "success")]);
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
    w.fake
        .add_file(APP, sha("c1").as_str(), "src/real.rs", "fn main() {}\n");
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
    w.fake.with(|s| {
        s.issues.push(Issue {
            repo: repo(GOV),
            number: PrNumber::new(7),
            title: "[decision:unauthorized-push] c100000".to_owned(),
            body: "Edited by a person.\n\n<!-- merge-gate:dedupe:c100000 -->".to_owned(),
            state: IssueState::Closed,
            labels: vec!["decision:unauthorized-push".to_owned()],
            author: Some(login(BOT)),
            created_at: None,
            is_pull_request: false,
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
    w.fake.fail_history(
        "compare",
        APP,
        GitHubError::Throttled {
            retry_after_secs: 60,
        },
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
    w.fake.set_checks(APP, &sha("c1"), Vec::new());
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
