//! Tests for shards: parsing `I/N`, the pinned hash, and membership (every repository in
//! exactly one shard).

use super::*;

#[derive(Debug)]
enum Case<'a> {
    /// `text` parses to `I/N` and displays as `shown`.
    Parses(&'a str, (u32, u32), &'a str),
    /// `text` is refused with `code` and the message `message`.
    Refused(&'a str, &'a str, &'a str),
    /// FNV-1a 64 of the bytes.
    Hash(&'a str, u64),
    /// The shard numbers of a repository for N = 1..=8.
    Numbers(&'a str, [u32; 8]),
    /// Each of the repositories is in exactly one shard of N, for N = 1..=8.
    Partition(&'a [&'a str]),
}

fn repo(name: &str) -> RepoName {
    RepoName::parse(name).expect("test repository names are valid")
}

#[track_caller]
fn check(case: Case<'_>) {
    match case {
        Case::Parses(text, (index, count), shown) => {
            let shard = Shard::parse(text).map_err(|e| e.to_string());
            let got = shard.map(|s| (s.index(), s.count(), s.to_string()));
            assert_eq!(got, Ok((index, count, shown.to_owned())), "{text:?}");
            assert_eq!(text.parse::<Shard>().ok(), Shard::new(index, count).ok());
        }
        Case::Refused(text, code, message) => {
            let error = Shard::parse(text).expect_err("the text is refused");
            assert_eq!((error.code(), error.to_string().as_str()), (code, message));
        }
        Case::Hash(text, expected) => {
            assert_eq!(fnv1a64(text.as_bytes()), expected, "fnv1a64({text:?})");
        }
        Case::Numbers(name, expected) => {
            let got: Vec<u32> = (1..=8).map(|n| Shard::number_of(&repo(name), n)).collect();
            assert_eq!(got, expected.to_vec(), "{name}");
            for (n, number) in (1..=8).zip(expected) {
                assert_eq!(
                    Shard::of(&repo(name), n),
                    Shard::new(number, n).expect("valid")
                );
            }
        }
        Case::Partition(names) => {
            for count in 1..=8 {
                for name in names {
                    let owners: Vec<u32> = (0..count)
                        .filter(|&i| Shard::new(i, count).expect("valid").owns(&repo(name)))
                        .collect();
                    assert_eq!(owners.len(), 1, "{name} among {count} shards: {owners:?}");
                }
            }
        }
    }
}

#[test]
fn whole_tick_is_zero_of_one() {
    check(Case::Parses("0/1", (0, 1), "0/1"));
    assert_eq!(Shard::WHOLE.to_string(), "0/1");
}

#[test]
fn shards_are_numbered_from_zero() {
    check(Case::Parses("0/2", (0, 2), "0/2"));
    check(Case::Parses("2/3", (2, 3), "2/3"));
    check(Case::Parses(" 1 / 4 ", (1, 4), "1/4"));
}

#[test]
fn index_equal_to_count_is_refused() {
    check(Case::Refused(
        "3/3",
        "shard_index_out_of_range",
        "shard \"3/3\": the index 3 must be below the count 3 (shards are numbered from 0)",
    ));
}

#[test]
fn zero_shards_are_refused() {
    check(Case::Refused(
        "0/0",
        "shard_count_zero",
        "shard \"0/0\": the shard count must be at least 1",
    ));
}

#[test]
fn text_without_slash_is_refused() {
    check(Case::Refused(
        "2",
        "shard_shape",
        "shard \"2\" is not of the form I/N (e.g. 0/3)",
    ));
}

#[test]
fn non_numbers_are_refused() {
    check(Case::Refused(
        "a/3",
        "shard_not_a_number",
        "shard \"a/3\": \"a\" is not a whole number",
    ));
    check(Case::Refused(
        "-1/3",
        "shard_not_a_number",
        "shard \"-1/3\": \"-1\" is not a whole number",
    ));
    check(Case::Refused(
        "1/",
        "shard_not_a_number",
        "shard \"1/\": \"\" is not a whole number",
    ));
    check(Case::Refused(
        "1/99999999999",
        "shard_not_a_number",
        "shard \"1/99999999999\": \"99999999999\" is not a whole number",
    ));
}

#[test]
fn hash_is_fnv1a_64() {
    check(Case::Hash("", 0xcbf2_9ce4_8422_2325));
    check(Case::Hash("a", 0xaf63_dc4c_8601_ec8c));
    check(Case::Hash("foobar", 0x8594_4171_f739_67e8));
    check(Case::Hash("synth/app-000", 0x1313_7e0a_62b5_0d7c));
}

#[test]
fn known_repositories_have_known_shards() {
    check(Case::Numbers("acme/webapp", [0, 1, 1, 1, 3, 1, 2, 5]));
    check(Case::Numbers("acme/infra", [0, 0, 2, 2, 2, 2, 5, 6]));
    check(Case::Numbers(
        "octo-org/hello-world",
        [0, 1, 0, 3, 1, 3, 2, 3],
    ));
}

#[test]
fn membership_ignores_the_case_of_the_name() {
    check(Case::Numbers("Acme/WebApp", [0, 1, 1, 1, 3, 1, 2, 5]));
}

#[test]
fn every_repository_is_in_exactly_one_shard() {
    check(Case::Partition(&[
        "synth/app-000",
        "synth/app-001",
        "synth/app-002",
        "synth/app-003",
        "synth/app-004",
        "synth/app-005",
        "acme/webapp",
        "acme/infra",
        "acme/governance",
    ]));
}
