//! The drift check of one tick (bot.md §15, DESIGN §3.8): the canonical files of the
//! governance repository compared with every adopter repository by git blob SHA, and any
//! drift surfaced as one `decision:mirror-drift-incident` issue.
//!
//! Adopters are the supervised repositories under the governance repository's owner,
//! the governance repository itself excluded. The governance tree is read once (lazily,
//! when the first adopter is checked) and reused; each adopter costs one recursive tree
//! read. A tree GitHub cut short (`truncated`) or a tree that is not found (404) falls
//! back to one contents read per canonical path. The adopter loop stops when fewer than
//! [`RATE_LIMIT_RESERVE`] calls are left. Findings of the adopters checked become one
//! issue in the governance repository, found again (open or closed) by its dedupe key, so
//! the same drift never gets a second issue. Drift is only detected: nothing is fixed,
//! and no issue is ever closed.

use std::collections::BTreeMap;
use std::fmt;

use mp_core::branch::drift::{
    DriftFinding, RepoTree, compare_trees, drift_dedupe_key, drift_incident_body,
};
use mp_core::branch::incident::{
    IncidentAuthority, IncidentKey, IncidentLabel, Standing, body_with_marker, incident_title,
};
use mp_core::config::Config;
use mp_core::ids::{PrNumber, RepoName, Timestamp};
use mp_core::port::{GitHubError, GitHubHistory, IssueQuery, IssueState, NewIssue};

use super::MAIN_BRANCH;

#[cfg(test)]
mod tests;

/// The adopter loop stops when fewer calls than this are left in the rate-limit window.
pub const RATE_LIMIT_RESERVE: u32 = 200;

/// What became of the drift incident.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DriftIncident {
    /// A new issue was opened.
    Opened {
        /// The governance repository.
        repo: RepoName,
        /// The new issue.
        number: PrNumber,
    },
    /// An issue already stands for the same drift (its marker, title or body names the
    /// key); nothing was written.
    AlreadyKnown {
        /// The governance repository.
        repo: RepoName,
        /// The existing issue.
        number: PrNumber,
        /// Whether it is still open (a closed one stays closed).
        state: IssueState,
    },
}

impl DriftIncident {
    /// `drift_incident_opened` or `drift_incident_known`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Opened { .. } => "drift_incident_opened",
            Self::AlreadyKnown { .. } => "drift_incident_known",
        }
    }
}

impl fmt::Display for DriftIncident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Opened { repo, number } => write!(f, "opened {repo}#{number}"),
            Self::AlreadyKnown {
                repo,
                number,
                state,
            } => {
                let state = match state {
                    IssueState::Open => "open",
                    IssueState::Closed => "closed",
                };
                write!(f, "already reported in {repo}#{number} ({state})")
            }
        }
    }
}

/// The drift check's tick metrics (bot.md §18).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DriftMetrics {
    /// New drift issues opened (0 or 1).
    pub drift_incidents: u32,
}

/// What one drift check did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DriftReport {
    /// When the check ran.
    pub checked_at: Timestamp,
    /// The adopters compared, in `projects.yml` order.
    pub adopters: Vec<RepoName>,
    /// The repositories whose files were read path by path (truncated or missing tree),
    /// the governance repository included.
    pub per_path: Vec<RepoName>,
    /// Every finding, adopter by adopter in the order of the canonical paths. A canonical
    /// path absent in the governance repository is reported once per adopter, as the
    /// dedupe key counts it.
    pub findings: Vec<DriftFinding>,
    /// The dedupe key of the findings, when there are any.
    pub key: Option<IncidentKey>,
    /// The incident, when one was opened or found.
    pub incident: Option<DriftIncident>,
    /// GitHub calls the check made.
    pub calls: u32,
    /// The tick metrics.
    pub metrics: DriftMetrics,
    /// Calls left when the rate-limit reserve stopped the adopter loop.
    pub stopped_at_remaining: Option<u32>,
    /// Why the check gave up without surfacing anything (the governance files could not be
    /// read, a transient error, the incident could not be listed or opened).
    pub error: Option<String>,
    /// Adopters skipped and other things worth knowing.
    pub warnings: Vec<String>,
}

