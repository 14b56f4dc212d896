//! Incident labels, dedupe keys, issue titles and the hidden dedupe marker (rollup included).
//!
//! Every post-merge finding that needs a human becomes one issue in the governance repo.
//! Its identity is a dedupe key: the 7-character SHA of a single offending commit, a
//! `rollup-<repo name>-<hash>` key when one label has several offenders in one scan, or a
//! content key such as `mirror-drift-<hash>`. The key is written into the title and into a
//! hidden marker at the end of the body, so a later tick finds the issue again, open or
//! closed, even after a person edits it.

use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

use crate::approval::ReceiptKey;
use crate::approval::receipt::{mac_hex, marker_value, verify_mac_hex};
use crate::ids::{CommitSha, Login, RepoName};
use crate::port::Issue;

/// The labels of issues that report a post-merge incident.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum IncidentLabel {
    /// `decision:post-merge-revalidation`: a merged commit fails its required checks (L2).
    PostMergeRevalidation,
    /// `decision:l2-stalled`: a merged commit stayed unsettled for 24 hours or more (L2).
    L2Stalled,
    /// `decision:watermark-lost`: `main` was rewritten past the scan watermark.
    WatermarkLost,
    /// `decision:break-glass-unauthorized`: a break-glass commit by a non-allowlisted committer (L5).
    BreakGlassUnauthorized,
    /// `decision:break-glass-unaudited`: a break-glass commit without an ADR in time (L5).
    BreakGlassUnaudited,
    /// `decision:unauthorized-push`: a write to `main` around the gate.
    UnauthorizedPush,
    /// `decision:hallucination-detected`: a commit body names files that do not exist.
    HallucinationDetected,
    /// `decision:mirror-drift-incident`: canonical files drifted in an adopter repo.
    MirrorDrift,
    /// `decision:skill-hook-incident`: a user branch hook raised an incident on a commit.
    SkillHook,
    /// `decision:state-tampered`: someone other than mp (or an allowlisted person) wrote or
    /// deleted the `bot-state` branch; the tick fails closed until the owner restores it.
    StateTampered,
}

impl IncidentLabel {
    /// Every incident label, in the order of the label table.
    pub const ALL: &'static [IncidentLabel] = &[
        Self::PostMergeRevalidation,
        Self::L2Stalled,
        Self::WatermarkLost,
        Self::BreakGlassUnauthorized,
        Self::BreakGlassUnaudited,
        Self::UnauthorizedPush,
        Self::HallucinationDetected,
        Self::MirrorDrift,
        Self::SkillHook,
        Self::StateTampered,
    ];

    /// The GitHub label name, e.g. `decision:l2-stalled`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PostMergeRevalidation => "decision:post-merge-revalidation",
            Self::L2Stalled => "decision:l2-stalled",
            Self::WatermarkLost => "decision:watermark-lost",
            Self::BreakGlassUnauthorized => "decision:break-glass-unauthorized",
            Self::BreakGlassUnaudited => "decision:break-glass-unaudited",
            Self::UnauthorizedPush => "decision:unauthorized-push",
            Self::HallucinationDetected => "decision:hallucination-detected",
            Self::MirrorDrift => "decision:mirror-drift-incident",
            Self::SkillHook => "decision:skill-hook-incident",
            Self::StateTampered => "decision:state-tampered",
        }
    }
}

impl fmt::Display for IncidentLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text is not an incident label.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown incident label {0:?}")]
pub struct ParseIncidentLabelError(String);

impl FromStr for IncidentLabel {
    type Err = ParseIncidentLabelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .iter()
            .copied()
            .find(|label| label.as_str() == s)
            .ok_or_else(|| ParseIncidentLabelError(s.chars().take(80).collect()))
    }
}

/// The identity of an incident issue, used in its title and its hidden body marker.
///
/// A key never contains whitespace, `<` or `>`, so it always fits the marker.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IncidentKey(String);

/// The first 12 hex digits of the SHA-256 of `text`.
pub(crate) fn sha256_hex12(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let mut hex = hex::encode(digest);
    hex.truncate(12);
    hex
}

fn is_key_char(c: char) -> bool {
    !c.is_whitespace() && c != '<' && c != '>'
}

impl IncidentKey {
    /// The key of a single offending commit: its 7-character SHA.
    pub fn single(sha: &CommitSha) -> Self {
        Self(sha.short().to_owned())
    }

    /// The key of a rollup of several offending commits of one label in one repository:
    /// `rollup-<repo name>-<first 12 hex of sha256 of the sorted full SHAs joined by "\n">`.
    ///
    /// The SHAs are de-duplicated and sorted first, so the same offender set always gives
    /// the same key whatever order the scan found them in.
    pub fn rollup(repo: &RepoName, shas: &[CommitSha]) -> Self {
        let mut sorted: Vec<&str> = shas.iter().map(CommitSha::as_str).collect();
        sorted.sort_unstable();
        sorted.dedup();
        Self(format!(
            "rollup-{}-{}",
            repo.name(),
            sha256_hex12(&sorted.join("\n"))
        ))
    }

