//! The queue's state between ticks: one file per repository on `bot-state`, which only mp
//! writes (decisions/0045). Versioned JSON; a file that cannot be read is never guessed
//! at: the queue of that repository stops for the tick, with the reason.

use serde::{Deserialize, Serialize};

use mp_core::ids::{CommitSha, PrNumber, RepoName, Timestamp};
use mp_core::queue::{Build, Entry, QueueSettings, QueueState};

/// The version this build of mp writes and reads.
pub(crate) const VERSION: u32 = 1;

/// The path of `repo`'s queue file on `bot-state`.
pub(crate) fn path(repo: &RepoName) -> String {
    format!("bot-state/queue/{}.json", repo.as_str())
}

/// The queue's state as the driver keeps it: the model's state, and what only the driver
/// knows (the build's staging commit, when it was pushed, and the ejected entries).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stored {
    /// The model's state.
    pub(crate) state: QueueState,
    /// The current build's staging commit and when mp pushed it, if a build runs.
    pub(crate) staging: Option<(CommitSha, Timestamp)>,
    /// Entries that failed alone: out of the queue until their head changes.
    pub(crate) ejected: Vec<Ejected>,
}

/// An entry that failed alone, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ejected {
    pub(crate) pr: PrNumber,
    pub(crate) head: CommitSha,
    /// The build that proved it, e.g. `build 4 of #7 on abc1234`.
    pub(crate) build: String,
    /// What failed, one line each.
    pub(crate) failing: Vec<String>,
}

impl Stored {
    /// A fresh queue.
    pub(crate) fn new(settings: QueueSettings) -> Self {
        Self {
            state: QueueState::new(settings),
            staging: None,
            ejected: Vec::new(),
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: u32,
    window: u32,
    next_id: u64,
    #[serde(default)]
    build: Option<FileBuild>,
    #[serde(default)]
    suspects: Vec<FileEntry>,
    #[serde(default)]
    ejected: Vec<FileEjected>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileBuild {
    id: u64,
    base: String,
    entries: Vec<FileEntry>,
    attempt: u32,
    staging: Option<String>,
    pushed_at: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileEntry {
    pr: u64,
    head: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileEjected {
    pr: u64,
    head: String,
    build: String,
    failing: Vec<String>,
}

fn entry_out(entry: &Entry) -> FileEntry {
    FileEntry {
        pr: entry.pr.get(),
        head: entry.head.as_str().to_owned(),
    }
}

fn entry_in(entry: &FileEntry) -> Result<Entry, String> {
    Ok(Entry {
        pr: PrNumber::new(entry.pr),
        head: sha(&entry.head)?,
    })
}

fn sha(text: &str) -> Result<CommitSha, String> {
    CommitSha::parse(text).map_err(|e| e.to_string())
}

/// The file's text for `stored`.
pub(crate) fn render(stored: &Stored) -> String {
    let state = &stored.state;
    let file = File {
        version: VERSION,
        window: state.window,
        next_id: state.next_id,
        build: state.build.as_ref().map(|build| FileBuild {
            id: build.id,
            base: build.base.as_str().to_owned(),
            entries: build.entries.iter().map(entry_out).collect(),
            attempt: build.attempt,
            staging: stored
                .staging
                .as_ref()
                .map(|(sha, _)| sha.as_str().to_owned()),
            pushed_at: stored.staging.as_ref().map(|(_, at)| at.to_string()),
        }),
        suspects: state.suspects.iter().map(entry_out).collect(),
        ejected: stored
            .ejected
            .iter()
            .map(|e| FileEjected {
                pr: e.pr.get(),
                head: e.head.as_str().to_owned(),
                build: e.build.clone(),
                failing: e.failing.clone(),
            })
            .collect(),
    };
    let mut text = serde_json::to_string_pretty(&file).unwrap_or_default();
    text.push('\n');
    text
}

/// Reads the file's text.
///
/// # Errors
/// Why the text is not a queue file this version of mp can trust.
pub(crate) fn parse(text: &str, settings: QueueSettings) -> Result<Stored, String> {
    let file: File = serde_json::from_str(text).map_err(|e| format!("not a queue file: {e}"))?;
    if file.version != VERSION {
        return Err(format!(
            "version {} (this mp reads version {VERSION})",
            file.version
        ));
    }
    let window = file.window.clamp(1, settings.batch_max.max(1));
    let mut staging = None;
    let build = match &file.build {
        None => None,
        Some(build) => {
            let entries = build
                .entries
                .iter()
                .map(entry_in)
                .collect::<Result<Vec<_>, _>>()?;
            if let (Some(tip), Some(at)) = (&build.staging, &build.pushed_at) {
                staging = Some((sha(tip)?, Timestamp::parse(at).map_err(|e| e.to_string())?));
            }
            Some(Build {
                id: build.id,
                base: sha(&build.base)?,
                entries,
                attempt: build.attempt,
            })
        }
    };
    let suspects = file
        .suspects
        .iter()
        .map(entry_in)
        .collect::<Result<Vec<_>, _>>()?;
    let ejected = file
        .ejected
        .iter()
        .map(|e| {
            Ok(Ejected {
                pr: PrNumber::new(e.pr),
                head: sha(&e.head)?,
                build: e.build.clone(),
                failing: e.failing.clone(),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Stored {
        state: QueueState {
            window,
            next_id: file.next_id.max(1),
            build,
            suspects,
        },
        staging,
        ejected,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha_n(n: u64) -> CommitSha {
        CommitSha::parse(&format!("{n:040x}")).expect("sha")
    }

    #[test]
    fn a_state_survives_the_file() {
        let settings = QueueSettings::default();
        let mut stored = Stored::new(settings);
        stored.state.window = 4;
        stored.state.next_id = 7;
        stored.state.build = Some(Build {
            id: 6,
            base: sha_n(1),
            entries: vec![Entry {
                pr: PrNumber::new(3),
                head: sha_n(3),
            }],
            attempt: 1,
        });
        stored.state.suspects = vec![Entry {
            pr: PrNumber::new(3),
            head: sha_n(3),
        }];
        stored.staging = Some((
            sha_n(9),
            Timestamp::parse("2026-06-01T12:00:00Z").expect("time"),
        ));
        stored.ejected = vec![Ejected {
            pr: PrNumber::new(2),
            head: sha_n(2),
            build: "build 5 of #2 on 0000000".to_owned(),
            failing: vec!["test failed".to_owned()],
        }];
        let text = render(&stored);
        assert_eq!(parse(&text, settings), Ok(stored));
    }

    #[test]
    fn an_unreadable_or_newer_file_is_refused_with_the_reason() {
        let settings = QueueSettings::default();
        assert!(
            parse("{", settings)
                .expect_err("not JSON")
                .starts_with("not a queue file")
        );
        assert_eq!(
            parse(r#"{"version": 2, "window": 1, "next_id": 1}"#, settings),
            Err("version 2 (this mp reads version 1)".to_owned())
        );
        assert!(
            parse(
                r#"{"version": 1, "window": 1, "next_id": 1, "suspects": [{"pr": 1, "head": "xyz"}]}"#,
                settings
            )
            .is_err()
        );
    }
}
