//! Tests for trailer parsing and the C5 contract.

use super::*;
use proptest::prelude::*;

const GOOD: &str = "feat: add thing\n\nLonger body.\n\nAgent-Tool: claude-code\nAgent-Model: claude-opus-4.7\nAgent-Session: s_abc-123\nAgent-Machine: laptop\nTask-Ref: Issue#12\n";

#[track_caller]
fn check(message: &str, expected: &[&str]) {
    let problems: Vec<String> = check_contract(&Trailers::parse(message))
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(problems, expected, "message:\n{message}");
}

#[test]
fn well_formed_message_passes() {
    check(GOOD, &[]);
}

#[test]
fn missing_session_is_named() {
    check(
        "fix: x\n\nAgent-Tool: codex\nAgent-Model: gpt-5\nAgent-Machine: ci\nTask-Ref: none",
        &["missing trailer 'Agent-Session'"],
    );
}

#[test]
fn every_problem_is_reported() {
    check(
        "fix: x\n\nAgent-Tool:\nAgent-Session: s_-bad\nTask-Ref: issue#1/extra",
        &[
            "empty trailer 'Agent-Tool'",
            "missing trailer 'Agent-Model'",
            "malformed Agent-Session 's_-bad' (expected s_ then 4-16 of [a-z0-9-], alphanumeric at both ends)",
            "missing trailer 'Agent-Machine'",
            "malformed Task-Ref 'issue#1/extra' (expected Issue#N, PR#N, none, round-N/<topic> or bot/<topic>)",
        ],
    );
}

#[test]
fn prose_line_in_last_paragraph_voids_all_trailers() {
    let message = "fix: x\n\nAgent-Tool: codex\nsee the notes above\nTask-Ref: none";
    assert!(Trailers::parse(message).is_empty());
}

#[test]
fn trailer_lines_mid_prose_do_not_count() {
    let message = "fix: x\n\nAgent-Tool: codex\nAgent-Model: gpt-5\n\nJust prose at the end.";
    assert!(Trailers::parse(message).is_empty());
}

#[test]
fn subject_paragraph_is_never_trailers() {
    assert!(Trailers::parse("feat: thing").is_empty());
    assert!(Trailers::parse("Agent-Tool: codex\nTask-Ref: none").is_empty());
}

#[test]
fn values_are_trimmed_and_last_repeat_wins() {
    let t = Trailers::parse("x\n\nAgent-Tool:codex\nAgent-Tool:  aider  \nCo-Authored-By: A <a@b>");
    assert_eq!(t.get("Agent-Tool"), Some("aider"));
    assert_eq!(t.get("Co-Authored-By"), Some("A <a@b>"));
    assert_eq!(t.iter().count(), 3);
}

#[test]
fn continuation_lines_extend_the_value() {
    let t = Trailers::parse("x\n\nTask-Ref: bot/a\n  continued\nAgent-Tool: t");
    assert_eq!(t.get("Task-Ref"), Some("bot/a continued"));
}

#[test]
fn crlf_and_trailing_newlines_are_tolerated() {
    let t = Trailers::parse("x\r\n\r\nAgent-Tool: codex\r\n\r\n\n");
    assert_eq!(t.get("Agent-Tool"), Some("codex"));
}

#[test]
fn session_grammar() {
    for ok in ["s_abcd", "s_a-b-c", "s_0123456789abcdef", "s_x1y2"] {
        assert!(is_valid_session(ok), "{ok}");
    }
    for bad in [
        "s_abc",
        "s_-abc",
        "s_abc-",
        "s_ABCD",
        "s_0123456789abcdefg",
        "abcd",
        "s_ab cd",
    ] {
        assert!(!is_valid_session(bad), "{bad}");
    }
}

