//! Tests for `Write`: its code, its three lines and its JSON.

use super::*;
use crate::port::MergeMethod;

fn repo() -> RepoName {
    RepoName::parse("acme/app").expect("a repository name")
}

fn sha(digit: char) -> CommitSha {
    CommitSha::parse(&digit.to_string().repeat(40)).expect("a sha")
}

fn merge(answer: Option<Merged>) -> Write {
    Write::MergePull {
        repo: repo(),
        number: PrNumber::new(7),
        request: MergeRequest {
            head_sha: sha('a'),
            method: MergeMethod::Squash,
            commit_message: None,
        },
        answer,
    }
}

#[test]
fn a_write_has_a_planned_a_done_and_a_logged_line() {
    let done = merge(Some(Merged {
        sha: sha('b'),
        message: "Fix (#7)".to_owned(),
    }));
    assert_eq!(done.code(), "merge_pull");
    assert_eq!(
        done.planned_line(),
        "would merge acme/app#7 pinned to head aaaaaaa (squash)"
    );
    assert_eq!(done.to_string(), done.planned_line());
    assert_eq!(
        done.done_line(),
        "merged acme/app#7 pinned to head aaaaaaa (squash)"
    );
    assert_eq!(
        done.log_line(),
        "merge acme/app#7: head aaaaaaa -> base bbbbbbb"
    );
    assert_eq!(
        merge(None).log_line(),
        "merge acme/app#7: head aaaaaaa -> base ?",
        "a planned write's log line marks the answer it has not got"
    );
}

#[test]
fn a_write_serializes_as_the_action_log_shows_it() {
    let comment = Write::CreateComment {
        repo: repo(),
        number: PrNumber::new(9),
        body: "hello\nworld".to_owned(),
        answer: Some(CommentId::new(3)),
    };
    assert_eq!(
        serde_json::to_string(&comment).expect("serializes"),
        r#"{"action":"create_comment","repo":"acme/app","number":9,"comment_id":3,"body":"hello\nworld"}"#
    );
    assert_eq!(comment.log_line(), "comment acme/app#9 (id 3): hello");
    assert_eq!(comment.done_line(), "commented on acme/app#9: hello");
    let put = Write::PutFile {
        repo: repo(),
        write: FileWrite {
            branch: "bot-state".to_owned(),
            path: "lease.json".to_owned(),
            text: "{}".to_owned(),
            expected_blob_sha: None,
            message: "take the lease".to_owned(),
        },
        answer: Some(FileWritten {
            blob: "0123456789".to_owned(),
            commit: sha('c'),
        }),
    };
    let json = serde_json::to_string(&put).expect("serializes");
    assert_eq!(
        json,
        format!(
            r#"{{"action":"put_file","repo":"acme/app","branch":"bot-state","path":"lease.json","blob_sha":"0123456789","commit_sha":"{}","message":"take the lease"}}"#,
            sha('c')
        ),
        "the file's text is not in the log"
    );
    assert_eq!(
        put.log_line(),
        "write acme/app@bot-state lease.json (blob 0123456, commit ccccccc): take the lease"
    );
}
