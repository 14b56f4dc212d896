//! Tests of `cargo xtask gen-world`: its arguments, and that what it writes is a world.

use std::path::PathBuf;

use super::{Args, DEFAULT_SEED, parse_args, render};

#[track_caller]
fn check(args: &[&str], expected: Result<Args, &str>) {
    let got = parse_args(args).map_err(|err| err.to_string());
    assert_eq!(got, expected.map_err(str::to_owned));
}

fn args(repos: usize, prs: usize, seed: u64, out: Option<&str>) -> Args {
    Args {
        repos,
        prs,
        seed,
        out: out.map(PathBuf::from),
    }
}

#[test]
fn repos_and_prs_are_enough() {
    check(
        &["--repos", "20", "--prs", "500"],
        Ok(args(20, 500, DEFAULT_SEED, None)),
    );
}

#[test]
fn options_come_in_any_order() {
    check(
        &[
            "--out", "w.yaml", "--seed", "9", "--prs", "0", "--repos", "2",
        ],
        Ok(args(2, 0, 9, Some("w.yaml"))),
    );
}

#[test]
fn a_missing_count_is_named() {
    check(&["--repos", "2"], Err("--prs is required"));
}

#[test]
fn a_flag_without_value_is_named() {
    check(&["--repos", "2", "--prs"], Err("--prs needs a value"));
}

#[test]
fn a_bad_number_is_named() {
    check(
        &["--repos", "two", "--prs", "3"],
        Err("--repos expects a whole number, got \"two\""),
    );
}

#[test]
fn zero_repositories_are_refused() {
    check(
        &["--repos", "0", "--prs", "3"],
        Err("--repos must be at least 1"),
    );
}

#[test]
fn an_unknown_option_is_named() {
    check(
        &["--repos", "1", "--prs", "1", "--pulls", "3"],
        Err("unknown option \"--pulls\"; expected --repos, --prs, --seed or --out"),
    );
}

#[test]
fn the_written_world_loads_with_its_pull_requests() {
    let text = render(&args(3, 4, 5, None));
    let world = mp_github_fake::parse_world("generated.yaml", &text, None).expect("a valid world");
    let open: Vec<usize> = world.repos.iter().map(|repo| repo.pulls.len()).collect();
    // Three application repositories, then the governance repository.
    assert_eq!(open, [4, 4, 4, 0]);
    assert!(world.receipt_key.is_some());
}
