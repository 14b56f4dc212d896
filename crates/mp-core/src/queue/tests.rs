//! Tests of the queue's order and build state machine, and a drain simulated over them.

use super::*;
use crate::branch::l2::{L2Finding, L2Verdict};
use crate::ids::{CommitSha, Login, PrNumber, Timestamp};

fn at(minute: i64) -> Timestamp {
    Timestamp::parse("2026-03-10T09:00:00Z")
        .expect("valid")
        .plus_seconds(minute * 60)
}

fn sha(n: u64) -> CommitSha {
    CommitSha::parse(&format!("{n:040x}")).expect("valid sha")
}

fn candidate(pr: u64, agent: &str, minute: i64) -> Candidate {
    Candidate {
        pr: PrNumber::new(pr),
        head: sha(1000 + pr),
        agent: AgentKey {
            author: Login::parse(agent).expect("valid login"),
            session: None,
        },
        priority: Priority::Normal,
        ready_since: at(minute),
    }
}

fn numbers(queue: &[Candidate]) -> Vec<u64> {
    queue.iter().map(|c| c.pr.get()).collect()
}

#[test]
fn agents_take_turns_so_a_burst_does_not_starve_the_others() {
    // alice readied three at once before bob and carol readied one each.
    let ordered = order(
        vec![
            candidate(1, "alice", 0),
            candidate(2, "alice", 0),
            candidate(3, "alice", 1),
            candidate(4, "bob", 2),
            candidate(5, "carol", 3),
        ],
        None,
    );
    assert_eq!(numbers(&ordered.queue), [1, 4, 5, 2, 3]);
    assert_eq!(ordered.position(PrNumber::new(5)), Some(3));
    assert!(ordered.held.is_empty());
}

#[test]
fn the_owner_s_priority_goes_first_and_the_cap_holds_the_rest() {
    let mut urgent = candidate(9, "bob", 30);
    urgent.priority = Priority::High;
    let mut other_session = candidate(6, "alice", 5);
    other_session.agent.session = Some("s2".to_owned());
    let ordered = order(
        vec![
            candidate(3, "alice", 1),
            candidate(1, "alice", 0),
            candidate(2, "alice", 0),
            urgent,
            other_session,
            candidate(4, "bob", 2),
        ],
        Some(2),
    );
    // bob's urgent entry first; alice's third entry is held (bob's two fit the cap); her
    // second session is its own agent.
    assert_eq!(numbers(&ordered.queue), [9, 1, 4, 6, 2]);
    assert_eq!(ordered.held.len(), 1, "{:?}", ordered.held);
    assert_eq!(ordered.held[0].candidate.pr.get(), 3);
    assert_eq!(
        ordered.held[0].reason.to_string(),
        "its agent already has 2 pull request(s) in the queue (max_queued_per_agent)"
    );
}

#[test]
fn the_order_does_not_depend_on_the_input_order() {
    let mut candidates: Vec<Candidate> = (1..=12)
        .map(|n| candidate(n, ["a", "b", "c"][(n % 3) as usize], (n % 5) as i64))
        .collect();
    let first = order(candidates.clone(), Some(3));
    candidates.reverse();
    assert_eq!(order(candidates, Some(3)), first);
}

fn finding(name: &str) -> L2Finding {
    L2Finding::Failed {
        name: name.to_owned(),
        conclusion: None,
    }
}

#[test]
fn the_build_verdict_reads_l2_s_verdict() {
    assert_eq!(
        build_verdict(&L2Verdict::Passed, false),
        BuildVerdict::Green
    );
    let missing = L2Verdict::Real {
        failures: vec![L2Finding::Missing {
            name: "test".to_owned(),
        }],
    };
    assert_eq!(build_verdict(&missing, true), BuildVerdict::Pending);
    // A run only another App published is not counted: the build waits for the expected
    // App, and turns red only once the staging commit is past the report timeout.
    let other_app = L2Verdict::Real {
        failures: vec![L2Finding::UntrustedPublisher {
            name: "test".to_owned(),
            expected: "github-actions".to_owned(),
            seen: vec![Some("agent-ci".to_owned())],
        }],
    };
    assert_eq!(build_verdict(&other_app, true), BuildVerdict::Pending);
    assert!(matches!(
        build_verdict(&other_app, false),
        BuildVerdict::Red { .. }
    ));
    assert_eq!(
        build_verdict(&missing, false),
        BuildVerdict::Red {
            failing: vec!["required check 'test' has no run on the merged commit".to_owned()]
        }
    );
    let running = L2Verdict::Infra {
        reasons: vec![L2Finding::NotCompleted {
            name: "test".to_owned(),
            status: crate::context::CheckStatus::InProgress,
        }],
    };
    assert_eq!(build_verdict(&running, false), BuildVerdict::Pending);
    let cancelled = L2Verdict::Infra {
        reasons: vec![L2Finding::Cancelled {
            name: "test".to_owned(),
        }],
    };
    assert_eq!(
        build_verdict(&cancelled, false),
        BuildVerdict::Infra {
            reasons: vec!["check 'test' was cancelled".to_owned()]
        }
    );
    assert!(matches!(
        build_verdict(
            &L2Verdict::Real {
                failures: vec![finding("test")]
            },
            true
        ),
        BuildVerdict::Red { .. }
    ));
}

