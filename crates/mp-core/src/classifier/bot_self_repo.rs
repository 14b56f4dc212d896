//! The bot-self-repo rule (`classifier_bot_self_repo`): a pull request on the bot's own
//! repository is D, because changes to the bot itself go to the owner.

use std::fmt;

use super::{RuleId, Vote};
use crate::context::PrContext;
use crate::ids::RepoName;
use crate::quadrant::Quadrant;

/// What the bot-self-repo rule found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BotSelfRepoFinding {
    /// The pull request targets the bot's own repository (D).
    SelfRepo {
        /// The repository.
        repo: RepoName,
    },
    /// The pull request targets another repository (A).
    OtherRepo {
        /// The pull request's repository.
        repo: RepoName,
        /// The bot's repository.
        bot_repo: RepoName,
    },
}

impl BotSelfRepoFinding {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::SelfRepo { .. } => "bot_self_repo",
            Self::OtherRepo { .. } => "bot_other_repo",
        }
    }

    /// The quadrant this finding votes for.
    pub fn quadrant(&self) -> Quadrant {
        match self {
            Self::SelfRepo { .. } => Quadrant::D,
            Self::OtherRepo { .. } => Quadrant::A,
        }
    }

    /// The `classifier_bot_self_repo` vote.
    pub fn vote(&self) -> Vote {
        Vote::new(RuleId::BotSelfRepo, self.quadrant(), self.to_string())
    }
}

impl fmt::Display for BotSelfRepoFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SelfRepo { repo } => write!(
                f,
                "{repo} is the bot's own repository: changes to the bot itself go to the owner"
            ),
            Self::OtherRepo { repo, bot_repo } => {
                write!(f, "{repo} is not the bot's repository {bot_repo}")
            }
        }
    }
}

/// Evaluates the bot-self-repo rule. Repository names compare case-insensitively
/// ([`RepoName`] is lower-cased).
pub fn evaluate(pr: &PrContext, bot_repo: &RepoName) -> BotSelfRepoFinding {
    if &pr.repo == bot_repo {
        BotSelfRepoFinding::SelfRepo {
            repo: pr.repo.clone(),
        }
    } else {
        BotSelfRepoFinding::OtherRepo {
            repo: pr.repo.clone(),
            bot_repo: bot_repo.clone(),
        }
    }
}

#[cfg(test)]
mod tests;
