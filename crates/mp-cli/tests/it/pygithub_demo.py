"""Reads and writes the demo world (fixtures/worlds/demo.yaml) through PyGithub, unmodified,
against `mp dev serve-world`, and checks that what it reads is the world.

Usage: python3 pygithub_demo.py BASE_URL   (PYTHONPATH must hold PyGithub)

Run by crates/mp-cli/tests/it/pygithub.rs; prints one `ok: ...` line per step and exits
non-zero with a traceback on the first mismatch.
"""

import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from github import Auth, Github, GithubIntegration
from github.GithubException import UnknownObjectException

BASE = sys.argv[1]
# Small pages, so every listing below follows GitHub's `Link` headers.
PER_PAGE = 2
OPTIONS = dict(
    base_url=BASE,
    per_page=PER_PAGE,
    seconds_between_requests=0,
    seconds_between_writes=0,
    retry=0,
)

BOT = "acme-merge-gate[bot]"
OPEN_PULLS = {
    1: ("Fix the install command in the README", "agent/readme-fix", ["README.md"]),
    2: ("Document the rate limiter in the guide", "agent/guide", ["docs/guide/rate-limiter.md"]),
    3: ("Speed up the config parser", "agent/parser", ["src/config/parser.rs"]),
    4: ("Add the 0.4 changelog entry", "agent/changelog", ["CHANGELOG.md"]),
    5: ("Tune the retry backoff", "agent/retry", ["lib/retry.py"]),
}


def ok(step):
    print(f"ok: {step}", flush=True)


def expect(actual, wanted, what):
    assert actual == wanted, f"{what}: got {actual!r}, wanted {wanted!r}"


gh = Github(auth=Auth.Token("ghp_pyclient"), **OPTIONS)

# The repository and its default branch.
repo = gh.get_repo("acme/webapp")
expect(repo.full_name, "acme/webapp", "full_name")
expect(repo.default_branch, "main", "default_branch")
expect(repo.owner.login, "acme", "owner")
ok("repository acme/webapp, default branch main")

# The open pull requests, over three pages.
pulls = list(repo.get_pulls(state="open", sort="created", direction="asc"))
expect([p.number for p in pulls], sorted(OPEN_PULLS), "open pull numbers")
for pull in pulls:
    title, head, _ = OPEN_PULLS[pull.number]
    expect(pull.title, title, f"title of #{pull.number}")
    expect(pull.head.ref, head, f"head of #{pull.number}")
    expect(pull.base.ref, "main", f"base of #{pull.number}")
    expect(pull.state, "open", f"state of #{pull.number}")
expect(repo.get_pulls(state="open").totalCount, len(OPEN_PULLS), "open pull count")
ok(f"{len(pulls)} open pull requests")

# One pull request: its files and commits, and its head branch.
pull = repo.get_pull(1)
expect([f.filename for f in pull.get_files()], OPEN_PULLS[1][2], "files of #1")
commits = list(pull.get_commits())
expect(len(commits), 1, "commits of #1")
expect(commits[0].sha, pull.head.sha, "the commit of #1 is its head")
assert commits[0].commit.message.startswith("Fix the install command in the README"), commits[0].commit.message
head_branch = repo.get_branch("agent/readme-fix")
expect(head_branch.commit.sha, pull.head.sha, "agent/readme-fix")
ok("pull request #1: files, commits, head branch")

# The default branch, and the same commit as a git ref.
main = repo.get_branch("main")
main_sha = main.commit.sha
assert main.commit.commit.message.startswith("Move the session store to the new driver"), main.commit.commit.message
expect(main.commit.parents[0].sha, "c0ffee0000000000000000000000000000000002", "parent of main")
ref = repo.get_git_ref("heads/main")
expect(ref.ref, "refs/heads/main", "ref name")
expect(ref.object.type, "commit", "ref object type")
expect(ref.object.sha, main_sha, "refs/heads/main")
expect(repo.get_git_ref("heads/agent/readme-fix").object.sha, pull.head.sha, "a ref with a slash")
try:
    repo.get_git_ref("heads/no-such-branch").object
except UnknownObjectException:
    pass
else:
    raise AssertionError("a missing ref answered")
ok("branch main and refs/heads/main")

# Contents: a file, a directory, the root.
readme = repo.get_contents("README.md")
expect(readme.type, "file", "README.md type")
expect(readme.decoded_content, b"# webapp\n", "README.md")
policies = repo.get_contents("docs/policies")
expect([(e.type, e.path) for e in policies], [("file", "docs/policies/security.md")], "docs/policies")
expect(policies[0].decoded_content, b"# Security policy\n\nVersion 1.\n", "security.md")
root = repo.get_contents("")
expect(sorted((e.type, e.name) for e in root), [("dir", "docs"), ("file", "README.md")], "the root")
expect([e.sha for e in root if e.name == "README.md"], [readme.sha], "README.md's blob in the root")
docs = repo.get_contents("docs", ref="main")
expect([(e.type, e.path) for e in docs], [("dir", "docs/policies")], "docs")
ok("contents of a file, a directory and the root")

# Check runs of main's head: `test` failed there.
runs = list(repo.get_commit(main_sha).get_check_runs())
expect([(r.name, r.conclusion, r.app.slug) for r in runs], [("test", "failure", "github-actions")], "runs of main")
ok("check runs of main's head")

# Comments of #5: the bot's receipt.
comments = list(repo.get_pull(5).get_issue_comments())
expect([c.user.login for c in comments], [BOT], "commenters of #5")
assert "merge-gate-approved-head-sha: a5a5a5a5" in comments[0].body, comments[0].body
ok("comments of #5")

# As the App: its installations, an installation token, a comment and check runs.
key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
pem = key.private_bytes(
    serialization.Encoding.PEM,
    serialization.PrivateFormat.TraditionalOpenSSL,
    serialization.NoEncryption(),
).decode()
app_auth = Auth.AppAuth(1, pem)
integration = GithubIntegration(auth=app_auth, **OPTIONS)
expect(integration.get_app().slug, "acme-merge-gate", "the App")
installations = list(integration.get_installations())
expect([i.account.login for i in installations], ["acme"], "installations")
installation = integration.get_repo_installation("acme", "webapp")
expect(installation.id, installations[0].id, "the installation of acme/webapp")
ok("the App's installations")

as_app = Github(auth=app_auth.get_installation_auth(installation.id), **OPTIONS)
app_repo = as_app.get_repo("acme/webapp")
posted = app_repo.get_pull(1).create_issue_comment("Checked from PyGithub.")
expect(posted.user.login, BOT, "the comment's author")
comments = list(repo.get_pull(1).get_issue_comments())
expect([(c.id, c.body) for c in comments][-1], (posted.id, "Checked from PyGithub."), "the new comment")
ok("a comment as the App's installation")

# Two runs of `lint` by the App on main's head: `latest` keeps the second, `all` both.
app_repo.create_check_run(name="lint", head_sha=main_sha, status="completed", conclusion="failure")
app_repo.create_check_run(name="lint", head_sha=main_sha, status="completed", conclusion="success")
commit = repo.get_commit(main_sha)
latest = [(r.name, r.conclusion) for r in commit.get_check_runs()]
expect(latest, [("test", "failure"), ("lint", "success")], "latest runs")
every = [(r.name, r.conclusion) for r in commit.get_check_runs(filter="all")]
expect(every, [("test", "failure"), ("lint", "failure"), ("lint", "success")], "all runs")
expect(commit.get_check_runs(filter="all").totalCount, 3, "the count of all runs")
ok("check runs: filter=latest and filter=all")

print(f"PyGithub walked {BASE}", flush=True)