const SETTINGS: QueueSettings = QueueSettings {
    batch_max: 4,
    infra_retries: 1,
};

fn build_numbers(step: &Step) -> Vec<u64> {
    let build = match step {
        Step::Start(b) | Step::Wait(b) | Step::Land(b) => b,
        Step::Discard { build, .. } | Step::Split { build, .. } | Step::Eject { build, .. } => {
            build
        }
        Step::Idle => return Vec::new(),
    };
    build.entries.iter().map(|e| e.pr.get()).collect()
}

fn checks(verdict: BuildVerdict) -> BuildObservation {
    BuildObservation::Checks(verdict)
}

fn red() -> BuildObservation {
    checks(BuildVerdict::Red {
        failing: vec!["check 'test' failed with conclusion failure".to_owned()],
    })
}

#[test]
fn a_green_build_lands_its_whole_batch() {
    let queue: Vec<Candidate> = (1..=6).map(|n| candidate(n, "a", n as i64)).collect();
    let mut state = QueueState::new(SETTINGS);
    let main = sha(1);
    let see = |build| Observation {
        main_head: &main,
        queue: &queue,
        build,
    };
    let step = state.step(SETTINGS, see(None));
    assert_eq!(step.code(), "queue_build_started");
    assert_eq!(build_numbers(&step), [1, 2, 3, 4]);
    let pending = checks(BuildVerdict::Pending);
    let step = state.step(SETTINGS, see(Some(&pending)));
    assert_eq!(step.code(), "queue_build_pending");
    let green = checks(BuildVerdict::Green);
    let step = state.step(SETTINGS, see(Some(&green)));
    assert_eq!(step.code(), "queue_landed");
    assert_eq!(build_numbers(&step), [1, 2, 3, 4]);
    assert_eq!(state.build, None);
    assert_eq!(state.window, 4, "capped at batch_max");
}

#[test]
fn a_red_build_is_halved_until_the_culprit_fails_alone() {
    // #3 breaks the build; the others are sound.
    let mut queue: Vec<Candidate> = (1..=4).map(|n| candidate(n, "a", n as i64)).collect();
    let mut state = QueueState::new(SETTINGS);
    let mut main = sha(1);
    let mut log = Vec::new();
    for _ in 0..20 {
        let outcome = state.build.as_ref().map(|b| {
            if b.entries.iter().any(|e| e.pr.get() == 3) {
                red()
            } else {
                checks(BuildVerdict::Green)
            }
        });
        let step = state.step(
            SETTINGS,
            Observation {
                main_head: &main,
                queue: &queue,
                build: outcome.as_ref(),
            },
        );
        log.push(format!("{} {:?}", step.code(), build_numbers(&step)));
        match &step {
            Step::Land(build) => {
                main = sha(500 + build.id);
                queue.retain(|c| !build.holds(c.pr));
            }
            Step::Eject { entry, .. } => queue.retain(|c| c.pr != entry.pr),
            Step::Idle => break,
            _ => {}
        }
    }
    assert_eq!(
        log,
        [
            "queue_build_started [1, 2, 3, 4]",
            "queue_build_red [1, 2, 3, 4]",
            "queue_build_started [1, 2]",
            "queue_landed [1, 2]",
            "queue_build_started [3, 4]",
            "queue_build_red [3, 4]",
            "queue_build_started [3]",
            "queue_ejected [3]",
            "queue_build_started [4]",
            "queue_landed [4]",
            "queue_idle []",
        ]
    );
}

