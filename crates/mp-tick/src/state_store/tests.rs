//! Tests for the sharded save: two shards that loaded the same file and save one after the
//! other both end up in it; a save that only ever meets stale blobs gives up after a bounded
//! number of attempts, as an unsharded save does after one. The governance repository is
//! the in-memory GitHub's.

use super::*;
use crate::dry_run::DryRun;
use crate::testkit::{BOT, block_on, login, repo, sha};
use mp_core::port::Write;
use mp_core::state::Layer;
use mp_github_fake::{Endpoint, Failure, MemoryGitHub};

const GOV: &str = "acme/governance";
/// Shard 0 of 2 owns `acme/infra`; shard 1 of 2 owns `acme/app` (pinned in `shard`).
const INFRA: &str = "acme/infra";
const APP: &str = "acme/app";

/// The watermarks with both layers of each `(repo, sha prefix)`.
fn marks(entries: &[(&str, &str)]) -> Watermarks {
    let mut state = Watermarks::new();
    for (name, prefix) in entries {
        for layer in Layer::ALL {
            state.set(&repo(name), layer, sha(prefix));
        }
    }
    state
}

/// The commit mp wrote the state in, and the one an agent or the owner pushed over it
/// (quoted for YAML: all digits).
const STATE_5: &str = "\"5000000000000000000000000000000000000000\"";
const STATE_6: &str = "\"6000000000000000000000000000000000000000\"";

/// Who last wrote the `bot-state` branch after mp created it at `5` (09:00): nobody, or
/// a login that pushed `6` (`Some`) or deleted the branch (`None`) at 10:00.
type Writer<'a> = Option<(&'a str, Option<&'a str>)>;

