//! Tests for the classifier engine: rule ids, votes, max-vote and `classify` end to end.

use proptest::prelude::*;

use super::*;
use crate::classifier::published_verdict::CLASSIFIER_JUDGMENT_CHECK;
use crate::classifier::test_support::{check_run, commit, login, modified, pr, removed, repo, sha};
use crate::context::FileChange;

const PUBLISHER: &str = "mp-classifier";

fn user(name: &str, quadrant: Quadrant, reasoning: &str) -> Vote {
    Vote::new(RuleId::User(name.to_owned()), quadrant, reasoning)
}

fn verified() -> AutoRevertLabel {
    AutoRevertLabel::Verified {
        applier: login("owner"),
        proof: AutoRevertProof::Receipt { head: sha(0xaa) },
    }
}

/// Classifies `pr` with the shipped path rules, bot repository `acme/governance` and
/// publisher `mp-classifier`, then checks the verdict line, the votes that are not A (in
/// order), the D reasoning, and that every vote is kept in rule order.
#[track_caller]
fn check(
    pr: &PrContext,
    auto_revert: AutoRevertLabel,
    user_votes: Vec<Vote>,
    quadrant: Quadrant,
    raising: &[&str],
) {
    let bot_repo = repo("acme/governance");
    let path_rules = PathRules::default();
    let facts = ClassifierFacts {
        bot_repo: &bot_repo,
        path_rules: &path_rules,
        publisher_slug: Some(PUBLISHER),
        auto_revert,
    };
    let user_rules: Vec<RuleId> = user_votes.iter().map(|v| v.rule.clone()).collect();
    let verdict = classify(pr, &facts, user_votes);

    assert_eq!(verdict.quadrant, quadrant, "{verdict}");
    let rules: Vec<RuleId> = verdict.votes.iter().map(|v| v.rule.clone()).collect();
    let expected_rules: Vec<RuleId> = RuleId::BUILT_IN.into_iter().chain(user_rules).collect();
    assert_eq!(rules, expected_rules);
    let lines: Vec<String> = verdict
        .votes
        .iter()
        .filter(|v| v.quadrant != Quadrant::A)
        .map(ToString::to_string)
        .collect();
    assert_eq!(lines, raising);
    let d_reasons: Vec<&str> = verdict
        .votes
        .iter()
        .filter(|v| v.quadrant == Quadrant::D)
        .map(|v| v.reasoning.as_str())
        .collect();
    assert_eq!(verdict.d_reasoning(), d_reasons.join("; "));
}

fn agent_commit(byte: u8, session: &str) -> crate::context::CommitContext {
    commit(
        byte,
        &format!(
            "feat: x\n\nAgent-Tool: codex\nAgent-Model: gpt-5\nAgent-Session: {session}\nAgent-Machine: ci\nTask-Ref: none"
        ),
    )
}

fn ordinary_pr(files: Vec<FileChange>) -> PrContext {
    let mut pr = pr(files);
    pr.commits = vec![agent_commit(0xaa, "s_good-1")];
    pr
}

#[test]
fn ordinary_change_is_a_with_every_rule_voting() {
    check(
        &ordinary_pr(vec![modified("README.md")]),
        AutoRevertLabel::Absent,
        Vec::new(),
        Quadrant::A,
        &[],
    );
}

#[test]
fn critical_change_is_b() {
    check(
        &ordinary_pr(vec![modified("src/lib.rs")]),
        AutoRevertLabel::Absent,
        Vec::new(),
        Quadrant::B,
        &["classifier_path_default voted B: src/lib.rs is critical and nothing is removed"],
    );
}

#[test]
fn empty_pr_is_d() {
    check(
        &ordinary_pr(Vec::new()),
        AutoRevertLabel::Absent,
        Vec::new(),
        Quadrant::D,
        &["classifier_empty_pr voted D: the pull request changes no file"],
    );
}

#[test]
fn bot_repo_and_malformed_session_are_both_named() {
    let mut pr = ordinary_pr(vec![modified("README.md")]);
    pr.repo = repo("acme/governance");
    pr.commits.push(agent_commit(0xcd, "s_X"));
    check(
        &pr,
        AutoRevertLabel::Absent,
        Vec::new(),
        Quadrant::D,
        &[
            "classifier_bot_self_repo voted D: acme/governance is the bot's own repository: changes to the bot itself go to the owner",
            "classifier_malformed_session voted D: malformed Agent-Session on commit cdcdcdc ('s_X')",
        ],
    );
}

#[test]
fn verified_auto_revert_raises_a_deletion_only_to_c() {
    check(
        &ordinary_pr(vec![removed("docs/guide/old.md")]),
        verified(),
        Vec::new(),
        Quadrant::C,
        &[
            "classifier_path_default voted C: docs/guide/old.md is removed and nothing critical is changed",
            "classifier_auto_revert voted C: decision:auto-revert verified (applied by owner, receipt for head aaaaaaa): a recovery revert",
        ],
    );
}