#[test]
fn an_infrastructure_failure_is_retried_once_then_counts_as_red() {
    let queue = vec![candidate(1, "a", 0)];
    let main = sha(1);
    let mut state = QueueState::new(SETTINGS);
    let infra = checks(BuildVerdict::Infra {
        reasons: vec!["check 'test' was cancelled".to_owned()],
    });
    let see = |state: &mut QueueState, build: Option<&BuildObservation>| {
        state.step(
            SETTINGS,
            Observation {
                main_head: &main,
                queue: &queue,
                build,
            },
        )
    };
    let first = see(&mut state, None);
    let retry = see(&mut state, Some(&infra));
    assert_eq!(retry.code(), "queue_build_started");
    assert!(
        matches!(&retry, Step::Start(b) if b.attempt == 1),
        "{retry}"
    );
    let ejected = see(&mut state, Some(&infra));
    assert_eq!(ejected.code(), "queue_ejected");
    assert_ne!(first, retry);
}

#[test]
fn a_build_that_no_longer_stands_for_its_entries_is_discarded() {
    let queue: Vec<Candidate> = (1..=3).map(|n| candidate(n, "a", n as i64)).collect();
    let main = sha(1);
    let pending = checks(BuildVerdict::Pending);
    let started = |queue: &[Candidate]| {
        let mut state = QueueState::new(SETTINGS);
        state.step(
            SETTINGS,
            Observation {
                main_head: &main,
                queue,
                build: None,
            },
        );
        state
    };
    // #2's head moved: the build merged a head nobody approved any more.
    let mut state = started(&queue);
    let mut moved = queue.clone();
    moved[1].head = sha(77);
    let step = state.step(
        SETTINGS,
        Observation {
            main_head: &main,
            queue: &moved,
            build: Some(&pending),
        },
    );
    assert_eq!(
        step.to_string(),
        format!(
            "build 1 of #1, #2, #3 on {} discarded: #2 left the queue (closed, a new head, or its approval no longer binds)",
            main.short()
        )
    );
    // The next step builds again without it.
    let next = state.step(
        SETTINGS,
        Observation {
            main_head: &main,
            queue: &moved,
            build: None,
        },
    );
    assert!(
        matches!(&next, Step::Start(b) if b.entries[1].head == sha(77)),
        "{next}"
    );
    // main moved outside the queue; someone else pushed the staging branch.
    let mut state = started(&queue);
    let elsewhere = sha(2);
    let step = state.step(
        SETTINGS,
        Observation {
            main_head: &elsewhere,
            queue: &queue,
            build: Some(&pending),
        },
    );
    assert_eq!(step.code(), "queue_base_moved");
    let mut state = started(&queue);
    let pushed = BuildObservation::PushedByOther {
        by: Some(Login::parse("codex-agent").expect("login")),
    };
    let step = state.step(
        SETTINGS,
        Observation {
            main_head: &main,
            queue: &queue,
            build: Some(&pushed),
        },
    );
    assert_eq!(step.code(), "queue_staging_pushed_by_other");
    assert!(
        step.to_string()
            .contains("codex-agent pushed the staging branch"),
        "{step}"
    );
}

/// Drains `good + bad` entries from `agents` agents, the bad ones breaking any build that
/// holds them, with one build at a time and each build one CI round. Returns (rounds,
/// landed, ejected).
fn drain(entries: u64, bad: &[u64], settings: QueueSettings) -> (u32, usize, Vec<u64>) {
    let mut queue: Vec<Candidate> = (1..=entries)
        .map(|n| candidate(n, &format!("agent{}", n % 10), (n / 10) as i64))
        .collect();
    queue = order(queue, None).queue;
    let mut state = QueueState::new(settings);
    let mut main = sha(1);
    let (mut rounds, mut landed, mut ejected) = (0, 0, Vec::new());
    for _ in 0..1_000 {
        let outcome = state.build.as_ref().map(|b| {
            if b.entries.iter().any(|e| bad.contains(&e.pr.get())) {
                red()
            } else {
                checks(BuildVerdict::Green)
            }
        });
        let step = state.step(
            settings,
            Observation {
                main_head: &main,
                queue: &queue,
                build: outcome.as_ref(),
            },
        );
        match &step {
            Step::Start(_) => rounds += 1,
            Step::Land(build) => {
                main = sha(500 + build.id);
                landed += build.entries.len();
                queue.retain(|c| !build.holds(c.pr));
            }
            Step::Eject { entry, .. } => {
                ejected.push(entry.pr.get());
                queue.retain(|c| c.pr != entry.pr);
            }
            Step::Idle => break,
            Step::Wait(_) | Step::Discard { .. } | Step::Split { .. } => {}
        }
    }
    ejected.sort_unstable();
    (rounds, landed, ejected)
}

