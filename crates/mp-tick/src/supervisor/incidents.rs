//! Opening incident issues in the governance repository: dedupe against every issue of
//! the label (open or closed) by the hidden marker, then the per-tick issue cap.

use mp_core::branch::incident::{IncidentKey, SurfacedIncident, body_with_marker, incident_title};
use mp_core::branch::{IncidentLabel, Standing};
use mp_core::ids::CommitSha;
use mp_core::port::{Issue, IssueQuery, IssueState, NewIssue};

use super::{Scan, SupervisorStop};

/// What became of one incident.
#[derive(Debug, Clone)]
pub(super) enum Surfaced {
    /// A new issue was opened.
    Opened(Issue),
    /// An issue (open or closed) already stands for it.
    Existing(Issue),
    /// Not opened this tick (issue cap, or the dedupe list could not be read): the
    /// caller holds its watermark so the incident is raised again.
    Deferred,
}

/// An incident about one commit, keyed by its 7-character SHA.
pub(super) fn single(label: IncidentLabel, sha: &CommitSha, text: &str) -> SurfacedIncident {
    let key = IncidentKey::single(sha);
    SurfacedIncident {
        label,
        title: incident_title(label, &key),
        body: body_with_marker(text, &key),
        shas: vec![sha.clone()],
        key,
    }
}

fn state_name(state: IssueState) -> &'static str {
    match state {
        IssueState::Open => "open",
        IssueState::Closed => "closed",
    }
}

impl Scan<'_> {
    /// The issues carrying `label`, in any state, listed once per tick; `None` (with a
    /// warning) when they cannot be listed.
    async fn labelled(
        &mut self,
        label: IncidentLabel,
    ) -> Result<Option<Vec<Issue>>, SupervisorStop> {
        if let Some(issues) = self.run.issues.get(&label) {
            return Ok(Some(issues.clone()));
        }
        let query = IssueQuery {
            state: None,
            labels: vec![label.as_str().to_owned()],
        };
        let governance = self.governance().clone();
        match self.github.issues(&governance, &query).await {
            Ok(issues) => {
                self.run.issues.insert(label, issues.clone());
                Ok(Some(issues))
            }
            Err(error) => {
                self.stop_or_warn(
                    &error,
                    &format!("cannot list '{label}' issues to dedupe; the incident waits"),
                )?;
                Ok(None)
            }
        }
    }

    /// Finds the incident's issue again or opens it, within the per-tick cap.
    pub(super) async fn surface(
        &mut self,
        incident: &SurfacedIncident,
    ) -> Result<Surfaced, SupervisorStop> {
        let (label, key) = (incident.label, &incident.key);
        let governance = self.governance().clone();
        let Some(issues) = self.labelled(label).await? else {
            self.event(format!("{label} {key}: deferred (dedupe list unavailable)"));
            return Ok(Surfaced::Deferred);
        };
        let authority = self.authority();
        let mut ours = None;
        for issue in &issues {
            match authority.standing(issue, label, key) {
                Standing::Unrelated => {}
                Standing::Ours => {
                    ours = Some(issue);
                    break;
                }
                Standing::LookAlike(why) => self.warn(format!(
                    "{label} {key}: {governance}#{} looks like this incident but does not count: {why} ({})",
                    issue.number,
                    why.code()
                )),
            }
        }
        if let Some(found) = ours {
            self.event(format!(
                "{label} {key}: already reported as {governance}#{} ({})",
                found.number,
                state_name(found.state)
            ));
            return Ok(Surfaced::Existing(found.clone()));
        }
        if !self.run.take_issue_slot() {
            self.report.metrics.issues_deferred += 1;
            self.event(format!(
                "{label} {key}: deferred (the per-tick cap of {} new issues is reached)",
                super::ISSUES_PER_TICK
            ));
            return Ok(Surfaced::Deferred);
        }
        let new = NewIssue {
            title: incident.title.clone(),
            body: authority.sign(&incident.body, label, key),
            labels: vec![label.as_str().to_owned()],
        };
        match self.github.create_issue(&governance, &new).await {
            Ok(issue) => {
                self.event(format!(
                    "{label} {key}: opened {governance}#{}",
                    issue.number
                ));
                self.run
                    .issues
                    .entry(label)
                    .or_default()
                    .push(issue.clone());
                self.report.incidents.push(super::IncidentNote {
                    label,
                    shas: incident.shas.clone(),
                    issue: issue.number,
                });
                Ok(Surfaced::Opened(issue))
            }
            Err(error) => {
                self.run.refund_issue_slot();
                self.stop_or_warn(
                    &error,
                    &format!("cannot open the '{label}' issue {key}; it waits"),
                )?;
                Ok(Surfaced::Deferred)
            }
        }
    }

    /// Replaces the body of an incident issue, keeping the per-tick list in step.
    pub(super) async fn update_body(
        &mut self,
        label: IncidentLabel,
        issue: &Issue,
        body: &str,
    ) -> Result<(), SupervisorStop> {
        let governance = self.governance().clone();
        match self
            .github
            .update_issue_body(&governance, issue.number, body)
            .await
        {
            Ok(()) => {
                if let Some(cached) = self
                    .run
                    .issues
                    .get_mut(&label)
                    .and_then(|list| list.iter_mut().find(|i| i.number == issue.number))
                {
                    cached.body = body.to_owned();
                }
                Ok(())
            }
            Err(error) => self.stop_or_warn(
                &error,
                &format!("cannot update the body of {governance}#{}", issue.number),
            ),
        }
    }
}
