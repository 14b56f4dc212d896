//! The lease's rules over the in-memory GitHub, on a virtual clock (each call is given
//! its instant): a restart takes its own lease back at once, another identity and a live
//! incarnation of the same identity wait for expiry, a renewal extends, and a holder that
//! wakes after expiry finds the lease lost and writes nothing.

use std::sync::Arc;

use mp_core::port::{GitHubHistory, Write};
use mp_github_fake::MemoryGitHub;

use super::*;
use crate::testkit::{at, block_on, repo};

const GOV: &str = "acme/governance";
const T0: &str = "2026-03-01T12:00:00Z";

fn github() -> MemoryGitHub {
    let text = format!(
        "now: {T0}
bot: mp-gate
repos:
  - name: {GOV}
    commits:
      - {{id: \"{f}\", message: \"docs: governance\", committer: \"mp-gate[bot]\", date: 2026-02-01T10:00:00Z}}
    branches: {{main: \"{f}\", bot-state: \"{f}\"}}
",
        f = "f".repeat(40)
    );
    MemoryGitHub::new(mp_github_fake::parse_world("lease.yaml", &text, None).expect("parses"))
}

/// Says every incarnation on `host` other than `alive` is gone.
struct OnlyAlive {
    host: String,
    alive: Vec<u32>,
}

impl Liveness for OnlyAlive {
    fn gone(&self, other: &Incarnation) -> bool {
        other.host == self.host && !self.alive.contains(&other.pid)
    }
}

fn incarnation(host: &str, pid: u32, started: &str) -> Incarnation {
    Incarnation {
        host: host.to_owned(),
        pid,
        started: started.to_owned(),
    }
}

/// `serve@h1` running as pid `pid`, seeing only `alive` pids on `h1` alive.
fn serve(pid: u32, alive: &[u32]) -> LeaseHolder {
    LeaseHolder::new("serve@h1", incarnation("h1", pid, &format!("start-{pid}"))).with_liveness(
        Arc::new(OnlyAlive {
            host: "h1".to_owned(),
            alive: alive.to_vec(),
        }),
    )
}

fn take(github: &MemoryGitHub, holder: &LeaseHolder, when: &str) -> Result<Lease, LeaseError> {
    block_on(Lease::take_for(
        github,
        &repo(GOV),
        None,
        holder,
        LeaseTerms::default(),
        at(when),
    ))
}

fn lease_writes(github: &MemoryGitHub) -> usize {
    github
        .actions()
        .iter()
        .filter(|a| matches!(a, Write::PutFile { write, .. } if write.path == LEASE_PATH))
        .count()
}

fn held_until(error: &LeaseError) -> Option<&str> {
    match error {
        LeaseError::Held { until, .. } => Some(until),
        _ => None,
    }
}

#[test]
fn the_default_terms_renew_every_minute_and_stop_after_two() {
    let terms = LeaseTerms::default();
    assert_eq!(terms.seconds(), 180);
    assert_eq!(terms.renew_every().as_secs(), 60);
    assert_eq!(terms.renew_deadline().as_secs(), 120);
    assert_eq!(LeaseTerms::new(0).seconds(), MIN_LEASE_SECONDS);
    assert_eq!(LeaseTerms::new(86_400).seconds(), MAX_LEASE_SECONDS);
}

#[test]
fn a_restarted_holder_takes_its_own_lease_back_at_once() {
    let github = github();
    take(&github, &serve(100, &[100]), T0).expect("taken");
    // kill -9: pid 100 is gone; the restart (pid 200, same identity) takes it a second later.
    let lease = take(&github, &serve(200, &[200]), "2026-03-01T12:00:01Z")
        .expect("its own dead incarnation's lease is taken back at once");
    assert_eq!(lease.until(), at("2026-03-01T12:03:01Z"));
    let text = block_on(github.file(&repo(GOV), LEASE_PATH, "bot-state"))
        .expect("read")
        .expect("a file")
        .text;
    assert!(text.contains("\"pid\": 200"), "{text}");
    assert!(!text.contains("\"pid\": 100"), "{text}");
}

#[test]
fn a_live_incarnation_of_the_same_identity_holds_until_expiry() {
    let github = github();
    take(&github, &serve(100, &[100, 200]), T0).expect("taken");
    // A second copy on the same host while the first is alive: it waits.
    let error = take(&github, &serve(200, &[100, 200]), "2026-03-01T12:01:00Z")
        .expect_err("the first copy is alive");
    assert_eq!(held_until(&error), Some("2026-03-01T12:03:00Z"), "{error}");
    assert!(
        error
            .to_string()
            .contains("serve@h1 (h1 pid 100 started start-100)"),
        "{error}"
    );
    // The same name on another host cannot be checked: it waits too.
    let elsewhere = LeaseHolder::new("serve@h1", incarnation("h2", 100, "x")).with_liveness(
        Arc::new(OnlyAlive {
            host: "h2".to_owned(),
            alive: Vec::new(),
        }),
    );
    assert!(take(&github, &elsewhere, "2026-03-01T12:01:00Z").is_err());
    // Once it expired, anyone takes it.
    take(&github, &serve(200, &[100, 200]), "2026-03-01T12:03:00Z").expect("expired");
}

#[test]
fn another_identity_waits_for_expiry_even_when_the_holder_is_dead() {
    let github = github();
    take(&github, &serve(100, &[]), T0).expect("taken");
    let standby = LeaseHolder::new("serve@h2", incarnation("h2", 7, "s")).with_liveness(Arc::new(
        OnlyAlive {
            host: "h1".to_owned(),
            alive: Vec::new(),
        },
    ));
    let error = take(&github, &standby, "2026-03-01T12:02:59Z").expect_err("not yet");
    assert_eq!(held_until(&error), Some("2026-03-01T12:03:00Z"));
    // Within one lease duration of the active one's last renewal, the standby holds it.
    take(&github, &standby, "2026-03-01T12:03:00Z").expect("taken over after expiry");
}

#[test]
fn a_renewal_extends_the_lease_by_its_duration() {
    let github = github();
    let mut lease = take(&github, &serve(100, &[100]), T0).expect("taken");
    block_on(lease.renew(&github, at("2026-03-01T12:01:00Z"))).expect("renewed");
    assert_eq!(lease.until(), at("2026-03-01T12:04:00Z"));
    let other = LeaseHolder::from("tick@h2");
    let error = take(&github, &other, "2026-03-01T12:03:30Z").expect_err("renewed: held");
    assert_eq!(held_until(&error), Some("2026-03-01T12:04:00Z"));
}

#[test]
fn a_frozen_holder_that_wakes_after_expiry_finds_it_lost_and_writes_nothing() {
    let github = github();
    let mut lease = take(&github, &serve(100, &[100]), T0).expect("taken");
    // Frozen (SIGSTOP) past its lease; nobody took it meanwhile: it is lost all the same.
    let before = lease_writes(&github);
    let error = block_on(lease.renew(&github, at("2026-03-01T12:03:00Z"))).expect_err("expired");
    assert!(matches!(error, LeaseError::Lost { .. }), "{error}");
    assert_eq!(
        error.to_string(),
        "the tick lease (all) was lost: it expired at 2026-03-01T12:03:00Z before it was renewed (now 2026-03-01T12:03:00Z); stopping before the next write"
    );
    assert_eq!(lease_writes(&github), before, "no write after the expiry");
}

#[test]
fn a_holder_whose_lease_was_taken_over_finds_it_lost() {
    let github = github();
    let mut lease = take(&github, &serve(100, &[100]), T0).expect("taken");
    let standby = LeaseHolder::new("serve@h2", incarnation("h2", 7, "s"));
    take(&github, &standby, "2026-03-01T12:03:00Z").expect("taken over");
    // The old holder's clock says it is still in time (it was frozen mid-renewal), but the
    // file names the standby: lost, and nothing is written.
    lease.until = at("2026-03-01T12:10:00Z");
    lease.written = None;
    let before = lease_writes(&github);
    let error = block_on(lease.renew(&github, at("2026-03-01T12:03:01Z"))).expect_err("lost");
    assert!(
        error
            .to_string()
            .contains("serve@h2 (h2 pid 7 started s) holds it"),
        "{error}"
    );
    assert_eq!(lease_writes(&github), before);
    // Giving it back leaves the standby's entry alone.
    block_on(lease.release(&github, at("2026-03-01T12:03:01Z"))).expect("nothing to give back");
    assert_eq!(lease_writes(&github), before);
}

#[test]
fn an_entry_of_a_longer_lease_of_mp_s_holds_a_shorter_one_out() {
    let github = github();
    take(&github, &LeaseHolder::from("serve@h9"), T0).expect("taken");
    // A tick on 30-minute terms (its default, or MP_LEASE_SECONDS) holds a process on
    // 3-minute terms out: the bound is the longest lease mp takes, not the reader's own.
    let ticker = LeaseHolder::from("tick@h7");
    let mut long = take(&github, &ticker, "2026-03-01T12:03:00Z").expect("taken");
    long.terms = LeaseTerms::new(MAX_LEASE_SECONDS);
    block_on(long.renew(&github, at("2026-03-01T12:04:00Z"))).expect("written");
    take(&github, &serve(1, &[1]), "2026-03-01T12:05:00Z")
        .expect_err("a 30-minute entry of mp's holds a 3-minute process out");
}