impl DriftReport {
    fn new(checked_at: Timestamp) -> Self {
        Self {
            checked_at,
            adopters: Vec::new(),
            per_path: Vec::new(),
            findings: Vec::new(),
            key: None,
            incident: None,
            calls: 0,
            metrics: DriftMetrics::default(),
            stopped_at_remaining: None,
            error: None,
            warnings: Vec::new(),
        }
    }
}

impl fmt::Display for DriftReport {
    /// One line: adopters, findings, the incident or the error, and the calls made.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "drift: {} finding(s) in {} adopter(s)",
            self.findings.len(),
            self.adopters.len()
        )?;
        if let Some(incident) = &self.incident {
            write!(f, "; {incident}")?;
        }
        if let Some(key) = &self.key {
            write!(f, " (key {key})")?;
        }
        if let Some(remaining) = self.stopped_at_remaining {
            write!(
                f,
                "; stopped at the rate-limit reserve ({remaining} calls left)"
            )?;
        }
        if let Some(error) = &self.error {
            write!(f, "; gave up: {error}")?;
        }
        write!(f, "; {} call(s)", self.calls)
    }
}

/// The port, counting the calls made through it.
struct Counted<'a> {
    github: &'a dyn GitHubHistory,
    calls: u32,
}

/// One repository's canonical paths as path → blob SHA.
struct Blobs {
    blobs: BTreeMap<String, String>,
    per_path: bool,
}

impl Counted<'_> {
    /// The blob SHAs of `paths` at `main`: from one recursive tree read, or path by path
    /// when the tree is cut short or not found.
    async fn blobs(&mut self, repo: &RepoName, paths: &[&str]) -> Result<Blobs, GitHubError> {
        self.calls += 1;
        match self.github.tree(repo, MAIN_BRANCH).await {
            Ok(tree) if !tree.truncated => {
                let blobs = tree
                    .entries
                    .into_iter()
                    .filter(|entry| paths.contains(&entry.path.as_str()))
                    .map(|entry| (entry.path, entry.blob_sha))
                    .collect();
                return Ok(Blobs {
                    blobs,
                    per_path: false,
                });
            }
            Ok(_) | Err(GitHubError::NotFound { .. }) => {}
            Err(error) => return Err(error),
        }
        let mut blobs = BTreeMap::new();
        for path in paths {
            self.calls += 1;
            if let Some(file) = self.github.file(repo, path, MAIN_BRANCH).await? {
                blobs.insert((*path).to_owned(), file.blob_sha);
            }
        }
        Ok(Blobs {
            blobs,
            per_path: true,
        })
    }
}

/// Runs the drift check at `now`: compares every adopter with the governance repository
/// and opens one `decision:mirror-drift-incident` issue for the findings unless an issue
/// (open or closed) already stands for them.
///
/// Without `mirror_paths.json`, without canonical paths or without adopters it makes no
/// call. An adopter that cannot be read for a lasting reason (not found, refused) is
/// skipped with a warning; a transient error (rate limit, outage) or an unreadable
/// governance repository ends the check without surfacing anything, since partial
/// findings would open an issue under another key.
///
/// Only an issue `authority` recognises as mp's own stands for the findings; a look-alike
/// is a warning and suppresses nothing.
pub async fn check_drift(
    github: &dyn GitHubHistory,
    config: &Config,
    authority: &IncidentAuthority,
    now: Timestamp,
) -> DriftReport {
    let mut report = DriftReport::new(now);
    let mut counted = Counted { github, calls: 0 };
    run(&mut counted, config, authority, &mut report).await;
    report.calls = counted.calls;
    report
}