    /// [`IncidentKey::single`] when the offenders are one commit (after de-duplication),
    /// else [`IncidentKey::rollup`]. `None` for an empty offender list.
    pub fn for_offenders(repo: &RepoName, shas: &[CommitSha]) -> Option<Self> {
        let first = shas.first()?;
        if shas.iter().all(|sha| sha == first) {
            Some(Self::single(first))
        } else {
            Some(Self::rollup(repo, shas))
        }
    }

    /// Wraps a key found in an issue (see [`find_dedupe_key`]) or built elsewhere.
    /// `None` when the text is empty or holds whitespace, `<` or `>`.
    pub fn parse(text: &str) -> Option<Self> {
        (!text.is_empty() && text.chars().all(is_key_char)).then(|| Self(text.to_owned()))
    }

    /// The key text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Builds a key from text already known to satisfy the key charset.
    pub(crate) fn from_trusted(text: String) -> Self {
        debug_assert!(text.chars().all(is_key_char));
        Self(text)
    }
}

impl fmt::Display for IncidentKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

const MARKER_OPEN: &str = "<!-- merge-gate:dedupe:";
const MARKER_CLOSE: &str = " -->";

/// The issue title: `[<label>] <key>`.
pub fn incident_title(label: IncidentLabel, key: &IncidentKey) -> String {
    format!("[{label}] {key}")
}

/// The hidden marker that ends every incident body: `<!-- merge-gate:dedupe:<key> -->`.
pub fn dedupe_marker(key: &IncidentKey) -> String {
    format!("{MARKER_OPEN}{key}{MARKER_CLOSE}")
}

/// The body as opened: the text, a blank line, then the dedupe marker.
pub fn body_with_marker(body: &str, key: &IncidentKey) -> String {
    format!("{body}\n\n{}", dedupe_marker(key))
}

/// The dedupe key of an existing issue body: the last well-formed marker in it.
pub fn find_dedupe_key(body: &str) -> Option<IncidentKey> {
    body.rmatch_indices(MARKER_OPEN).find_map(|(at, _)| {
        let rest = &body[at + MARKER_OPEN.len()..];
        let (key, _) = rest.split_once(MARKER_CLOSE)?;
        IncidentKey::parse(key)
    })
}

/// Whether an issue mentions `key` at all: its marker, or the key text in its title or body.
/// A mention alone proves nothing (anyone with write access can open an issue that says
/// anything); [`IncidentAuthority::standing`] decides whether the issue is mp's.
pub fn issue_mentions_key(title: &str, body: &str, key: &IncidentKey) -> bool {
    body.contains(&dedupe_marker(key))
        || title.contains(key.as_str())
        || body.contains(key.as_str())
}

const MAC_OPEN: &str = "<!-- merge-gate:dedupe-mac:";

/// Who may write an incident that counts, and how it is proven: the issue was opened by
/// mp's identity (GitHub records the author; nobody else can open an issue as mp's App),
/// carries the marker of the key, and, with a receipt key, the MAC of the governance
/// repository, the label and the key (so an issue an agent opens through a shared
/// identity, such as Actions' `GITHUB_TOKEN`, still does not count).
///
/// Only mp can dedupe its incidents: an issue that merely looks like one is reported as a
/// look-alike and never suppresses the real incident.
#[derive(Debug, Clone)]
pub struct IncidentAuthority {
    bot: Login,
    governance: RepoName,
    key: Option<ReceiptKey>,
}

/// What an existing issue is to an incident being surfaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// mp opened it for this incident: the incident is already reported.
    Ours,
    /// It mentions the incident but is not mp's; it suppresses nothing.
    LookAlike(LookAlike),
    /// It does not mention the incident.
    Unrelated,
}

/// Why an issue that mentions an incident does not stand for it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LookAlike {
    /// Someone other than mp's identity opened it (or GitHub names no author).
    NotOpenedByMp {
        /// The author GitHub records, if any.
        author: Option<Login>,
    },
    /// mp's identity opened it, but it lacks the marker of this key.
    MarkerMissing,
    /// A receipt key is set and the issue carries no valid MAC for this incident.
    MacInvalid,
}

impl LookAlike {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::NotOpenedByMp { .. } => "incident_lookalike_not_opened_by_mp",
            Self::MarkerMissing => "incident_lookalike_marker_missing",
            Self::MacInvalid => "incident_lookalike_mac_invalid",
        }
    }
}

impl fmt::Display for LookAlike {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotOpenedByMp {
                author: Some(author),
            } => {
                write!(f, "opened by {author}, not by mp")
            }
            Self::NotOpenedByMp { author: None } => {
                f.write_str("GitHub names no author, so it is not mp's")
            }
            Self::MarkerMissing => f.write_str("opened by mp but without this incident's marker"),
            Self::MacInvalid => {
                f.write_str("opened by mp's identity but without a valid MAC under MP_RECEIPT_KEY")
            }
        }
    }
}

impl IncidentAuthority {
    /// Incidents written by `bot` in `governance`, unsigned.
    pub fn new(bot: Login, governance: RepoName) -> Self {
        Self {
            bot,
            governance,
            key: None,
        }
    }