#[test]
fn fifty_entries_with_five_culprits_drain_in_few_rounds() {
    let settings = QueueSettings {
        batch_max: 8,
        infra_retries: 1,
    };
    // All sound (the usual case: a head whose own checks failed never enters the queue):
    // 50 in ceil(50 / 8) = 7 builds, one CI round each.
    assert_eq!(drain(50, &[], settings), (7, 50, Vec::new()));
    // Five culprits that pass alone on their heads but break any build (an interaction
    // with main): each is found and named, the 45 others land. A culprit costs its red
    // build, about log2(8) = 3 halvings and the smaller builds after it, so at most about
    // seven rounds each beyond the seven clean ones.
    let (rounds, landed, ejected) = drain(50, &[7, 18, 29, 33, 46], settings);
    assert_eq!(landed, 45);
    assert_eq!(ejected, [7, 18, 29, 33, 46]);
    assert!(rounds <= 7 + 5 * 7, "{rounds} rounds");
}

/// decisions/0059: with one build at a time, the default batch of 16 drains 50 sound entries
/// in 4 builds, but five culprits that pass alone and each sit in a different batch cost
/// several times the 9 rounds that would land everything within 90 minutes of 10-minute
/// CI: bisection finds one culprit per few red rounds, and the entries behind it wait.
#[test]
fn one_build_at_a_time_cannot_bisect_five_spread_culprits_in_nine_rounds() {
    let settings = QueueSettings::default();
    assert_eq!(settings.batch_max, 16);
    assert_eq!(drain(50, &[], settings), (4, 50, Vec::new()));
    let bad = [6, 17, 28, 39, 50];
    let (rounds, landed, ejected) = drain(50, &bad, settings);
    assert_eq!((landed, ejected.as_slice()), (45, bad.as_slice()));
    // The drain benchmark measures 37 builds too (docs/performance.md).
    assert_eq!(rounds, 37, "{rounds} rounds");
}

mod candidates {
    use super::super::candidate;
    use crate::gate::testkit::{Pr, at, login, now};
    use crate::queue::{AgentKey, Priority};

    #[test]
    fn the_agent_is_the_author_and_the_head_s_session_and_ready_since_the_label() {
        let pr = Pr::new()
            .applied("ready-to-merge", "alice", "2026-03-01T11:00:00Z")
            .build();
        let c = candidate(&pr, &[login("alice")], "mp:priority", now());
        assert_eq!(
            c.agent,
            AgentKey {
                author: login("bob"),
                session: Some("s_abc-123".to_owned()),
            }
        );
        assert_eq!(c.head, pr.head_sha);
        assert_eq!(c.ready_since, at("2026-03-01T11:00:00Z"));
        assert_eq!(c.priority, Priority::Normal);
    }

    #[test]
    fn only_the_owner_s_priority_label_counts() {
        let owner = Pr::new()
            .applied("mp:priority", "alice", "2026-03-01T11:00:00Z")
            .build();
        assert_eq!(
            candidate(&owner, &[login("alice")], "mp:priority", now()).priority,
            Priority::High
        );
        // The agent applied it: nothing.
        let agent = Pr::new()
            .applied("mp:priority", "bob", "2026-03-01T11:00:00Z")
            .build();
        assert_eq!(
            candidate(&agent, &[login("alice")], "mp:priority", now()).priority,
            Priority::Normal
        );
        // The owner applied it, then the agent re-applied it: the last event decides.
        let reapplied = Pr::new()
            .applied("mp:priority", "alice", "2026-03-01T10:00:00Z")
            .unlabeled("mp:priority", "bob", "2026-03-01T10:30:00Z")
            .labeled("mp:priority", "bob", "2026-03-01T11:00:00Z")
            .build();
        assert_eq!(
            candidate(&reapplied, &[login("alice")], "mp:priority", now()).priority,
            Priority::Normal
        );
        // The owner applied it once, and it was removed since.
        let removed = Pr::new()
            .labeled("mp:priority", "alice", "2026-03-01T10:00:00Z")
            .build();
        assert_eq!(
            candidate(&removed, &[login("alice")], "mp:priority", now()).priority,
            Priority::Normal
        );
        // Another label name is no priority.
        assert_eq!(
            candidate(&owner, &[login("alice")], "urgent", now()).priority,
            Priority::Normal
        );
    }

    #[test]
    fn without_a_labelled_time_the_candidate_is_ready_now() {
        let pr = Pr::new().label("ready-to-merge").build();
        assert_eq!(
            candidate(&pr, &[login("alice")], "mp:priority", now()).ready_since,
            now()
        );
    }
}
