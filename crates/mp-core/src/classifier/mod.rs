//! The four-quadrant classifier: every rule votes, the verdict is the maximum vote.
//!
//! Each built-in rule lives in its own module and returns a typed finding (with a stable
//! `code()`, its evidence and a one-line `Display`) that becomes one [`Vote`]. [`classify`]
//! runs the built-ins in a fixed order, appends the user rules' votes and takes the
//! maximum under `A < C < B < D` with [`max_vote`]. Because the verdict is a maximum, a
//! vote can only raise it: a user rule (or a forged published verdict) can never lower a
//! built-in D.

use std::fmt;

use crate::context::PrContext;
use crate::ids::RepoName;
use crate::quadrant::Quadrant;
use crate::skill::builtin::{BuiltIn, EnabledBuiltIns};

pub mod auto_revert;
pub mod bot_self_repo;
pub mod empty_pr;
pub mod malformed_session;
pub mod path_rules;
pub mod published_verdict;

#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;

pub use auto_revert::{AutoRevertLabel, AutoRevertProof};
pub use path_rules::{CompilePathRulesError, PathList, PathRules, PathRulesSpec};

/// Which rule cast a vote. Built-in ids are stable snake_case codes that appear in PR
/// comments and in the audit log.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RuleId {
    /// `classifier_path_default`: always-D, append-only and critical path globs.
    PathDefault,
    /// `classifier_bot_self_repo`: a pull request on the bot's own repository is D.
    BotSelfRepo,
    /// `classifier_empty_pr`: a pull request that changes no file is D.
    EmptyPr,
    /// `classifier_auto_revert`: a verified `decision:auto-revert` label is C.
    AutoRevert,
    /// `classifier_published_verdict`: the canonical `classifier-judgment` check run.
    PublishedVerdict,
    /// `classifier_malformed_session`: a present but malformed `Agent-Session` is D.
    MalformedSession,
    /// A user-added rule, by its name.
    User(String),
}

impl RuleId {
    /// The built-in rules in the order [`classify`] runs them.
    pub const BUILT_IN: [RuleId; 6] = [
        RuleId::PathDefault,
        RuleId::BotSelfRepo,
        RuleId::EmptyPr,
        RuleId::AutoRevert,
        RuleId::PublishedVerdict,
        RuleId::MalformedSession,
    ];

    /// The stable code: `classifier_path_default`, ..., or the user rule's name.
    pub fn code(&self) -> &str {
        match self {
            Self::User(name) => name,
            // Every other id is a built-in.
            _ => self.built_in().map_or("", BuiltIn::name),
        }
    }

    /// The built-in skill this rule is; `None` for a user rule.
    pub fn built_in(&self) -> Option<BuiltIn> {
        Some(match self {
            Self::PathDefault => BuiltIn::PathDefault,
            Self::BotSelfRepo => BuiltIn::BotSelfRepo,
            Self::EmptyPr => BuiltIn::EmptyPr,
            Self::AutoRevert => BuiltIn::AutoRevert,
            Self::PublishedVerdict => BuiltIn::PublishedVerdict,
            Self::MalformedSession => BuiltIn::MalformedSession,
            Self::User(_) => return None,
        })
    }

    /// Reads a code back (e.g. from the audit log): a built-in code gives the built-in id,
    /// anything else a [`RuleId::User`].
    pub fn from_code(code: &str) -> Self {
        Self::BUILT_IN
            .into_iter()
            .find(|id| id.code() == code)
            .unwrap_or_else(|| Self::User(code.to_owned()))
    }

    /// Whether this is one of the built-in rules.
    pub fn is_built_in(&self) -> bool {
        !matches!(self, Self::User(_))
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// One rule's vote: the quadrant it asks for and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vote {
    /// The rule that voted.
    pub rule: RuleId,
    /// The quadrant it voted for (`A` when it has nothing to say).
    pub quadrant: Quadrant,
    /// One line naming the input that decided the vote.
    pub reasoning: String,
}

impl Vote {
    /// A vote.
    pub fn new(rule: RuleId, quadrant: Quadrant, reasoning: impl Into<String>) -> Self {
        Self {
            rule,
            quadrant,
            reasoning: reasoning.into(),
        }
    }
}

impl fmt::Display for Vote {
    /// `classifier_path_default voted D: config/x.yml is always D`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} voted {}: {}",
            self.rule, self.quadrant, self.reasoning
        )
    }
}

/// The classifier's answer: the maximum quadrant and every vote that led to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The maximum of the votes under `A < C < B < D` (`A` when nobody voted).
    pub quadrant: Quadrant,
    /// Every vote, in the order the rules ran.
    pub votes: Vec<Vote>,
}

