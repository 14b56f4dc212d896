//! Tests of `mp dev capture` over the in-memory GitHub: what it reads, and that what it
//! records reads back as a world.

use mp_core::ids::{RepoName, Timestamp};
use mp_github_fake::MemoryGitHub;

use super::{Plan, capture};

fn demo() -> mp_github_fake::World {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/worlds/demo.yaml");
    mp_github_fake::load_world(&path).expect("the demo world loads")
}

fn repo(name: &str) -> RepoName {
    RepoName::parse(name).expect("a repository name")
}

fn plan(repos: &[&str], prs: usize) -> Plan {
    Plan {
        repos: repos.iter().map(|r| repo(r)).collect(),
        governance: repo("acme/governance"),
        inbox: repo("acme/governance"),
        prs,
        canonical_paths: vec!["docs/policies/security.md".to_owned()],
        workflow_bound: std::collections::BTreeSet::new(),
        bot_slug: "acme-merge-gate".to_owned(),
        now: Timestamp::parse("2026-11-29T12:00:00Z").expect("a time"),
    }
}

fn run(github: &MemoryGitHub, plan: &Plan) -> (mp_github_fake::World, super::Summary) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    runtime
        .block_on(capture(github, plan))
        .expect("the capture reads")
}

#[test]
fn a_capture_only_reads_and_what_it_records_reads_back_as_a_world() {
    let github = MemoryGitHub::new(demo());
    github.log_calls();
    let (world, summary) = run(&github, &plan(&["acme/webapp", "acme/infra"], 30));
    let calls = github.call_log();
    assert!(!calls.is_empty());
    for call in &calls {
        let request = call.to_string();
        assert!(
            request.starts_with("GET ") || request.starts_with("POST /graphql"),
            "a capture makes no write: {request}"
        );
    }
    assert!(github.actions().is_empty(), "nothing was written");

    let text = mp_github_fake::world::world_to_yaml(&world, None);
    let back = mp_github_fake::world::parse_world("captured.yaml", &text, None)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let webapp = back.repo(&repo("acme/webapp")).expect("recorded");
    let numbers: Vec<u64> = webapp.pulls.iter().map(|p| p.number.get()).collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5]);
    let original = demo();
    let before = original.repo(&repo("acme/webapp")).expect("in the demo");
    for pull in &webapp.pulls {
        let was = before.pull(pull.number).expect("in the demo");
        assert_eq!(pull.head_sha, was.head_sha, "#{}", pull.number);
        assert_eq!(pull.labels, was.labels, "#{}", pull.number);
        assert_eq!(pull.events, was.events, "#{}", pull.number);
        let trailers = |p: &mp_github_fake::world::Pull, w: &mp_github_fake::World| {
            let r = w.repo(&repo("acme/webapp")).expect("the repo");
            p.commits
                .iter()
                .map(|sha| r.commit(sha).expect("listed").context().trailers)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            trailers(pull, &back),
            trailers(was, &original),
            "#{}: the trailers survive",
            pull.number
        );
    }
    let governance = back.repo(&repo("acme/governance")).expect("recorded");
    assert_eq!(
        governance.issues.len(),
        summary.repos[2].issues,
        "the open issues"
    );
    assert!(governance.branch_files.contains_key("bot-state"));
    assert!(back.receipt_key.is_none(), "no secret");
}

#[test]
fn only_the_newest_prs_are_recorded() {
    let github = MemoryGitHub::new(demo());
    let (world, summary) = run(&github, &plan(&["acme/webapp"], 2));
    let webapp = world.repo(&repo("acme/webapp")).expect("recorded");
    let numbers: Vec<u64> = webapp.pulls.iter().map(|p| p.number.get()).collect();
    assert_eq!(numbers, [4, 5]);
    assert_eq!(summary.repos[0].open_pulls, 5);
    assert_eq!(summary.repos[0].pulls, 2);
    assert!(
        world.repo(&repo("acme/infra")).is_none(),
        "a repository not asked for is not recorded"
    );
}

