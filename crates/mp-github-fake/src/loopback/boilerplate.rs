//! The fields GitHub sends with every object that the world has no value for: URL families,
//! counters, empty lists, `null` for what the world never has (milestones, assignees), and
//! fixed plausible times for objects the world has no clock for (repositories, Apps).
//!
//! GitHub's REST description marks them required, so clients may read any of them; the
//! loopback conformance test (decisions/0029) checks each answer against it. `render`
//! builds the fields that carry the world's values and adds these with [`add_missing`].

use mp_core::ids::RepoName;
use serde_json::{Value, json};

/// The creation time given to repositories and Apps: the world has none.
pub(super) const CREATED_AT: &str = "2020-01-01T00:00:00Z";

/// Adds each field of `extra` that `value` does not have; `value`'s own fields win.
pub(super) fn add_missing(value: &mut Value, extra: Value) {
    if let (Value::Object(map), Value::Object(extra)) = (value, extra) {
        for (key, field) in extra {
            map.entry(key).or_insert(field);
        }
    }
}

/// `text` percent-encoded for a URL path, keeping `/` (a login like `app[bot]` or a path
/// with spaces is not a valid URI as it is).
pub(super) fn url_path(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The API URL of the user `login`.
pub(super) fn user_url(base: &str, login: &str) -> String {
    format!("{base}/users/{}", url_path(login))
}

/// The web page of `login`: an App's page for a bot account, as GitHub links it.
pub(super) fn user_html_url(login: &str) -> String {
    match login.strip_suffix("[bot]") {
        Some(slug) => format!("https://github.com/apps/{}", url_path(slug)),
        None => format!("https://github.com/{}", url_path(login)),
    }
}

/// The rest of a simple user (`id` is the user's id, for the avatar).
pub(super) fn user(base: &str, login: &str, id: u64) -> Value {
    let at = user_url(base, login);
    json!({
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{id}?v=4"),
        "gravatar_id": "",
        "followers_url": format!("{at}/followers"),
        "following_url": format!("{at}/following{{/other_user}}"),
        "gists_url": format!("{at}/gists{{/gist_id}}"),
        "starred_url": format!("{at}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{at}/subscriptions"),
        "organizations_url": format!("{at}/orgs"),
        "repos_url": format!("{at}/repos"),
        "events_url": format!("{at}/events{{/privacy}}"),
        "received_events_url": format!("{at}/received_events"),
    })
}

/// What `GET /user` adds to a simple user for the token's owner (GitHub's private user).
pub(super) fn private_user(login: &str) -> Value {
    json!({
        "name": login,
        "company": Value::Null,
        "blog": "",
        "location": Value::Null,
        "email": Value::Null,
        "hireable": Value::Null,
        "bio": Value::Null,
        "public_repos": 0,
        "public_gists": 0,
        "followers": 0,
        "following": 0,
        "created_at": CREATED_AT,
        "updated_at": CREATED_AT,
        "private_gists": 0,
        "total_private_repos": 0,
        "owned_private_repos": 0,
        "disk_usage": 0,
        "collaborators": 0,
        "two_factor_authentication": true,
    })
}

/// A repository's URL templates under its API URL, as GitHub lists them.
const REPOSITORY_URLS: &[(&str, &str)] = &[
    ("archive_url", "/{archive_format}{/ref}"),
    ("assignees_url", "/assignees{/user}"),
    ("blobs_url", "/git/blobs{/sha}"),
    ("branches_url", "/branches{/branch}"),
    ("collaborators_url", "/collaborators{/collaborator}"),
    ("comments_url", "/comments{/number}"),
    ("commits_url", "/commits{/sha}"),
    ("compare_url", "/compare/{base}...{head}"),
    ("contents_url", "/contents/{+path}"),
    ("contributors_url", "/contributors"),
    ("deployments_url", "/deployments"),
    ("downloads_url", "/downloads"),
    ("events_url", "/events"),
    ("forks_url", "/forks"),
    ("git_commits_url", "/git/commits{/sha}"),
    ("git_refs_url", "/git/refs{/sha}"),
    ("git_tags_url", "/git/tags{/sha}"),
    ("hooks_url", "/hooks"),
    ("issue_comment_url", "/issues/comments{/number}"),
    ("issue_events_url", "/issues/events{/number}"),
    ("issues_url", "/issues{/number}"),
    ("keys_url", "/keys{/key_id}"),
    ("labels_url", "/labels{/name}"),
    ("languages_url", "/languages"),
    ("merges_url", "/merges"),
    ("milestones_url", "/milestones{/number}"),
    (
        "notifications_url",
        "/notifications{?since,all,participating}",
    ),
    ("pulls_url", "/pulls{/number}"),
    ("releases_url", "/releases{/id}"),
    ("stargazers_url", "/stargazers"),
    ("statuses_url", "/statuses/{sha}"),
    ("subscribers_url", "/subscribers"),
    ("subscription_url", "/subscription"),
    ("tags_url", "/tags"),
    ("teams_url", "/teams"),
    ("trees_url", "/git/trees{/sha}"),
];

/// The rest of a repository (the fields `GET /repos/{o}/{r}` adds included).
pub(super) fn repository(base: &str, repo: &RepoName) -> Value {
    let api = format!("{base}/repos/{repo}");
    let web = format!("https://github.com/{repo}");
    let mut value = json!({
        "description": Value::Null,
        "fork": false,
        "homepage": Value::Null,
        "language": Value::Null,
        "license": Value::Null,
        "mirror_url": Value::Null,
        "archived": false,
        "disabled": false,
        "visibility": "public",
        "forks": 0,
        "forks_count": 0,
        "network_count": 0,
        "open_issues": 0,
        "open_issues_count": 0,
        "size": 0,
        "stargazers_count": 0,
        "subscribers_count": 0,
        "watchers": 0,
        "watchers_count": 0,
        "has_issues": true,
        "has_projects": false,
        "has_wiki": false,
        "has_pages": false,
        "has_downloads": false,
        "has_discussions": false,
        "created_at": CREATED_AT,
        "updated_at": CREATED_AT,
        "pushed_at": CREATED_AT,
        "git_url": format!("git://github.com/{repo}.git"),
        "ssh_url": format!("git@github.com:{repo}.git"),
        "clone_url": format!("{web}.git"),
        "svn_url": web,
    });
    if let Value::Object(map) = &mut value {
        for (field, tail) in REPOSITORY_URLS {
            map.insert((*field).to_owned(), Value::String(format!("{api}{tail}")));
        }
    }
    value
}

/// What a pull request has beside the world's values: its URL family and `_links`, and no
/// milestone, assignee, reviewer or auto-merge.
pub(super) fn pull(base: &str, repo: &RepoName, number: u64, head_sha: &str) -> Value {
    let api = format!("{base}/repos/{repo}");
    let web = format!("https://github.com/{repo}/pull/{number}");
    let link = |href: String| json!({ "href": href });
    json!({
        "diff_url": format!("{web}.diff"),
        "patch_url": format!("{web}.patch"),
        "commits_url": format!("{api}/pulls/{number}/commits"),
        "review_comments_url": format!("{api}/pulls/{number}/comments"),
        "review_comment_url": format!("{api}/pulls/comments{{/number}}"),
        "comments_url": format!("{api}/issues/{number}/comments"),
        "statuses_url": format!("{api}/statuses/{head_sha}"),
        "milestone": Value::Null,
        "assignee": Value::Null,
        "assignees": [],
        "requested_reviewers": [],
        "requested_teams": [],
        "active_lock_reason": Value::Null,
        "auto_merge": Value::Null,
        "_links": {
            "self": link(format!("{api}/pulls/{number}")),
            "html": link(web),
            "issue": link(format!("{api}/issues/{number}")),
            "comments": link(format!("{api}/issues/{number}/comments")),
            "review_comments": link(format!("{api}/pulls/{number}/comments")),
            "review_comment": link(format!("{api}/pulls/comments{{/number}}")),
            "commits": link(format!("{api}/pulls/{number}/commits")),
            "statuses": link(format!("{api}/statuses/{head_sha}")),
        },
    })
}

/// What `GET /pulls/{n}` adds beside the world's values.
pub(super) fn full_pull() -> Value {
    json!({ "maintainer_can_modify": false, "rebaseable": Value::Null })
}

/// What an issue has beside the world's values.
pub(super) fn issue(base: &str, repo: &RepoName, number: u64) -> Value {
    let api = format!("{base}/repos/{repo}");
    json!({
        "repository_url": api,
        "labels_url": format!("{api}/issues/{number}/labels{{/name}}"),
        "comments_url": format!("{api}/issues/{number}/comments"),
        "events_url": format!("{api}/issues/{number}/events"),
        "milestone": Value::Null,
        "assignee": Value::Null,
        "assignees": [],
        "active_lock_reason": Value::Null,
    })
}

/// A commit's comment URL and its git commit's URL (`commit.url`).
pub(super) fn commit(base: &str, repo: &RepoName, sha: &str) -> (String, String) {
    let api = format!("{base}/repos/{repo}");
    (
        format!("{api}/commits/{sha}/comments"),
        format!("{api}/git/commits/{sha}"),
    )
}

/// The web and raw URLs of a pull request's file at its head.
pub(super) fn pull_file(repo: &RepoName, head_sha: &str, path: &str) -> Value {
    let path = url_path(path);
    json!({
        "blob_url": format!("https://github.com/{repo}/blob/{head_sha}/{path}"),
        "raw_url": format!("https://github.com/{repo}/raw/{head_sha}/{path}"),
    })
}

/// A GitHub App as GitHub shows it (`GET /app`, a check run's `app`); `owner` is its
/// owner's user object.
pub(super) fn app(slug: &str, id: u64, owner: Value) -> Value {
    json!({
        "id": id,
        "slug": slug,
        "node_id": format!("A_loopback{id}"),
        "name": slug,
        "owner": owner,
        "description": Value::Null,
        "external_url": format!("https://github.com/apps/{}", url_path(slug)),
        "html_url": format!("https://github.com/apps/{}", url_path(slug)),
        "created_at": CREATED_AT,
        "updated_at": CREATED_AT,
        "permissions": {},
        "events": [],
    })
}

/// What a check run has beside the world's values: its pages and its suite (`suite` is
/// the suite's id).
pub(super) fn check_run(repo: &RepoName, id: u64, suite: u64) -> Value {
    let page = format!("https://github.com/{repo}/runs/{id}");
    json!({
        "html_url": page,
        "details_url": page,
        "external_id": "",
        "check_suite": { "id": suite },
        "pull_requests": [],
    })
}

/// The fields of a labeled or unlabeled timeline event beside the world's values.
pub(super) fn label_event() -> Value {
    json!({ "commit_url": Value::Null, "performed_via_github_app": Value::Null })
}

/// The links of a file of `GET /contents/{path}` at `git_ref`.
pub(super) fn content_file(
    base: &str,
    repo: &RepoName,
    path: &str,
    git_ref: &str,
    blob_sha: &str,
) -> Value {
    content_links(base, repo, (path, git_ref), ("blobs", "blob", blob_sha))
}

/// The links of a directory of `GET /contents/{path}` at `git_ref`; `tree_sha` is its tree.
pub(super) fn content_dir(
    base: &str,
    repo: &RepoName,
    path: &str,
    git_ref: &str,
    tree_sha: &str,
) -> Value {
    content_links(base, repo, (path, git_ref), ("trees", "tree", tree_sha))
}

/// The links of a contents entry: its git object (`git/{objects}/{sha}`) and web page
/// (`{page}/{ref}/{path}`); only a file (a blob) can be downloaded.
fn content_links(
    base: &str,
    repo: &RepoName,
    (path, git_ref): (&str, &str),
    (objects, page, sha): (&str, &str, &str),
) -> Value {
    let path = url_path(path);
    let git_ref = url_path(git_ref);
    let url = format!("{base}/repos/{repo}/contents/{path}?ref={git_ref}");
    let git = format!("{base}/repos/{repo}/git/{objects}/{sha}");
    let html = format!("https://github.com/{repo}/{page}/{git_ref}/{path}");
    let download = (objects == "blobs")
        .then(|| format!("https://raw.githubusercontent.com/{repo}/{git_ref}/{path}"));
    json!({
        "url": url,
        "git_url": git,
        "html_url": html,
        "download_url": download,
        "_links": { "self": url, "git": git, "html": html },
    })
}

/// The branch protection of an unprotected branch.
pub(super) fn no_protection(base: &str, repo: &RepoName, branch: &str) -> Value {
    json!({
        "protection": {
            "enabled": false,
            "required_status_checks": {
                "enforcement_level": "off",
                "contexts": [],
                "checks": [],
            },
        },
        "protection_url": format!(
            "{base}/repos/{repo}/branches/{}/protection",
            url_path(branch)
        ),
    })
}

/// An installation of the App on every repository of `account`.
pub(super) fn installation(
    base: &str,
    id: u64,
    app_id: u64,
    app_slug: &str,
    account: Value,
) -> Value {
    let target = account.get("id").cloned().unwrap_or(Value::from(1));
    let login = account
        .get("login")
        .and_then(Value::as_str)
        .unwrap_or("loopback")
        .to_owned();
    json!({
        "id": id,
        "app_id": app_id,
        "app_slug": app_slug,
        "target_id": target,
        "target_type": "Organization",
        "account": account,
        "single_file_name": Value::Null,
        "repository_selection": "all",
        "access_tokens_url": format!("{base}/app/installations/{id}/access_tokens"),
        "repositories_url": format!("{base}/installation/repositories"),
        "html_url": format!("https://github.com/organizations/{}/settings/installations/{id}", url_path(&login)),
        "events": [],
        "permissions": {},
        "created_at": CREATED_AT,
        "updated_at": CREATED_AT,
        "suspended_by": Value::Null,
        "suspended_at": Value::Null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logins_of_bots_are_encoded_and_link_to_the_app() {
        assert_eq!(
            user_url("http://x", "mp[bot]"),
            "http://x/users/mp%5Bbot%5D"
        );
        assert_eq!(user_html_url("mp[bot]"), "https://github.com/apps/mp");
        assert_eq!(user_html_url("alice"), "https://github.com/alice");
        assert_eq!(url_path("docs/a b.md"), "docs/a%20b.md");
    }

    #[test]
    fn the_world_s_fields_win() {
        let mut value = json!({ "a": 1 });
        add_missing(&mut value, json!({ "a": 2, "b": 3 }));
        assert_eq!(value, json!({ "a": 1, "b": 3 }));
    }
}