    /// mp's identity.
    pub fn bot(&self) -> &Login {
        &self.bot
    }

    /// The same authority signing and checking with `key`.
    #[must_use]
    pub fn with_key(mut self, key: Option<ReceiptKey>) -> Self {
        self.key = key;
        self
    }

    fn mac_parts<'a>(&'a self, label: IncidentLabel, key: &'a IncidentKey) -> [&'a str; 4] {
        [
            "incident",
            self.governance.as_str(),
            label.as_str(),
            key.as_str(),
        ]
    }

    fn mac(&self, secret: &ReceiptKey, label: IncidentLabel, key: &IncidentKey) -> String {
        mac_hex(secret, &self.mac_parts(label, key))
    }

    /// `body` (which ends with the dedupe marker, see [`body_with_marker`]) as opened:
    /// with a key, the MAC marker follows on the next line; without one it is unchanged.
    pub fn sign(&self, body: &str, label: IncidentLabel, key: &IncidentKey) -> String {
        match &self.key {
            Some(secret) => format!(
                "{body}\n{MAC_OPEN}{}{MARKER_CLOSE}",
                self.mac(secret, label, key)
            ),
            None => body.to_owned(),
        }
    }

    /// What `issue` is to the incident `key` of `label`.
    pub fn standing(&self, issue: &Issue, label: IncidentLabel, key: &IncidentKey) -> Standing {
        if issue.is_pull_request || !issue_mentions_key(&issue.title, &issue.body, key) {
            return Standing::Unrelated;
        }
        if issue.author.as_ref() != Some(&self.bot) {
            return Standing::LookAlike(LookAlike::NotOpenedByMp {
                author: issue.author.clone(),
            });
        }
        if find_dedupe_key(&issue.body).as_ref() != Some(key) {
            return Standing::LookAlike(LookAlike::MarkerMissing);
        }
        if let Some(secret) = &self.key {
            let valid = marker_value(&issue.body, MAC_OPEN)
                .is_some_and(|digest| verify_mac_hex(secret, &self.mac_parts(label, key), digest));
            if !valid {
                return Standing::LookAlike(LookAlike::MacInvalid);
            }
        }
        Standing::Ours
    }
}

/// One incident raised for one commit by a post-merge check, before rollup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitIncident {
    /// The incident label.
    pub label: IncidentLabel,
    /// The offending commit.
    pub sha: CommitSha,
    /// The Markdown body describing this commit's problem.
    pub body: String,
}

/// An incident ready to be opened (or found again): label, key, title and full body
/// (marker included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SurfacedIncident {
    /// The incident label.
    pub label: IncidentLabel,
    /// The dedupe key.
    pub key: IncidentKey,
    /// The offending commits, sorted and de-duplicated.
    pub shas: Vec<CommitSha>,
    /// `[<label>] <key>`.
    pub title: String,
    /// The Markdown body, ending with the dedupe marker.
    pub body: String,
}

impl fmt::Display for SurfacedIncident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} for {} commit(s) on key {}",
            self.label,
            self.shas.len(),
            self.key
        )
    }
}

/// Groups one repository scan's incidents by label: a label with one offending commit
/// keeps that commit's body and its sha7 key; a label with several becomes one rollup
/// issue listing every SHA with each commit's body below. Labels appear in the order
/// they were first raised.
pub fn roll_up(repo: &RepoName, incidents: &[CommitIncident]) -> Vec<SurfacedIncident> {
    let mut labels: Vec<IncidentLabel> = Vec::new();
    for incident in incidents {
        if !labels.contains(&incident.label) {
            labels.push(incident.label);
        }
    }
    labels
        .into_iter()
        .filter_map(|label| {
            let items: Vec<&CommitIncident> =
                incidents.iter().filter(|i| i.label == label).collect();
            let mut shas: Vec<CommitSha> = items.iter().map(|i| i.sha.clone()).collect();
            shas.sort();
            shas.dedup();
            let key = IncidentKey::for_offenders(repo, &shas)?;
            let text = if shas.len() == 1 {
                items.first().map(|i| i.body.clone()).unwrap_or_default()
            } else {
                rollup_text(repo, label, &shas, &items)
            };
            Some(SurfacedIncident {
                label,
                title: incident_title(label, &key),
                body: body_with_marker(&text, &key),
                key,
                shas,
            })
        })
        .collect()
}

fn rollup_text(
    repo: &RepoName,
    label: IncidentLabel,
    shas: &[CommitSha],
    items: &[&CommitIncident],
) -> String {
    let listing: Vec<String> = shas
        .iter()
        .map(|sha| format!("- `{}`", &sha.as_str()[..12]))
        .collect();
    let details: Vec<String> = items
        .iter()
        .map(|i| format!("### `{}`\n{}", i.sha.short(), i.body))
        .collect();
    format!(
        "**{count} commits on `{repo}` raised `{label}` in one scan.**\n\n\
         Commits:\n{listing}\n\n\
         They are reported together in this one issue; each commit's details follow.\n\n\
         ---\n\n{details}",
        count = shas.len(),
        listing = listing.join("\n"),
        details = details.join("\n\n"),
    )
}

#[cfg(test)]
mod tests;
