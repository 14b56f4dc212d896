//! Tests for the dry run's Git data writes: planned, answered as done, and seen by later
//! reads of the branch, with nothing written.

use super::{DryRun, PlannedWrite};
use crate::testkit::{Fake, block_on, repo, sha};
use crate::testkit_history::commit_by;
use mp_core::port::{GitHub, GitHubHistory};

#[test]
fn a_planned_merge_answers_a_synthetic_commit_and_a_planned_ref_update_moves_the_branch() {
    let fake = Fake::new(Vec::new());
    fake.set_main("acme/app", vec![commit_by("b0", "init", Some("alice"))]);
    fake.set_branch(
        "acme/app",
        "mp-queue-build/main",
        vec![commit_by("b0", "init", Some("alice"))],
    );
    let dry = DryRun::with_history(&fake);
    let app = repo("acme/app");
    let build = "mp-queue-build/main";
    let (first, second, head, moved) = block_on(async {
        let first = dry
            .merge_into_branch(&app, build, &sha("a1"), "Merge #1")
            .await;
        let second = dry
            .merge_into_branch(&app, build, &sha("a2"), "Merge #2")
            .await;
        let head = dry.branch_head(&app, build).await;
        let tip = second.clone().ok().flatten().expect("a planned merge");
        let moved = dry.update_branch_ref(&app, "main", &tip, false).await;
        let main = dry.branch_head(&app, "main").await;
        (first, second, head, moved.and(main))
    });
    let first = first.expect("planned").expect("a merge commit");
    let second = second.expect("planned").expect("a merge commit");
    assert_ne!(first, second, "each planned merge has its own commit");
    assert_ne!(first, sha("a1"), "not the merged head");
    assert_eq!(
        head,
        Ok(second.clone()),
        "the branch reads at the last merge"
    );
    assert_eq!(moved, Ok(second.clone()), "main reads at the planned tip");
    let planned: Vec<String> = dry
        .planned_writes()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        planned,
        [
            "would merge a100000 into mp-queue-build/main in acme/app: Merge #1".to_owned(),
            "would merge a200000 into mp-queue-build/main in acme/app: Merge #2".to_owned(),
            format!("would move main in acme/app to {}", second.short()),
        ]
    );
    assert!(matches!(
        dry.planned_writes()[2],
        PlannedWrite::UpdateBranchRef { force: false, .. }
    ));
    assert!(fake.take_log().is_empty(), "nothing was written");
}