#[test]
fn verified_auto_revert_never_lowers_d() {
    check(
        &ordinary_pr(vec![removed("src/lib.rs")]),
        verified(),
        Vec::new(),
        Quadrant::D,
        &[
            "classifier_path_default voted D: src/lib.rs is critical and src/lib.rs is removed",
            "classifier_auto_revert voted C: decision:auto-revert verified (applied by owner, receipt for head aaaaaaa): a recovery revert",
        ],
    );
}

#[test]
fn canonical_published_verdict_raises() {
    let mut pr = ordinary_pr(vec![modified("README.md")]);
    pr.check_runs = vec![
        check_run(
            CLASSIFIER_JUDGMENT_CHECK,
            Some(PUBLISHER),
            Some("Quadrant: D"),
        ),
        check_run(
            CLASSIFIER_JUDGMENT_CHECK,
            Some("intruder"),
            Some("Quadrant: A"),
        ),
    ];
    check(
        &pr,
        AutoRevertLabel::Absent,
        Vec::new(),
        Quadrant::D,
        &[
            "classifier_published_verdict voted D: classifier-judgment by mp-classifier publishes Quadrant D",
        ],
    );
}

#[test]
fn user_rules_raise_and_run_last() {
    check(
        &ordinary_pr(vec![modified("README.md")]),
        AutoRevertLabel::Absent,
        vec![
            user("docs_owner", Quadrant::B, "README.md is owned by docs"),
            user("lenient", Quadrant::A, "fine by me"),
        ],
        Quadrant::B,
        &["docs_owner voted B: README.md is owned by docs"],
    );
}

#[test]
fn user_rules_cannot_lower() {
    check(
        &ordinary_pr(vec![modified("config/gate.yml")]),
        AutoRevertLabel::Absent,
        vec![user("lenient", Quadrant::A, "config edits are fine")],
        Quadrant::D,
        &["classifier_path_default voted D: config/gate.yml is always D"],
    );
}

// ---- RuleId, Vote and Verdict values ----

#[track_caller]
fn check_display(verdict: &Verdict, line: &str, d_reasoning: &str) {
    assert_eq!(verdict.to_string(), line);
    assert_eq!(verdict.d_reasoning(), d_reasoning);
}

#[test]
fn verdict_line_names_the_deciding_votes() {
    let verdict = max_vote(vec![
        Vote::new(RuleId::PathDefault, Quadrant::D, "config/x.yml is always D"),
        Vote::new(
            RuleId::EmptyPr,
            Quadrant::A,
            "the pull request changes 1 file",
        ),
        user("strict", Quadrant::D, "Friday freeze"),
    ]);
    check_display(
        &verdict,
        "Quadrant D: classifier_path_default (config/x.yml is always D); strict (Friday freeze)",
        "config/x.yml is always D; Friday freeze",
    );
}

#[test]
fn no_votes_is_a() {
    check_display(&max_vote(Vec::new()), "Quadrant A: no rule voted", "");
}

#[test]
fn vote_line_matches_the_documented_form() {
    let vote = Vote::new(RuleId::PathDefault, Quadrant::D, "config/x.yml is always D");
    assert_eq!(
        vote.to_string(),
        "classifier_path_default voted D: config/x.yml is always D"
    );
}

#[test]
fn rule_codes_are_stable_and_round_trip() {
    let codes: Vec<&str> = RuleId::BUILT_IN.iter().map(RuleId::code).collect();
    assert_eq!(
        codes,
        [
            "classifier_path_default",
            "classifier_bot_self_repo",
            "classifier_empty_pr",
            "classifier_auto_revert",
            "classifier_published_verdict",
            "classifier_malformed_session",
        ]
    );
    for id in RuleId::BUILT_IN {
        assert_eq!(RuleId::from_code(id.code()), id);
        assert!(id.is_built_in());
    }
    let custom = RuleId::from_code("my_rule");
    assert_eq!(custom, RuleId::User("my_rule".to_owned()));
    assert!(!custom.is_built_in());
}

// ---- max-vote properties ----

fn quadrant_strategy() -> impl Strategy<Value = Quadrant> {
    prop::sample::select(vec![Quadrant::A, Quadrant::B, Quadrant::C, Quadrant::D])
}

fn vote_strategy() -> impl Strategy<Value = Vote> {
    let rule = prop_oneof![
        prop::sample::select(RuleId::BUILT_IN.to_vec()),
        "[a-z_]{1,12}".prop_map(RuleId::User),
    ];
    (rule, quadrant_strategy(), "[a-z ]{0,16}")
        .prop_map(|(rule, quadrant, reasoning)| Vote::new(rule, quadrant, reasoning))
}

fn votes_strategy() -> impl Strategy<Value = Vec<Vote>> {
    prop::collection::vec(vote_strategy(), 0..10)
}