impl Verdict {
    /// The reasoning of every D vote joined by `"; "` (empty when nobody voted D). This is
    /// the text the decision inbox shows the owner.
    pub fn d_reasoning(&self) -> String {
        self.votes
            .iter()
            .filter(|v| v.quadrant == Quadrant::D)
            .map(|v| v.reasoning.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The votes that reached the verdict's quadrant (none when nobody voted).
    pub fn deciding_votes(&self) -> impl Iterator<Item = &Vote> {
        self.votes.iter().filter(|v| v.quadrant == self.quadrant)
    }
}

impl fmt::Display for Verdict {
    /// `Quadrant D: classifier_path_default (config/x.yml is always D)`, naming every vote
    /// that reached the verdict's quadrant.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Quadrant {}: ", self.quadrant)?;
        let mut deciding = self.deciding_votes().peekable();
        if deciding.peek().is_none() {
            return f.write_str("no rule voted");
        }
        for (i, vote) in deciding.enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{} ({})", vote.rule, vote.reasoning)?;
        }
        Ok(())
    }
}

/// Combines votes into a verdict: the quadrant is the maximum under `A < C < B < D` (`A`
/// for no votes) and every vote is kept, in the given order.
pub fn max_vote(votes: Vec<Vote>) -> Verdict {
    let quadrant = votes
        .iter()
        .map(|v| v.quadrant)
        .max()
        .unwrap_or(Quadrant::A);
    Verdict { quadrant, votes }
}

/// What the built-in rules need beyond the pull request itself.
///
/// The fields are public and the struct is deliberately not `#[non_exhaustive]`: when a
/// built-in rule needs a new fact, every caller must be made to supply it.
#[derive(Debug, Clone)]
pub struct ClassifierFacts<'a> {
    /// The bot's own repository (the governance repository when no separate bot
    /// repository is configured). Pull requests on it are always D.
    pub bot_repo: &'a RepoName,
    /// The compiled path rules (`classifier_rules.yml`, or the shipped default).
    pub path_rules: &'a PathRules,
    /// The App slug whose `classifier-judgment` check runs are trusted; `None` (or an
    /// empty slug) trusts nobody and the published-verdict rule abstains.
    pub publisher_slug: Option<&'a str>,
    /// The status of the `decision:auto-revert` label on this pull request, as the label
    /// provenance checks established it.
    pub auto_revert: AutoRevertLabel,
}

/// Classifies a pull request: runs the built-in rules in their fixed order
/// (`classifier_path_default`, `classifier_bot_self_repo`, `classifier_empty_pr`,
/// `classifier_auto_revert`, `classifier_published_verdict`,
/// `classifier_malformed_session`), appends the user rules' votes, and takes the maximum.
///
/// User votes can only raise the verdict; they are kept as given.
pub fn classify(pr: &PrContext, facts: &ClassifierFacts<'_>, user_votes: Vec<Vote>) -> Verdict {
    classify_with(pr, facts, user_votes, EnabledBuiltIns::ALL)
}

/// Classifies like [`classify`], running only the built-in rules in `built_ins` (the set
/// `skills.yml` leaves on, [`SkillsPolicy::built_ins`](crate::config::SkillsPolicy::built_ins)): a rule `disabled` switches off is
/// not run and casts no vote. `classifier_bot_self_repo` is required and in every set; the
/// listing-cap half of `classifier_empty_pr` runs whatever the set says.
pub fn classify_with(
    pr: &PrContext,
    facts: &ClassifierFacts<'_>,
    user_votes: Vec<Vote>,
    built_ins: EnabledBuiltIns,
) -> Verdict {
    type Rule<'r> = (BuiltIn, &'r dyn Fn() -> Vote);
    let rules: [Rule<'_>; 6] = [
        (BuiltIn::PathDefault, &|| {
            facts.path_rules.evaluate(&pr.files).vote()
        }),
        (BuiltIn::BotSelfRepo, &|| {
            bot_self_repo::evaluate(pr, facts.bot_repo).vote()
        }),
        (BuiltIn::EmptyPr, &|| empty_pr::evaluate(pr).vote()),
        (BuiltIn::AutoRevert, &|| facts.auto_revert.vote()),
        (BuiltIn::PublishedVerdict, &|| {
            published_verdict::evaluate(&pr.check_runs, facts.publisher_slug).vote()
        }),
        (BuiltIn::MalformedSession, &|| {
            malformed_session::evaluate(pr).vote()
        }),
    ];
    let mut votes: Vec<Vote> = rules
        .into_iter()
        .filter(|(built_in, _)| {
            built_ins.contains(*built_in)
                || (*built_in == BuiltIn::EmptyPr && empty_pr::at_listing_cap(pr))
        })
        .map(|(_, run)| run())
        .collect();
    votes.extend(user_votes);
    max_vote(votes)
}

/// How many items a reasoning line names before it says "and N more".
const LISTED: usize = 3;

/// Writes up to [`LISTED`] items separated by `", "`, then `" and N more"`.
fn write_list<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: &[T]) -> fmt::Result {
    for (i, item) in items.iter().take(LISTED).enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{item}")?;
    }
    if items.len() > LISTED {
        write!(f, " and {} more", items.len() - LISTED)?;
    }
    Ok(())
}

/// `"is"` for one item, `"are"` for several.
fn is_are(count: usize) -> &'static str {
    if count == 1 { "is" } else { "are" }
}
