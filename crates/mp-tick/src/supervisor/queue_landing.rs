//! What an update of the default branch by GitHub's merge queue (`merge_queue_merge`)
//! landed, read back from GitHub's records (decisions/0078): the pull requests whose merge
//! commits make up the update's first-parent chain, each at the head it merged, and
//! whether the owner's approval binds that head as the gate reads it.
//!
//! A commit's subject only suggests which pull request it merged (`Merge pull request #N`,
//! `Title (#N)`): it is the pull request's own record (`merged`, `merge_commit`) that says
//! so. A merge commit's second parent must be the pull request's head; every other commit
//! of the update is reached through those heads.

use mp_core::approval::{READY_TO_MERGE, Receipts, verify_label};
use mp_core::branch::{QueueLanded, QueueLanding};
use mp_core::context::{CommitContext, RefUpdate};
use mp_core::ids::{CommitSha, PrNumber};
use mp_core::port::{GitHub, PullRequest};

use super::{Scan, SupervisorStop};
use crate::evaluate::fetch_context;

/// At most this many first-parent commits of one update are read back.
const MAX_LANDINGS: usize = 100;

/// The pull request numbers a commit subject names (`#N`), at most three.
fn named_numbers(subject: &str) -> Vec<PrNumber> {
    subject
        .match_indices('#')
        .filter_map(|(at, _)| {
            let digits: String = subject[at + 1..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse::<u64>().ok().map(PrNumber::new)
        })
        .take(3)
        .collect()
}

impl Scan<'_> {
    /// What the queue's `update` (its `commits`) landed; `None` when GitHub could not be
    /// read, so the update waits for the next tick.
    pub(super) async fn queue_landing(
        &mut self,
        update: &RefUpdate,
        commits: &[CommitContext],
    ) -> Result<Option<QueueLanding>, SupervisorStop> {
        let mut landed = Vec::new();
        self.queue_audits.clear();
        let mut tip = update.after.clone();
        while tip != update.before {
            let Some(sha) = tip else {
                return Ok(Some(Err("the update deleted the branch".to_owned())));
            };
            if landed.len() == MAX_LANDINGS {
                return Ok(Some(Err(format!(
                    "the update brought more than {MAX_LANDINGS} merges"
                ))));
            }
            let Some(commit) = commits.iter().find(|c| c.sha == sha) else {
                return Ok(Some(Err(format!(
                    "commit {} is not among the update's commits",
                    sha.short()
                ))));
            };
            match self.landed_by(commit).await? {
                None => return Ok(None),
                Some(Ok(one)) => landed.push(one),
                Some(Err(why)) => return Ok(Some(Err(why))),
            }
            tip = commit.parents.first().cloned();
        }
        Ok(Some(Ok(landed)))
    }

    /// The pull request whose merge `commit` is, at the head it merged, approved by the
    /// owner there; `None` when GitHub could not be read.
    async fn landed_by(
        &mut self,
        commit: &CommitContext,
    ) -> Result<Option<Result<QueueLanded, String>>, SupervisorStop> {
        let short = commit.sha.short().to_owned();
        let mut pull: Option<PullRequest> = None;
        for number in named_numbers(&commit.subject) {
            match self.github.pull(self.repo, number).await {
                Ok(read) if read.merged && read.merge_commit.as_ref() == Some(&commit.sha) => {
                    pull = Some(read);
                    break;
                }
                Ok(_) | Err(mp_core::port::GitHubError::NotFound { .. }) => {}
                Err(error) => {
                    self.stop_or_warn(
                        &error,
                        &format!("cannot read #{number}, which {short} names"),
                    )?;
                    return Ok(None);
                }
            }
        }
        let Some(pull) = pull else {
            return Ok(Some(Err(format!(
                "no pull request GitHub shows merged as {short}"
            ))));
        };
        let number = pull.number;
        match commit.parents.as_slice() {
            [_] => {}
            [_, head] if head == &pull.head_sha => {}
            _ => {
                return Ok(Some(Err(format!(
                    "{short} is not a merge of #{number}'s head {} alone",
                    pull.head_sha.short()
                ))));
            }
        }
        let github: &dyn GitHub = self.github;
        let read = async {
            let context = fetch_context(github, &pull).await?;
            let comments = github.comments(self.repo, number).await?;
            Ok::<_, mp_core::port::GitHubError>((context, comments))
        };
        let (context, comments) = match read.await {
            Ok(read) => read,
            Err(error) => {
                self.stop_or_warn(&error, &format!("cannot read #{number}'s approval"))?;
                return Ok(None);
            }
        };
        let bot = self.run.bot().clone();
        let key = self.run.receipt_key.as_ref();
        let receipts = Receipts::parse(&comments, self.repo, number, Some(&bot), key);
        let policy = self.config.gate_policy(self.repo, bot, None);
        let head: CommitSha = pull.head_sha.clone();
        let verification = verify_label(&context, READY_TO_MERGE, &receipts, policy.trust_roots());
        if !verification.is_verified() {
            return Ok(Some(Err(format!(
                "it landed #{number} at head {}, which the owner did not approve: '{READY_TO_MERGE}' {verification}",
                head.short()
            ))));
        }
        if let Some(issue) = self.queue_audit_issue(context, comments, &commit.sha) {
            self.queue_audits.push(issue);
        }
        Ok(Some(Ok(QueueLanded { pr: number, head })))
    }

    /// Opens the audit issues of the update just read back, in the inbox repository, as mp
    /// opens them after its own merges; one that cannot be opened is a warning.
    pub(super) async fn open_queue_audits(&mut self) -> Result<(), SupervisorStop> {
        let inbox = self.config.projects().inbox_repository().clone();
        for issue in std::mem::take(&mut self.queue_audits) {
            match self.github.create_issue(&inbox, &issue).await {
                Ok(opened) => {
                    self.event(format!("{}: opened {inbox}#{}", issue.title, opened.number))
                }
                Err(error) => self.stop_or_warn(
                    &error,
                    &format!("cannot open the audit issue '{}' in {inbox}", issue.title),
                )?,
            }
        }
        Ok(())
    }

    /// The Quadrant B/C audit issue of a pull request GitHub's queue landed as `landed`,
    /// classified as the gate classifies it (decisions/0084); `None` for A and D, or when
    /// the path rules do not compile (a warning).
    fn queue_audit_issue(
        &mut self,
        context: mp_core::context::PrContext,
        comments: Vec<mp_core::context::Comment>,
        landed: &CommitSha,
    ) -> Option<mp_core::port::NewIssue> {
        let mut options = crate::TickOptions::from_config(self.config);
        options.skills = self.run.skills.clone();
        options.receipt_key = self.run.receipt_key.clone();
        let setup = match crate::TickSetup::new(self.config, &options, self.run.bot().clone()) {
            Ok(setup) => setup,
            Err(error) => {
                self.warn(format!(
                    "#{} landed through GitHub's merge queue; not classified for its audit issue: {error}",
                    context.number
                ));
                return None;
            }
        };
        let main_head = landed.clone();
        let evaluation = crate::evaluate::assess_pr(&setup, context, comments, main_head, self.now);
        mp_core::inbox::landed_audit_issue(
            &evaluation.pr,
            &evaluation.verdict,
            landed,
            "GitHub's merge queue",
            self.now,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::named_numbers;
    use mp_core::ids::PrNumber;

    #[test]
    fn a_subject_names_pull_requests_by_their_hash() {
        assert_eq!(
            named_numbers("Merge pull request #12 from a/b"),
            [PrNumber::new(12)]
        );
        assert_eq!(
            named_numbers("Fix #3 the thing (#45)"),
            [PrNumber::new(3), PrNumber::new(45)]
        );
        assert_eq!(named_numbers("no number # here"), Vec::<PrNumber>::new());
    }
}