#[test]
fn updates_in_one_second_are_ordered_as_their_tips_chain() {
    use mp_core::context::{RefUpdate, RefUpdateKind};
    let at = Some(Timestamp::parse("2026-03-10T11:00:00Z").expect("a time"));
    let sha = |id: &str| mp_github_fake::world::commit_sha(&repo("acme/app"), id);
    let update = |before: &str, after: &str| RefUpdate {
        kind: RefUpdateKind::Push,
        before: Some(sha(before)),
        after: Some(sha(after)),
        at,
        actor: None,
    };
    // GitHub lists newest first; two pushes in the same second.
    let listed = vec![update("u1", "u2"), update("f1", "u1")];
    let ordered = super::oldest_first(listed);
    let tips: Vec<_> = ordered.iter().filter_map(|u| u.after.clone()).collect();
    assert_eq!(tips, [sha("u1"), sha("u2")], "the log ends at the head");
}

#[test]
fn unreadable_comments_are_recorded_as_such_and_a_truncated_pull_request_is_left_out() {
    use mp_core::port::GitHubError;
    use mp_github_fake::{Endpoint, Failure};
    let github = MemoryGitHub::new(demo());
    github.fail(
        Failure::on(
            Endpoint::ListComments,
            GitHubError::Unavailable {
                route: "GET /repos/{o}/{r}/issues/{n}/comments".to_owned(),
                message: "HTTP 502".to_owned(),
            },
        )
        .in_repo(&repo("acme/infra")),
    );
    github.fail(
        Failure::on(
            Endpoint::ListPullCommits,
            GitHubError::Truncated {
                what: "acme/webapp commits".to_owned(),
                limit: 250,
            },
        )
        .in_repo(&repo("acme/webapp")),
    );
    let (world, summary) = run(&github, &plan(&["acme/webapp", "acme/infra"], 30));
    let infra = world.repo(&repo("acme/infra")).expect("recorded");
    assert!(infra.pulls.iter().all(|p| p.comments_unreadable));
    let webapp = world.repo(&repo("acme/webapp")).expect("recorded");
    assert!(webapp.pulls.is_empty(), "every listing was cut short");
    assert_eq!(summary.repos[0].open_pulls, 5);
    let left_out = summary
        .notes
        .iter()
        .filter(|n| n.contains("left out"))
        .count();
    assert_eq!(left_out, 5, "{:?}", summary.notes);
    let text = mp_github_fake::world::world_to_yaml(&world, None);
    mp_github_fake::world::parse_world("captured.yaml", &text, None)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
}

#[test]
fn a_body_written_to_look_like_world_keys_stays_text() {
    // An agent controls its pull request's title, body, comments and commit messages; in
    // the captured world they must stay text, never become keys (a receipt key, another
    // pull request, a merged state).
    let forged = "looks done\nreceipt_key: \"agent-chosen\"\n  - number: 99\n    merged: true\n";
    let mut world = demo();
    let webapp = world.repo_mut(&repo("acme/webapp")).expect("in the demo");
    let pull = webapp
        .pulls
        .iter_mut()
        .find(|p| !p.comments.is_empty())
        .expect("a pull request with a comment");
    let number = pull.number;
    pull.title = "title\": x\nreceipt_key: y".to_owned();
    pull.body = forged.to_owned();
    let comment = pull.comments.first_mut().expect("a comment");
    comment.body = forged.to_owned();
    let head = pull.head_sha.clone();
    let commit = webapp
        .commits
        .iter_mut()
        .find(|c| c.sha == head)
        .expect("the head");
    commit.message = format!("Subject\n\n{forged}");
    let github = MemoryGitHub::new(world);
    let (captured, _) = run(&github, &plan(&["acme/webapp"], 30));
    let text = mp_github_fake::world::world_to_yaml(&captured, None);
    let back = mp_github_fake::world::parse_world("captured.yaml", &text, None)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(back.receipt_key.is_none());
    let webapp = back.repo(&repo("acme/webapp")).expect("recorded");
    assert_eq!(webapp.pulls.len(), 5, "no pull request was added");
    let pull = webapp.pull(number).expect("recorded");
    assert_eq!(pull.title, "title\": x\nreceipt_key: y");
    assert_eq!(pull.body, forged);
    assert_eq!(pull.comments.first().expect("a comment").body, forged);
    assert!(!pull.merged);
    let message = &webapp.commit(&pull.head_sha).expect("the head").message;
    assert_eq!(*message, format!("Subject\n\n{forged}"));
}
