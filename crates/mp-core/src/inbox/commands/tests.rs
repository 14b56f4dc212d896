//! Tests of the plain-line reading: each hiding place, the fences' closing rules, and
//! properties over generated comments.

use proptest::prelude::*;

use super::plain_lines;
use crate::inbox::signals::comment_choice;

#[track_caller]
fn plain(body: &str) -> Vec<&str> {
    plain_lines(body)
}

#[test]
fn plain_text_lines_are_kept() {
    assert_eq!(plain("/approve A"), ["/approve A"]);
    assert_eq!(
        plain("ok\n  /reject  \nthanks"),
        ["ok", "  /reject  ", "thanks"]
    );
    assert_eq!(plain("ok\r\n/approve B\r\n"), ["ok", "/approve B"]);
}

#[test]
fn fenced_code_is_left_out_until_its_closing_fence() {
    assert_eq!(plain("```\n/approve A\n```\n/reject"), ["/reject"]);
    assert_eq!(plain("~~~text\n/approve A\n~~~\nafter"), ["after"]);
    assert_eq!(plain("   ```\n/approve A\n   ```"), Vec::<&str>::new());
    // A shorter run or the other character does not close the fence.
    assert_eq!(plain("````\n```\n/approve A\n````\nx"), ["x"]);
    assert_eq!(plain("```\n~~~\n/approve A\n```\nx"), ["x"]);
    // Text after the closing run means it is not a closing fence.
    assert_eq!(plain("```\n``` no\n/approve A\n```\nx"), ["x"]);
    // Never closed: the rest of the comment is code.
    assert_eq!(plain("note\n```\n/approve A"), ["note"]);
}

#[test]
fn runs_that_are_not_fences_open_nothing() {
    assert_eq!(plain("``\n/approve A"), ["``", "/approve A"]);
    assert_eq!(plain("``` a ` b\n/approve A"), ["``` a ` b", "/approve A"]);
}

#[test]
fn indented_code_and_block_quotes_are_left_out() {
    assert_eq!(plain("    /approve A"), Vec::<&str>::new());
    assert_eq!(plain("\t/approve A"), Vec::<&str>::new());
    assert_eq!(plain("> /approve A"), Vec::<&str>::new());
    assert_eq!(plain("  >/approve A"), Vec::<&str>::new());
    assert_eq!(plain("   /approve A"), ["   /approve A"]);
}

#[test]
fn every_line_an_html_comment_touches_is_left_out() {
    assert_eq!(plain("<!-- /approve A -->"), Vec::<&str>::new());
    assert_eq!(plain("<!--\n/approve A\n-->\n/reject"), ["/reject"]);
    assert_eq!(plain("<!-- x --> /approve A"), Vec::<&str>::new());
    assert_eq!(plain("x <!--\n/approve A"), Vec::<&str>::new());
    // A comment closed and another opened on the same line.
    assert_eq!(plain("<!--\n--> <!--\n/approve A\n-->\nok"), ["ok"]);
}

#[test]
fn inside_a_fence_an_html_comment_opens_nothing() {
    assert_eq!(plain("```\n<!--\n```\n/approve A"), ["/approve A"]);
}

#[test]
fn inline_code_is_never_a_command() {
    assert_eq!(comment_choice("`/approve A`"), None);
    assert_eq!(comment_choice("/approve `A`"), None);
    assert_eq!(comment_choice("run `/reject` to close"), None);
}

#[test]
fn commands_count_only_on_plain_lines() {
    assert_eq!(comment_choice("```\n/approve A\n```"), None);
    assert_eq!(comment_choice("> /reject"), None);
    assert_eq!(
        comment_choice("<!--\n/reject\n-->\n/approve B").map(|c| c.code()),
        Some("approve_b")
    );
}

/// A line that is plain text and carries no Markdown structure of its own.
fn plain_words() -> impl Strategy<Value = String> {
    "[a-z][a-z ,.]{0,20}"
}

/// Ways to hide one line from the plain reading.
fn hide(line: &str, how: u8) -> String {
    match how % 6 {
        0 => format!("```\n{line}\n```"),
        1 => format!("~~~~ sh\n{line}\n~~~~"),
        2 => format!("    {line}"),
        3 => format!("> {line}"),
        4 => format!("<!--\n{line}\n-->"),
        _ => format!("<!-- {line} -->"),
    }
}

fn command() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["/approve A", "/approve b", "/approve C", "/reject"])
}

proptest! {
    #[test]
    fn a_hidden_command_is_never_a_vote(
        before in prop::collection::vec(plain_words(), 0..4),
        after in prop::collection::vec(plain_words(), 0..4),
        line in command(),
        how in any::<u8>(),
    ) {
        let mut parts = before;
        parts.push(hide(line, how));
        parts.extend(after);
        prop_assert_eq!(comment_choice(&parts.join("\n")), None);
    }

    #[test]
    fn a_plain_command_among_plain_lines_is_a_vote(
        before in prop::collection::vec(plain_words(), 0..4),
        after in prop::collection::vec(plain_words(), 0..4),
        line in command(),
    ) {
        let mut parts = before;
        parts.push(line.to_owned());
        parts.extend(after);
        prop_assert!(comment_choice(&parts.join("\n")).is_some());
    }

    #[test]
    fn every_plain_line_is_a_line_of_the_body(body in "[ -~\n\t]{0,200}") {
        let lines: Vec<&str> = body.lines().collect();
        for line in plain_lines(&body) {
            prop_assert!(lines.contains(&line));
        }
    }
}