async fn run(
    github: &mut Counted<'_>,
    config: &Config,
    authority: &IncidentAuthority,
    report: &mut DriftReport,
) {
    let Some(mirror) = config.mirror_paths() else {
        return;
    };
    let canonical_paths = mirror.canonical_paths();
    if canonical_paths.is_empty() {
        return;
    }
    let governance = config.projects().governance_repo();
    let adopters: Vec<&RepoName> = config
        .projects()
        .supervised_repos()
        .iter()
        .filter(|repo| repo.owner() == governance.owner() && *repo != governance)
        .collect();

    let all_paths: Vec<&str> = canonical_paths.iter().map(String::as_str).collect();
    let mut canonical: Option<BTreeMap<String, String>> = None;
    for (index, adopter) in adopters.iter().enumerate() {
        if let Some(remaining) = github.github.rate_limit_remaining()
            && remaining < RATE_LIMIT_RESERVE
        {
            report.stopped_at_remaining = Some(remaining);
            let left: Vec<String> = adopters[index..].iter().map(|r| r.to_string()).collect();
            report.warnings.push(format!(
                "rate-limit reserve reached ({remaining} calls left, reserve {RATE_LIMIT_RESERVE}); not checked: {}",
                left.join(", ")
            ));
            break;
        }
        // The governance files are read once, for the first adopter checked, and kept.
        let canonical_blobs = match canonical.take() {
            Some(blobs) => blobs,
            None => match github.blobs(governance, &all_paths).await {
                Ok(read) => {
                    if read.per_path {
                        report.per_path.push(governance.clone());
                    }
                    read.blobs
                }
                Err(error) => {
                    report.error = Some(format!(
                        "cannot read the canonical files of {governance}: {error}"
                    ));
                    return;
                }
            },
        };
        let canonical_blobs = canonical.insert(canonical_blobs);
        let paths = mirror.paths_for(adopter.name());
        match github.blobs(adopter, &paths).await {
            Ok(read) => {
                if read.per_path {
                    report.per_path.push((*adopter).clone());
                }
                let exceptions: Vec<String> = mirror
                    .exceptions_for(adopter.name())
                    .map(|skipped| skipped.iter().cloned().collect())
                    .unwrap_or_default();
                report.findings.extend(compare_trees(
                    RepoTree {
                        repo: governance,
                        blobs: canonical_blobs,
                    },
                    RepoTree {
                        repo: adopter,
                        blobs: &read.blobs,
                    },
                    canonical_paths,
                    &exceptions,
                ));
                report.adopters.push((*adopter).clone());
            }
            Err(error) if error.is_transient() => {
                report.error = Some(format!("{adopter}: {error}"));
                return;
            }
            Err(error) => report.warnings.push(format!(
                "{adopter}: skipped, cannot read its files: {error}"
            )),
        }
    }
    if !report.findings.is_empty() {
        surface(github, governance, authority, report).await;
    }
}

/// Finds the issue that already stands for the findings' key, or opens one.
async fn surface(
    github: &mut Counted<'_>,
    governance: &RepoName,
    authority: &IncidentAuthority,
    report: &mut DriftReport,
) {
    let label = IncidentLabel::MirrorDrift;
    let key = drift_dedupe_key(&report.findings);
    report.key = Some(key.clone());
    let query = IssueQuery {
        state: None,
        labels: vec![label.as_str().to_owned()],
    };
    github.calls += 1;
    let issues = match github.github.issues(governance, &query).await {
        Ok(issues) => issues,
        Err(error) => {
            report.error = Some(format!(
                "cannot list the {label} issues of {governance}: {error}"
            ));
            return;
        }
    };
    let mut known = None;
    for issue in &issues {
        match authority.standing(issue, label, &key) {
            Standing::Unrelated => {}
            Standing::Ours => {
                known = Some(issue);
                break;
            }
            Standing::LookAlike(why) => report.warnings.push(format!(
                "{label} {key}: {governance}#{} looks like this incident but does not count: {why} ({})",
                issue.number,
                why.code()
            )),
        }
    }
    if let Some(issue) = known {
        report.incident = Some(DriftIncident::AlreadyKnown {
            repo: governance.clone(),
            number: issue.number,
            state: issue.state,
        });
        return;
    }
    let issue = NewIssue {
        title: incident_title(label, &key),
        body: authority.sign(
            &body_with_marker(&drift_incident_body(&report.findings), &key),
            label,
            &key,
        ),
        labels: vec![label.as_str().to_owned()],
    };
    github.calls += 1;
    match github.github.create_issue(governance, &issue).await {
        Ok(created) => {
            report.incident = Some(DriftIncident::Opened {
                repo: governance.clone(),
                number: created.number,
            });
            report.metrics.drift_incidents += 1;
        }
        Err(error) => {
            report.error = Some(format!(
                "cannot open the {label} issue in {governance}: {error}"
            ));
        }
    }
}
