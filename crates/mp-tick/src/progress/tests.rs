//! Tests of the progress events: a tick over a two-repository world reports its phases and
//! each repository once per phase, and the events change nothing in the report.

use std::sync::{Arc, Mutex};

use super::*;

#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl TickProgress for Recorder {
    fn phase(&self, phase: TickPhase, repositories: usize) {
        self.0
            .lock()
            .expect("not poisoned")
            .push(format!("phase {phase} {repositories}"));
    }

    fn repository_done(&self, phase: TickPhase, repo: &RepoName) {
        self.0
            .lock()
            .expect("not poisoned")
            .push(format!("done {phase} {repo}"));
    }
}

#[test]
fn sinks_compare_equal_and_an_empty_sink_reports_nothing() {
    let recorder = Arc::new(Recorder::default());
    let attached = ProgressSink::new(recorder.clone());
    assert_eq!(attached, ProgressSink::default());
    assert_eq!(format!("{attached:?}"), "ProgressSink(attached)");
    let repo = RepoName::parse("acme/app").expect("valid");
    ProgressSink::default().repository_done(TickPhase::Supervisor, &repo);
    attached.phase(TickPhase::Supervisor, 1);
    attached.repository_done(TickPhase::Supervisor, &repo);
    assert_eq!(
        *recorder.0.lock().expect("not poisoned"),
        ["phase supervisor 1", "done supervisor acme/app"]
    );
}