/// A governance repository (next issue number 100) whose `bot-state` branch holds
/// `entries` (`None`: there is no branch), last written as `writer` says.
fn world(entries: Option<&[(&str, &str)]>, writer: Writer<'_>) -> MemoryGitHub {
    let mut text = format!(
        "now: 2026-03-01T12:00:00Z
bot: mp-gate
repos:
  - name: {GOV}
    commits:
      - {{id: g1, message: init}}
      - {{id: {STATE_5}, message: \"chore: state\", author: {BOT:?}, committer: {BOT:?}, date: 2026-03-01T09:00:00Z}}
      - {{id: {STATE_6}, message: \"chore: state, edited\", parents: [{STATE_5}], date: 2026-03-01T10:00:00Z}}
    issues:
      - {{number: 99, title: an earlier issue, state: closed}}
"
    );
    let head = match writer {
        None => Some(STATE_5),
        Some((_, to)) => to.map(|_| STATE_6),
    };
    match head {
        Some(head) if entries.is_some() => {
            text.push_str(&format!(
                "    branches: {{main: g1, {BOT_STATE_BRANCH}: {head}}}\n"
            ));
        }
        _ => text.push_str("    branches: {main: g1}\n"),
    }
    if let (Some(entries), Some(_)) = (entries, head) {
        let json = marks(entries).to_json();
        text.push_str(&format!(
            "    branch_files: {{{BOT_STATE_BRANCH}: {{{WATERMARKS_PATH:?}: {json:?}}}}}\n"
        ));
    }
    if let Some((login, to)) = writer {
        let last = match to {
            Some(_) => format!("{{to: {STATE_6}, by: {login}, at: 2026-03-01T10:00:00Z}}"),
            None => format!("{{type: branch_deletion, by: {login}, at: 2026-03-01T10:00:00Z}}"),
        };
        text.push_str(&format!(
            "    activity:\n      {BOT_STATE_BRANCH}:\n        - {{type: branch_creation, to: {STATE_5}, by: {BOT:?}, at: 2026-03-01T09:00:00Z}}\n        - {last}\n"
        ));
    }
    let world = mp_github_fake::parse_world("state.yaml", &text, None)
        .unwrap_or_else(|err| panic!("the test world parses: {err}\n{text}"));
    MemoryGitHub::new(world)
}

/// A governance repository whose `bot-state` branch, written by mp, holds `entries`.
fn fake_with(entries: &[(&str, &str)]) -> MemoryGitHub {
    world(Some(entries), None)
}

/// The watermarks file on `bot-state`, if there is one.
fn state_file(github: &MemoryGitHub) -> Option<String> {
    github.read(|w| {
        let files = w.repo(&repo(GOV))?.branch_files.get(BOT_STATE_BRANCH)?;
        files.get(WATERMARKS_PATH).cloned()
    })
}

/// mp's identity writes the state; alice may restore it.
fn guard() -> StateGuard {
    StateGuard::new(
        IncidentAuthority::new(login(BOT), repo(GOV)),
        vec![login("alice")],
    )
}

fn load(fake: &MemoryGitHub) -> (StateStore, Watermarks) {
    block_on(StateStore::load(fake, &repo(GOV), "main", &guard())).expect("the state loads")
}

fn outcome_name(saved: &Result<SaveOutcome, TickError>) -> String {
    match saved {
        Ok(SaveOutcome::Written) => "written".to_owned(),
        Ok(SaveOutcome::Unchanged) => "unchanged".to_owned(),
        Ok(SaveOutcome::Skipped { warning }) => format!("skipped: {warning}"),
        Err(error) => format!("error: {error}"),
    }
}

/// One save: store `0` or `1` moves `repo` to the SHA prefix and saves as shard `shard`
/// (`None`: unsharded), expecting `outcome` ("written", "unchanged" or "skipped: ...").
struct Save<'a>(usize, &'a str, &'a str, Option<&'a str>, &'a str);

/// Loads two stores from a file holding `initial` (both before any save, as two shards
/// running at the same time do), runs `saves` in order, then compares the file with
/// `expected` and the number of writes with `writes`.
#[track_caller]
fn check(fake: &MemoryGitHub, saves: &[Save<'_>], expected: &[(&str, &str)], writes: usize) {
    let mut stores = [load(fake), load(fake)];
    let before = fake.actions().len();
    for Save(n, name, prefix, shard, outcome) in saves {
        let (store, state) = &mut stores[*n];
        for layer in Layer::ALL {
            state.set(&repo(name), layer, sha(prefix));
        }
        let saved = match shard {
            Some(text) => {
                let shard = Shard::parse(text).expect("a valid shard");
                block_on(store.save_shard(fake, state, shard))
            }
            None => block_on(store.save(fake, state)),
        };
        assert_eq!(
            outcome_name(&saved),
            *outcome,
            "store {n} saving {name} as {shard:?}"
        );
    }
    let text = state_file(fake);
    assert_eq!(text, Some(marks(expected).to_json()), "the file");
    let put = fake.actions()[before..]
        .iter()
        .filter(|action| matches!(action, Write::PutFile { .. }))
        .count();
    assert_eq!(put, writes, "the writes");
}

const INITIAL: [(&str, &str); 2] = [(APP, "a1"), (INFRA, "b1")];

#[test]
fn interleaved_shard_saves_keep_both_shards_entries() {
    // Both shards read the file; shard 0 writes first, so shard 1's blob is stale: it
    // reads the file again, merges its entries over it and writes.
    check(
        &fake_with(&INITIAL),
        &[
            Save(0, INFRA, "b2", Some("0/2"), "written"),
            Save(1, APP, "a2", Some("1/2"), "written"),
        ],
        &[(APP, "a2"), (INFRA, "b2")],
        2,
    );
}

#[test]
fn interleaved_shard_saves_in_the_other_order_keep_both() {
    check(
        &fake_with(&INITIAL),
        &[
            Save(1, APP, "a2", Some("1/2"), "written"),
            Save(0, INFRA, "b2", Some("0/2"), "written"),
            Save(1, APP, "a3", Some("1/2"), "written"),
        ],
        &[(APP, "a3"), (INFRA, "b2")],
        3,
    );
}

#[test]
fn a_shard_never_writes_another_shards_repository() {
    // Store 0 moves acme/app, which shard 0 does not own: nothing to write.
    check(
        &fake_with(&INITIAL),
        &[Save(0, APP, "a9", Some("0/2"), "unchanged")],
        &INITIAL,
        0,
    );
}

#[test]
fn unsharded_save_over_a_stale_blob_is_still_skipped() {
    // The whole tick keeps today's rule: a stale blob skips the save with a warning, and
    // the next save re-reads the blob and writes the whole state.
    check(
        &fake_with(&INITIAL),
        &[
            Save(0, INFRA, "b2", None, "written"),
            Save(
                1,
                APP,
                "a2",
                None,
                "skipped: bot-state/branch_supervisor_watermarks.json not saved (acme/governance \
                 bot-state/branch_supervisor_watermarks.json: \
                 bot-state/branch_supervisor_watermarks.json does not match \
                 0bee1e7f11b70f0006d75f49ee48a45f0ff188a4); the blob is re-read on the next save",
            ),
        ],
        &[(APP, "a1"), (INFRA, "b2")],
        1,
    );
}

#[test]
fn shard_save_gives_up_after_bounded_attempts() {
    let fake = fake_with(&INITIAL);
    fake.fail(
        Failure::on(
            Endpoint::PutContents,
            GitHubError::Conflict {
                what: format!("{GOV} {WATERMARKS_PATH}"),
                message: "stale blob".to_owned(),
            },
        )
        .in_repo(&repo(GOV)),
    );
    check(
        &fake,
        &[Save(
            0,
            INFRA,
            "b2",
            Some("0/2"),
            "skipped: bot-state/branch_supervisor_watermarks.json not saved (acme/governance \
             bot-state/branch_supervisor_watermarks.json: stale blob); the blob is re-read on \
             the next save",
        )],
        &INITIAL,
        0,
    );
}

#[test]
fn a_merge_replaces_every_entry_of_the_own_repositories_only() {
    let t1 = crate::testkit::at("2026-03-01T12:00:00Z");
    let t2 = crate::testkit::at("2026-03-02T12:00:00Z");
    // The file: both repositories with an unsettled and a pending break-glass commit, and
    // a key this version does not know.
    let mut base = marks(&INITIAL);
    base.track_unsettled(&repo(APP), &sha("a1"), t1);
    base.track_unsettled(&repo(INFRA), &sha("b1"), t1);
    base.track_break_glass(&repo(APP), &sha("a0"), t1);
    base.track_break_glass(&repo(INFRA), &sha("b0"), t1);
    let mut text: serde_json::Value = serde_json::from_str(&base.to_json()).expect("json");
    text["_future"] = serde_json::json!({"kept": true});
    let base = Watermarks::parse(&text.to_string()).expect("a valid state");
    // Shard 0 (acme/infra) settled b1, audited b0 and saw b2 unsettled; its stale view of
    // acme/app is ignored.
    let mut mine = marks(&[(APP, "a9"), (INFRA, "b2")]);
    mine.track_unsettled(&repo(INFRA), &sha("b2"), t2);
    let shard = Shard::parse("0/2").expect("a valid shard");
    let merged = mine.merged_into(&base, |r| shard.owns(r));
    let mut expected = marks(&[(APP, "a1"), (INFRA, "b2")]);
    expected.track_unsettled(&repo(APP), &sha("a1"), t1);
    expected.track_unsettled(&repo(INFRA), &sha("b2"), t2);
    expected.track_break_glass(&repo(APP), &sha("a0"), t1);
    let mut expected: serde_json::Value = serde_json::from_str(&expected.to_json()).expect("json");
    expected["_future"] = serde_json::json!({"kept": true});
    let got: serde_json::Value = serde_json::from_str(&merged.to_json()).expect("json");
    assert_eq!(got, expected);
    assert_eq!(merged.unsettled_count_of(|r| shard.owns(r)), 1);
}

#[test]
fn a_state_written_by_an_agent_fails_closed_with_an_incident_naming_it() {
    let fake = world(Some(&[(APP, "1")]), Some(("codex-agent", Some("6"))));
    let error = block_on(StateStore::load(&fake, &repo(GOV), "main", &guard()))
        .map(|_| ())
        .expect_err("a steered state fails closed");
    assert_eq!(
        error.to_string(),
        "the state on bot-state cannot be trusted, failing closed: codex-agent wrote the bot-state branch at 2026-03-01T10:00:00Z (push to 6000000), GitHub's activity log (state_written_by_other); reported as acme/governance#100; the owner restores it by hand (docs/state.md, \"Recovering the state\")"
    );
    let log = fake.actions();
    assert_eq!(log.len(), 1, "{log:?}");
    let Write::CreateIssue { issue, .. } = &log[0] else {
        panic!("an issue: {log:?}")
    };
    assert_eq!(issue.labels, ["decision:state-tampered"]);
    assert!(
        log[0]
            .log_line()
            .starts_with("open issue acme/governance#100: [decision:state-tampered] 6000000"),
        "{log:?}"
    );
}

#[test]
fn a_dry_run_says_the_incident_was_planned_not_reported() {
    let fake = world(Some(&[(APP, "1")]), Some(("codex-agent", Some("6"))));
    let dry = DryRun::with_history(&fake);
    let error = block_on(StateStore::load(&dry, &repo(GOV), "main", &guard()))
        .map(|_| ())
        .expect_err("a steered state fails closed");
    let text = error.to_string();
    assert!(
        text.contains("; to be reported in acme/governance (planned by this dry run, not opened);"),
        "{text}"
    );
    assert!(!text.contains("reported as"), "{text}");
    assert!(fake.actions().is_empty());
    assert_eq!(dry.planned_writes().len(), 1, "{:?}", dry.planned_writes());
}

#[test]
fn a_state_the_owner_restored_is_trusted_and_said_so() {
    let fake = world(Some(&[(APP, "1")]), Some(("alice", Some("6"))));
    let (store, state) = load(&fake);
    // The restore is accepted once: the checked tip moves past it.
    let mut expected = marks(&[(APP, "1")]);
    expected.set_checked_through(sha("6"));
    assert_eq!(state, expected);
    assert_eq!(
        store.notes(),
        [
            "bot-state was last restored by allowlisted alice at 2026-03-01T10:00:00Z; the state they left is trusted"
        ]
    );
    assert!(fake.actions().is_empty());
}

#[test]
fn a_branch_an_agent_deleted_is_not_a_first_run() {
    let fake = world(None, Some(("codex-agent", None)));
    let error = block_on(StateStore::load(&fake, &repo(GOV), "main", &guard()))
        .map(|_| ())
        .expect_err("a deleted state fails closed");
    assert!(
        error.to_string().contains(
            "codex-agent deleted the bot-state branch at 2026-03-01T10:00:00Z (it was at 5000000)"
        ),
        "{error}"
    );
    let log = fake.actions();
    assert!(
        log.iter()
            .all(|action| matches!(action, Write::CreateIssue { .. })),
        "nothing but the incident is written: {log:?}"
    );
}