#[test]
fn task_ref_grammar() {
    for ok in [
        "Issue#1",
        "issue#42",
        "PR#7",
        "none",
        "round-7/topic",
        "bot/x.y_z-1/w",
    ] {
        assert!(is_valid_task_ref(ok), "{ok}");
    }
    for bad in [
        "ISSUE#1",
        "pr#1",
        "Issue#",
        "round-7/",
        "issue#1/extra",
        "round-x/t",
        "None",
    ] {
        assert!(!is_valid_task_ref(bad), "{bad}");
    }
}

#[test]
fn identity_block_keeps_distinct_lines_in_first_seen_order() {
    let a = Trailers::parse("a\n\nAgent-Tool: codex\nTask-Ref: none\nSigned-off-by: x");
    let b = Trailers::parse("b\n\nAgent-Tool: aider\nAgent-Tool: codex\nTask-Ref: none");
    let block = identity_block([&a, &b]).expect("has identity trailers");
    assert_eq!(
        block,
        "Agent-Tool: codex\nTask-Ref: none\nAgent-Tool: aider"
    );
    assert_eq!(identity_block([&Trailers::default()]), None);
}

proptest! {
    #[test]
    fn parser_never_panics(message in "\\PC*") {
        let _ = check_contract(&Trailers::parse(&message));
    }

    #[test]
    fn parser_never_panics_on_line_soup(lines in proptest::collection::vec("[ \\tA-Za-z:#-]{0,12}", 0..8)) {
        let _ = Trailers::parse(&lines.join("\n"));
    }

    #[test]
    fn well_formed_trailers_round_trip(
        pairs in proptest::collection::vec(("[A-Za-z][A-Za-z0-9-]{0,15}", "[!-~][ -~]{0,30}[!-~]"), 1..8),
        subject in "[a-z][a-z ]{0,20}",
    ) {
        let block: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        let message = format!("{subject}\n\nbody text\n\n{}\n", block.join("\n"));
        let parsed = Trailers::parse(&message);
        let got: Vec<(String, String)> = parsed.iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
        prop_assert_eq!(got, pairs);
    }
}

mod reading_like_git {
    use super::super::{Trailers, message_text};

    #[test]
    fn comments_the_scissors_line_and_trailing_blanks_are_dropped() {
        let raw = "subject\n# a comment\n\nAgent-Tool: x\n# ------------------------ >8 ------------------------\ndiff --git a b\n";
        assert_eq!(message_text(raw), "subject\n# a comment\n\nAgent-Tool: x\n");
        assert_eq!(
            message_text("subject\n\nA: b\n# a comment\n\n\nConflicts:\n\tsrc/x.rs\n"),
            "subject\n\nA: b\n"
        );
        // Only the exact line cuts: not one with trailing blanks, not one without its line feed.
        let loose =
            "subject\n\nA: b\n# ------------------------ >8 ------------------------ \nC: d\n";
        assert_eq!(message_text(loose), loose);
        let crlf = "subject\r\n\r\nA: b\r\n  \r\n\t\n";
        assert_eq!(message_text(crlf), crlf);
        assert_eq!(Trailers::parse(crlf).get("A"), Some("b"));
    }

    #[test]
    fn trailers_only_below_the_scissors_line_do_not_count() {
        let raw = "subject\n\nbody\n# ------------------------ >8 ------------------------\n\nAgent-Tool: x\n";
        assert!(Trailers::parse(raw).is_empty());
    }

    #[test]
    fn a_comment_line_inside_the_trailer_paragraph_is_skipped() {
        let parsed = Trailers::parse(
            "subject\n\nAgent-Tool: x\n# Please enter the message\nTask-Ref: none\n",
        );
        assert_eq!(parsed.get("Agent-Tool"), Some("x"));
        assert_eq!(parsed.get("Task-Ref"), Some("none"));
    }

    #[test]
    fn trailing_whitespace_lines_do_not_hide_the_trailers() {
        let parsed = Trailers::parse("subject\n\nAgent-Tool: x\n   \n\n");
        assert_eq!(parsed.get("Agent-Tool"), Some("x"));
    }

