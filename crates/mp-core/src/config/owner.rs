//! `owner.yml`: the human owner and the allowlist of actors the bot trusts.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::problem::codes;
use super::validate::{self, Sink, first_at, item};
use super::yaml;
use crate::ids::Login;

/// The human owner of the deployment.
///
/// The allowlist is the only human trust root: who may apply approval labels, vote in the
/// decision inbox, commit break-glass fixes and push directly to `main`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(title = "owner.yml"))]
pub(crate) struct OwnerFile {
    /// The owner's GitHub login.
    #[cfg_attr(feature = "schema", schemars(with = "String", regex(pattern = super::validate::LOGIN_PATTERN)))]
    github_login: Spanned<String>,
    /// Logins the bot trusts as human actors. Defaults to `[github_login]`.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(
            with = "Option<Vec<String>>",
            length(min = 1),
            inner(regex(pattern = super::validate::LOGIN_PATTERN)),
            extend("uniqueItems" = true)
        )
    )]
    allowlisted_actors: Option<Spanned<Vec<Spanned<String>>>>,
    /// A display name for messages; accepted and not used by the bot.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<String>", length(max = 100))
    )]
    display_name: Option<Spanned<String>>,
}

/// The owner and the actors the bot trusts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    login: Login,
    allowlist: Vec<Login>,
    display_name: Option<String>,
}

impl Owner {
    /// The owner's login (`github_login`).
    pub fn login(&self) -> &Login {
        &self.login
    }

    /// The trusted human actors (`allowlisted_actors`, default `[github_login]`), in file order.
    pub fn allowlist(&self) -> &[Login] {
        &self.allowlist
    }

    /// Whether `login` is on the allowlist.
    pub fn is_allowlisted(&self, login: &Login) -> bool {
        self.allowlist.contains(login)
    }

    /// The optional display name; the bot does not use it.
    pub fn display_name(&self) -> Option<&str> {
        self.display_name.as_deref()
    }
}

/// Reads and checks `owner.yml`. `None` when the file cannot be read or the owner's login is
/// invalid; otherwise invalid allowlist entries are left out (each one reported).
pub(crate) fn load(sink: &mut Sink<'_>, text: &str) -> Option<Owner> {
    let file = sink.file().to_owned();
    let raw: OwnerFile = yaml::parse(&file, text, sink.problems())?;
    let login = validate::login(sink, "github_login", &raw.github_login);

    let mut allowlist = Vec::new();
    if let Some(actors) = &raw.allowlisted_actors {
        if actors.value.is_empty() {
            sink.error(
                codes::INVALID_VALUE,
                "allowlisted_actors",
                &actors.referenced,
                "allowlisted_actors is empty; list at least one login or remove the key to trust only github_login",
            );
        }
        let mut seen: BTreeMap<Login, u64> = BTreeMap::new();
        for (index, actor) in actors.value.iter().enumerate() {
            let field = item("allowlisted_actors", index);
            let Some(parsed) = validate::login(sink, &field, actor) else {
                continue;
            };
            if let Some(first) = seen.get(&parsed) {
                sink.error(
                    codes::INVALID_VALUE,
                    &field,
                    &actor.referenced,
                    format!("login `{parsed}` is listed twice{}", first_at(*first)),
                );
                continue;
            }
            seen.insert(parsed.clone(), actor.referenced.line());
            allowlist.push(parsed);
        }
    }

    if let Some(name) = &raw.display_name {
        let length = name.value.chars().count();
        if length > 100 {
            sink.error(
                codes::INVALID_VALUE,
                "display_name",
                &name.referenced,
                format!("display_name has {length} characters, expected at most 100"),
            );
        }
    }

    let login = login?;
    match &raw.allowlisted_actors {
        None => allowlist.push(login.clone()),
        Some(actors) if !actors.value.is_empty() && !allowlist.contains(&login) => {
            // A deliberate choice is possible (an organisation as owner, a hand-over), so
            // this warns rather than refuses: docs/decisions/0038.
            sink.warning(
                codes::OWNER_NOT_ALLOWLISTED,
                "allowlisted_actors",
                &actors.referenced,
                format!(
                    "allowlisted_actors does not list the owner `{login}`, so the owner's labels, votes and pushes are not trusted; add `{login}` to the list, or remove the key to trust only the owner"
                ),
            );
        }
        Some(_) => {}
    }
    Some(Owner {
        login,
        allowlist,
        display_name: raw.display_name.map(|name| name.value),
    })
}