proptest! {
    #[test]
    fn max_vote_is_order_independent(
        (votes, shuffled) in votes_strategy()
            .prop_flat_map(|v| (Just(v.clone()), Just(v).prop_shuffle()))
    ) {
        prop_assert_eq!(max_vote(votes).quadrant, max_vote(shuffled).quadrant);
    }

    #[test]
    fn adding_a_vote_never_lowers_the_quadrant(votes in votes_strategy(), extra in vote_strategy()) {
        let before = max_vote(votes.clone()).quadrant;
        let mut more = votes;
        more.push(extra.clone());
        let after = max_vote(more).quadrant;
        prop_assert!(after >= before);
        prop_assert!(after >= extra.quadrant);
    }

    #[test]
    fn verdict_keeps_every_vote_and_is_their_maximum(votes in votes_strategy()) {
        let verdict = max_vote(votes.clone());
        prop_assert_eq!(&verdict.votes, &votes);
        prop_assert!(votes.iter().all(|v| v.quadrant <= verdict.quadrant));
        let reached = votes.iter().any(|v| v.quadrant == verdict.quadrant);
        prop_assert!(reached || (votes.is_empty() && verdict.quadrant == Quadrant::A));
    }

    #[test]
    fn user_votes_only_raise_and_leave_built_in_votes_alone(
        user_votes in votes_strategy(),
        files in prop::sample::select(vec![
            vec![],
            vec![modified("README.md")],
            vec![modified("src/a.rs")],
            vec![removed("README.md")],
            vec![modified("config/x.yml")],
        ]),
    ) {
        let bot_repo = repo("acme/governance");
        let path_rules = PathRules::default();
        let facts = ClassifierFacts {
            bot_repo: &bot_repo,
            path_rules: &path_rules,
            publisher_slug: None,
            auto_revert: AutoRevertLabel::Absent,
        };
        let pr = ordinary_pr(files);
        let alone = classify(&pr, &facts, Vec::new());
        let with_users = classify(&pr, &facts, user_votes.clone());
        prop_assert!(with_users.quadrant >= alone.quadrant);
        prop_assert_eq!(&with_users.votes[..alone.votes.len()], &alone.votes[..]);
        prop_assert_eq!(&with_users.votes[alone.votes.len()..], &user_votes[..]);
    }
}

/// Disabling `classifier_empty_pr` does not turn off its listing-cap half: a file list
/// GitHub cut short is never classified as if it were whole.
#[test]
fn the_listing_cap_votes_d_even_with_the_empty_pr_rule_disabled() {
    let bot_repo = repo("acme/governance");
    let path_rules = PathRules::default();
    let facts = ClassifierFacts {
        bot_repo: &bot_repo,
        path_rules: &path_rules,
        publisher_slug: Some(PUBLISHER),
        auto_revert: AutoRevertLabel::Absent,
    };
    let files: Vec<FileChange> = (0..empty_pr::FILE_LISTING_CAP)
        .map(|i| FileChange {
            path: format!("docs/page-{i}.md"),
            status: crate::context::FileStatus::Modified,
            additions: 1,
            deletions: 0,
            previous_filename: None,
        })
        .collect();
    let pr = ordinary_pr(files);
    let built_ins = EnabledBuiltIns::ALL.without(BuiltIn::EmptyPr);
    let verdict = classify_with(&pr, &facts, Vec::new(), built_ins);
    assert_eq!(verdict.quadrant, Quadrant::D, "{verdict:?}");
    let mut small = pr.clone();
    small.files.truncate(10);
    let verdict = classify_with(&small, &facts, Vec::new(), built_ins);
    assert!(
        verdict.votes.iter().all(|v| v.rule != RuleId::EmptyPr),
        "disabled below the cap: {verdict:?}"
    );
}

#[test]
fn a_rule_disabled_in_skills_yml_is_not_run_and_the_required_one_still_is() {
    let bot_repo = repo("acme/governance");
    let path_rules = PathRules::default();
    let facts = ClassifierFacts {
        bot_repo: &bot_repo,
        path_rules: &path_rules,
        publisher_slug: Some(PUBLISHER),
        auto_revert: AutoRevertLabel::Absent,
    };
    let mut empty_on_bot_repo = ordinary_pr(Vec::new());
    empty_on_bot_repo.repo = repo("acme/governance");
    let skills = crate::config::SkillsPolicy::default()
        .with_disabled("classifier_empty_pr")
        .with_disabled("classifier_bot_self_repo");
    let verdict = classify_with(&empty_on_bot_repo, &facts, Vec::new(), skills.built_ins());
    let rules: Vec<&str> = verdict.votes.iter().map(|v| v.rule.code()).collect();
    assert_eq!(
        rules,
        [
            "classifier_path_default",
            "classifier_bot_self_repo",
            "classifier_auto_revert",
            "classifier_published_verdict",
            "classifier_malformed_session",
        ]
    );
    assert_eq!(
        verdict.quadrant,
        Quadrant::D,
        "the bot-repo rule is required"
    );
    let mut empty = ordinary_pr(Vec::new());
    empty.repo = repo("acme/app");
    assert_eq!(
        classify_with(&empty, &facts, Vec::new(), skills.built_ins()).quadrant,
        Quadrant::A,
        "the empty-PR rule is off"
    );
    assert_eq!(classify(&empty, &facts, Vec::new()).quadrant, Quadrant::D);
}
