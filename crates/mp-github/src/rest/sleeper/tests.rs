//! Tests for `VirtualClock`: sleeps move it, request deadlines run out on it.

use std::sync::Arc;
use std::time::Duration;

use super::{Sleeper, VirtualClock};

#[tokio::test(flavor = "current_thread")]
async fn a_request_deadline_runs_out_when_waits_on_the_virtual_clock_pass_it() {
    let clock = Arc::new(VirtualClock::new());
    let start = clock.now();
    let deadline = tokio::spawn({
        let clock = Arc::clone(&clock);
        async move { clock.request_deadline(Duration::from_millis(250)).await }
    });
    tokio::task::yield_now().await;
    clock.sleep(Duration::from_millis(100)).await;
    tokio::task::yield_now().await;
    assert!(!deadline.is_finished(), "100 ms of 250 have passed");
    clock.sleep(Duration::from_millis(500)).await;
    deadline.await.expect("the deadline runs out");
    assert_eq!(clock.elapsed(), Duration::from_millis(600));
    assert_eq!(clock.now() - start, Duration::from_millis(600));
}

#[tokio::test(flavor = "current_thread")]
async fn a_deadline_counts_from_when_it_is_asked_for() {
    let clock = VirtualClock::new();
    clock.sleep(Duration::from_secs(10)).await;
    let deadline = clock.request_deadline(Duration::from_millis(250));
    tokio::pin!(deadline);
    // A zero timeout polls the deadline once: no wall-clock wait.
    assert!(
        tokio::time::timeout(Duration::ZERO, &mut deadline)
            .await
            .is_err(),
        "time passed before the request does not count"
    );
    clock.sleep(Duration::from_millis(250)).await;
    deadline.await;
}
