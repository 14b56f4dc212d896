//! Values the inbox models' tests share: times, logins, repositories and a configuration.

use crate::config::{self, Config, ConfigFiles};
use crate::ids::{Login, RepoName, Timestamp};

pub(crate) const OWNER: &str = "alice";
pub(crate) const BOT: &str = "mp-gate[bot]";

pub(crate) fn at(text: &str) -> Timestamp {
    Timestamp::parse(text).expect("test timestamp is valid")
}

pub(crate) fn login(name: &str) -> Login {
    Login::parse(name).expect("test login is valid")
}

pub(crate) fn repo(name: &str) -> RepoName {
    RepoName::parse(name).expect("test repository is valid")
}

/// Owner `alice`; `acme/app` gated, `acme/old` audit-only; required check `test`; merging
/// on; with some files added or replaced.
pub(crate) fn config_with(replaced: &[(&str, &str)]) -> Config {
    let mut files = ConfigFiles::new()
        .with(config::OWNER_FILE, "github_login: alice\n")
        .with(
            config::PROJECTS_FILE,
            "governance_repo: acme/governance\nsupervised_repos: [acme/app, acme/old]\naudit_only_repos: [acme/old]\n",
        )
        .with(
            config::ENV_FILE,
            "bot_app_slug: mp-gate\nrequired_checks: [test]\nmerge_enabled: true\n",
        );
    for (name, text) in replaced {
        files.insert(*name, *text);
    }
    let report = config::load(&files);
    report
        .config
        .unwrap_or_else(|| panic!("test config loads: {:?}", report.problems))
}
