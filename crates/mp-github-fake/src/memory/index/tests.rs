//! Tests of the lookup tables: they answer what a scan answers, also after the world
//! changes behind their back.

use mp_core::ids::{PrNumber, RepoName};

use super::WorldIndex;
use crate::world::{Repo, World, synthetic_world};

/// What a scan answers, for comparison: (repository, commit of each SHA asked, pull of
/// each number asked), by position.
type Answers = (Option<usize>, Vec<Option<usize>>, Vec<Option<usize>>);

fn scan(world: &World, name: &RepoName, shas: &[usize], numbers: &[u64]) -> Answers {
    let Some(position) = world.repos.iter().position(|r| &r.name == name) else {
        return (None, Vec::new(), Vec::new());
    };
    let repo = &world.repos[position];
    let commits = shas
        .iter()
        .map(|i| {
            let sha = &world.repos[0].commits[*i].sha;
            repo.commits.iter().position(|c| &c.sha == sha)
        })
        .collect();
    let pulls = numbers
        .iter()
        .map(|n| {
            repo.pulls
                .iter()
                .position(|p| p.number == PrNumber::new(*n))
        })
        .collect();
    (Some(position), commits, pulls)
}

fn look_up(
    index: &mut WorldIndex,
    world: &World,
    name: &RepoName,
    shas: &[usize],
    numbers: &[u64],
) -> Answers {
    let Some(position) = index.repo(world, name) else {
        return (None, Vec::new(), Vec::new());
    };
    let repo = &world.repos[position];
    let tables = index.tables(position, repo);
    let commits = shas
        .iter()
        .map(|i| tables.commit(repo, &world.repos[0].commits[*i].sha))
        .collect();
    let pulls = numbers
        .iter()
        .map(|n| tables.pull(repo, PrNumber::new(*n)))
        .collect();
    (Some(position), commits, pulls)
}

/// Looks up the first repository's commits (by position in the original world) and pull
/// numbers, before and after `change`, and compares each answer with a scan.
#[track_caller]
fn check(change: impl FnOnce(&mut World), shas: &[usize], numbers: &[u64]) {
    let mut world = synthetic_world(2, 6, 3);
    let name = world.repos[0].name.clone();
    let original = world.clone();
    let mut index = WorldIndex::default();
    let before = look_up(&mut index, &world, &name, shas, numbers);
    assert_eq!(
        before,
        scan(&world, &name, shas, numbers),
        "before the change"
    );
    change(&mut world);
    let mut lookup_world = world.clone();
    // Commits asked by position in the original world, so they stay comparable.
    lookup_world.repos.insert(0, original.repos[0].clone());
    lookup_world.repos[0].name = RepoName::parse("other/original").expect("valid");
    let after = look_up(&mut index, &lookup_world, &name, shas, numbers);
    assert_eq!(
        after,
        scan(&lookup_world, &name, shas, numbers),
        "after the change"
    );
}

#[test]
fn an_unchanged_world_answers_like_a_scan() {
    check(|_| {}, &[0, 3, 5], &[1, 6, 7]);
}

#[test]
fn appended_commits_and_pulls_are_found() {
    check(
        |world| {
            let repo = &mut world.repos[0];
            let moved = repo.commits.remove(2);
            repo.commits.push(moved);
            let pull = repo.pulls.remove(0);
            repo.pulls.push(pull);
        },
        &[0, 2, 4],
        &[1, 2, 6],
    );
}

#[test]
fn a_world_rewritten_in_place_is_still_answered_right() {
    check(
        |world| {
            let repo = &mut world.repos[0];
            repo.commits.reverse();
            repo.pulls.reverse();
            repo.pulls.truncate(3);
        },
        &[0, 1, 2, 3],
        &[1, 2, 5, 6],
    );
}

#[test]
fn a_removed_repository_is_not_found() {
    check(
        |world| {
            world.repos.remove(0);
            world
                .repos
                .push(Repo::new(RepoName::parse("acme/new").expect("valid")));
        },
        &[0],
        &[1],
    );
}

#[test]
fn appended_commits_are_taken_at_once() {
    let mut world = synthetic_world(1, 2, 3);
    let name = world.repos[0].name.clone();
    let mut index = WorldIndex::default();
    let position = index.repo(&world, &name).expect("the repository");
    let mut extra = world.repos[0].commits[0].clone();
    extra.id = "appended".to_owned();
    extra.sha = crate::world::commit_sha(&name, "appended");
    let (id, sha) = (extra.id.clone(), extra.sha.clone());
    assert!(
        !index
            .tables(position, &world.repos[0])
            .commit_taken(&id, &sha)
    );
    world.repos[0].commits.push(extra);
    assert!(
        index
            .tables(position, &world.repos[0])
            .commit_taken(&id, &sha)
    );
}