    #[test]
    fn only_git_s_exact_cut_line_is_a_scissors_line() {
        // Another comment that mentions >8 is just a comment.
        let parsed = Trailers::parse("subject\n\n#  ---- >8 ----\nAgent-Tool: x\n");
        assert_eq!(parsed.get("Agent-Tool"), Some("x"));
    }
}

/// The parser against git itself: `git interpret-trailers --parse --no-divider` reads a
/// message's trailers as git reads a commit's (`%(trailers)` has no `---` divider either).
/// Every row must read the same trailers, except the rows marked stricter, where git accepts
/// prose next to a `Signed-off-by:` line and mp reads nothing.
mod against_git {
    use std::io::Write;
    use std::process::{Command, Stdio};

    use super::super::Trailers;

    /// How mp's reading relates to git's on one message.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Reading {
        /// The same trailers, in the same order, with the same values.
        Same,
        /// git reads trailers, mp reads none (ADR 0046).
        Stricter,
    }
    use Reading::{Same, Stricter};

    const ID: &str = "Agent-Tool: claude-code\nTask-Ref: Issue#12\n";

    fn table() -> Vec<(&'static str, String, Reading)> {
        let with = |body: &str| format!("Fix the README\n\n{body}");
        vec![
            ("plain", with(&format!("Body.\n\n{ID}")), Same),
            (
                "nbsp line between prose and trailers",
                with(&format!("Body.\n\u{a0}\n{ID}")),
                Same,
            ),
            (
                "nbsp line after the trailers",
                with(&format!("{ID}\u{a0}\n")),
                Same,
            ),
            (
                "nbsp and spaces line",
                with(&format!("Body.\n \u{a0}\t\n{ID}")),
                Same,
            ),
            (
                "em space line",
                with(&format!("Body.\n\u{2003}\n{ID}")),
                Same,
            ),
            (
                "ideographic space line",
                with(&format!("Body.\n\u{3000}\n{ID}")),
                Same,
            ),
            (
                "line separator line",
                with(&format!("Body.\n\u{2028}\n{ID}")),
                Same,
            ),
            ("form feed line", with(&format!("Body.\n\u{c}\n{ID}")), Same),
            (
                "vertical tab line",
                with(&format!("Body.\n\u{b}\n{ID}")),
                Same,
            ),
            (
                "spaces and tabs line is blank",
                with(&format!("Body.\n \t \n{ID}")),
                Same,
            ),
            (
                "carriage return line is blank",
                with(&format!("Body.\n\r\n{ID}")),
                Same,
            ),
            (
                "crlf message",
                format!("Fix\r\n\r\nBody.\r\n\r\n{}", ID.replace('\n', "\r\n")),
                Same,
            ),
            (
                "nbsp before the colon",
                with("Body.\n\nAgent-Tool\u{a0}: x\nTask-Ref: none\n"),
                Same,
            ),
            (
                "nbsp at the end of a value",
                with("Body.\n\nAgent-Tool: x\u{a0}\nTask-Ref: none\n"),
                Same,
            ),
            (
                "nbsp at the start of a line",
                with("Body.\n\n\u{a0}Agent-Tool: x\nTask-Ref: none\n"),
                Same,
            ),
            (
                "nbsp continuation",
                with("Body.\n\nAgent-Tool: x\n \u{a0}\nTask-Ref: none\n"),
                Same,
            ),
            (
                "continuation lines",
                with("Task-Ref: bot/a\n  more \n\tand more\nAgent-Tool: t\n"),
                Same,
            ),
            (
                "empty value then continuation",
                with("Agent-Tool:\n   codex  \n"),
                Same,
            ),
            ("empty value", with("Agent-Tool:\nTask-Ref: none\n"), Same),
            (
                "space before the colon",
                with("Agent-Tool : x\nTask-Ref\t: none\n"),
                Same,
            ),
            (
                "key starting with a digit or dash",
                with("1x: y\n-z: w\nAgent-Tool: x\n"),
                Same,
            ),
            (
                "prose inside the paragraph",
                with("Agent-Tool: x\nsee above\nTask-Ref: none\n"),
                Same,
            ),
            (
                "trailers then prose paragraph",
                with(&format!("{ID}\nJust prose.\n")),
                Same,
            ),
            ("subject paragraph only", ID.to_owned(), Same),
            (
                "comment inside the paragraph",
                with("Agent-Tool: x\n# a comment\nTask-Ref: none\n"),
                Same,
            ),
            (
                "comment between a trailer and its continuation",
                with("Agent-Tool: x\n# c\n  more\n"),
                Same,
            ),
            (
                "trailing comments and empty lines",
                with(&format!("{ID}# c\n\n# d\n\n")),
                Same,
            ),
            (
                "old conflicts block",
                with(&format!("{ID}\nConflicts:\n\tsrc/a.rs\n")),
                Same,
            ),
            (
                "scissors line",
                with(
                    "Body.\n# ------------------------ >8 ------------------------\n\nAgent-Tool: x\n",
                ),
                Same,
            ),
            (
                "scissors look-alike with a trailing space",
                with(
                    "Agent-Tool: x\n# ------------------------ >8 ------------------------ \n\nProse.\n",
                ),
                Same,
            ),
            ("divider line", with(&format!("---\n\n{ID}")), Same),
            ("leading empty lines", format!("\n\n{ID}"), Same),
            (
                "trailing whitespace lines",
                with(&format!("{ID}  \n\t\n\n")),
                Same,
            ),
            (
                "no final line feed",
                with("Agent-Tool: x\nTask-Ref: none"),
                Same,
            ),
            (
                "prose next to signed-off-by",
                with("Agent-Tool: x\nsee above\nSigned-off-by: A <a@b>\n"),
                Stricter,
            ),
        ]
    }

    fn mp_reads(message: &str) -> Vec<String> {
        Trailers::parse(message)
            .iter()
            .map(|(key, value)| format!("{key}: {value}"))
            .collect()
    }

    /// `None` when git is not installed. Only this test starts a process in mp-core: git
    /// is the reference the parser is held to, never a dependency of the library.
    #[allow(clippy::disallowed_methods)]
    fn git_reads(message: &str) -> Option<Vec<String>> {
        let spawned = Command::new("git")
            .args(["interpret-trailers", "--parse", "--no-divider"])
            .current_dir(std::env::temp_dir())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match spawned {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            other => other.expect("git starts"),
        };
        child
            .stdin
            .take()
            .expect("piped stdin")
            .write_all(message.as_bytes())
            .expect("message written to git");
        let output = child.wait_with_output().expect("git finishes");
        assert!(
            output.status.success(),
            "git interpret-trailers failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let text = String::from_utf8(output.stdout).expect("git answers UTF-8 for UTF-8 input");
        Some(text.lines().map(str::to_owned).collect())
    }

    #[test]
    #[allow(clippy::print_stderr)]
    fn the_parser_reads_what_git_reads() {
        if git_reads("x").is_none() {
            eprintln!("SKIPPED the_parser_reads_what_git_reads: `git` is not installed");
            return;
        }
        let mut differences = Vec::new();
        for (name, message, reading) in table() {
            let git = git_reads(&message).expect("git ran a moment ago");
            let mp = mp_reads(&message);
            let holds = match reading {
                Same => mp == git,
                Stricter => mp.is_empty() && !git.is_empty(),
            };
            if !holds {
                differences.push(format!(
                    "{name} ({reading:?}): {message:?}\n  git: {git:?}\n  mp:  {mp:?}"
                ));
            }
        }
        assert!(differences.is_empty(), "{}", differences.join("\n"));
    }

    #[test]
    fn a_nbsp_line_is_no_paragraph_break() {
        let message = format!("Fix the README\n\nBody.\n\u{a0}\n{ID}");
        assert!(Trailers::parse(&message).is_empty());
        let blank = format!("Fix the README\n\nBody.\n \t\r\n{ID}");
        assert_eq!(Trailers::parse(&blank).get("Task-Ref"), Some("Issue#12"));
    }
}
