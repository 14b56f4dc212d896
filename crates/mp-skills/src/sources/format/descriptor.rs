//! Source descriptors: an entry as written (every field with its markdown line), checked
//! completely into a [`Descriptor`], or refused with every problem; the reference form of
//! a trust-list entry and its merge with the curated descriptor; and the rule that an id
//! used twice in one file rejects both entries.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::diagnostics::{FileProblem, codes};
use super::markdown::Item;
use super::yaml::parse_yaml;
use crate::sources::model::{Anchor, Method, Pin, Refusal, SourceId, check_skill_name};

/// The two roots inside a source's tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeLayout {
    /// Where skill directories sit (default `skills`).
    pub skills_root: PathBuf,
    /// Where eval directories sit, one per skill name (default `evals`).
    pub evals_root: PathBuf,
}

impl Default for TreeLayout {
    fn default() -> Self {
        Self {
            skills_root: PathBuf::from("skills"),
            evals_root: PathBuf::from("evals"),
        }
    }
}

/// One `provides` item.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Provide {
    /// `skill: <name>`: the directory `<skills_root>/<name>/`.
    Skill(String),
    /// `family: <prefix>-*`, holding the prefix with its hyphen (`acme-audit-`).
    Family(String),
}

impl Provide {
    /// Whether a skill directory named `name` belongs to this item.
    pub fn matches(&self, name: &str) -> bool {
        match self {
            Self::Skill(skill) => skill == name,
            Self::Family(prefix) => name.len() > prefix.len() && name.starts_with(prefix.as_str()),
        }
    }
}

impl fmt::Display for Provide {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Skill(name) => write!(f, "skill: {name}"),
            Self::Family(prefix) => write!(f, "family: {prefix}*"),
        }
    }
}

/// A complete, validated source descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descriptor {
    /// Kebab-case id.
    pub id: SourceId,
    /// The owning organization.
    pub organization: String,
    /// Human-readable name.
    pub name: String,
    /// Who maintains it, if stated.
    pub maintainer: Option<String>,
    /// How it is fetched.
    pub method: Method,
    /// Repository or archive URL.
    pub url: String,
    /// Tag, branch or archive version.
    pub reference: String,
    /// `commit` (git-tag) or `sha512` (archive); `None` for git-branch.
    pub anchor: Option<Anchor>,
    /// Marked work in progress (always true for git-branch).
    pub wip: bool,
    /// Where skills and evals sit in the fetched tree.
    pub layout: TreeLayout,
    /// What the source provides (never empty).
    pub provides: Vec<Provide>,
    /// The file the descriptor was read from.
    pub file: PathBuf,
    /// The line of its `- id:` item.
    pub line: u64,
}

impl Descriptor {
    /// What must be committed to fetch this source.
    pub fn pin(&self) -> Pin {
        Pin {
            id: self.id.clone(),
            method: self.method,
            url: self.url.clone(),
            reference: self.reference.clone(),
            anchor: self.anchor.clone(),
        }
    }

    /// Whether a skill named `name` is provided (by `skill:` or a family).
    pub fn provides_skill(&self, name: &str) -> bool {
        self.provides.iter().any(|item| item.matches(name))
    }
}

/// An entry that was refused while parsing: its id when known and every problem found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedEntry {
    /// The id as written, when it could be read.
    pub source: Option<String>,
    /// The line of the entry's `- ` item.
    pub line: u64,
    /// Everything wrong with it (at least one).
    pub problems: Vec<FileProblem>,
}

impl RejectedEntry {
    /// The refusal reported for this entry: the first problem's code, every problem as
    /// reason.
    pub fn refusal(&self) -> Refusal {
        let first = self.problems.first();
        let position = first.map_or_else(String::new, FileProblem::position);
        Refusal {
            source: self
                .source
                .clone()
                .unwrap_or_else(|| format!("(entry at {position})")),
            code: first.map_or(codes::YAML_SYNTAX, |problem| problem.code),
            reason: self
                .problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
            fix: format!("correct the entry at {position}; the source is not fetched until then"),
        }
    }
}

/// A reference-form trust-list entry: an id curated by the adopter's organization, with
/// the adopter's own ref and anchor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceEntry {
    /// The curated source's id.
    pub id: SourceId,
    /// The line of the entry.
    pub line: u64,
    draft: Draft,
}

impl ReferenceEntry {
    /// Merges the curated descriptor's organization, name, maintainer, method, url, layout
    /// and provides with this entry's ref, anchor and `wip`, and validates the result. The
    /// curated anchor is never used: the adopter's committed pin wins.
    pub fn merge(&self, curated: &Descriptor) -> Result<Descriptor, Vec<FileProblem>> {
        let line = self.line;
        let at = |value: String| Some(Located { value, line });
        let mut draft = self.draft.clone();
        draft.organization = at(curated.organization.clone());
        draft.name = at(curated.name.clone());
        draft.maintainer = curated.maintainer.clone().and_then(at);
        draft.method = at(curated.method.as_str().to_owned());
        draft.url = at(curated.url.clone());
        draft.skills_root = at(curated.layout.skills_root.display().to_string());
        draft.evals_root = at(curated.layout.evals_root.display().to_string());
        draft.provides = Some(Located {
            value: curated
                .provides
                .iter()
                .map(|item| DraftProvide {
                    line,
                    skill: match item {
                        Provide::Skill(name) => Some(Located {
                            value: name.clone(),
                            line,
                        }),
                        Provide::Family(_) => None,
                    },
                    family: match item {
                        Provide::Family(prefix) => Some(Located {
                            value: format!("{prefix}*"),
                            line,
                        }),
                        Provide::Skill(_) => None,
                    },
                })
                .collect(),
            line,
        });
        validate(&draft)
    }
}

pub(super) type Parsed<T> = (u64, Option<String>, Result<T, Vec<FileProblem>>);

/// Splits parse outcomes into accepted values and rejected entries; every entry whose id
/// appears more than once in the file is rejected, so neither claimant is used.
pub(super) fn split_duplicates<T>(
    file: &Path,
    parsed: Vec<Parsed<T>>,
    id_of: impl Fn(&T) -> &str,
) -> (Vec<T>, Vec<RejectedEntry>) {
    let mut lines_by_id: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (line, hint, outcome) in &parsed {
        let id = match outcome {
            Ok(value) => Some(id_of(value).to_owned()),
            Err(_) => hint.clone(),
        };
        if let Some(id) = id {
            lines_by_id.entry(id).or_default().push(*line);
        }
    }
    let mut accepted = Vec::new();
    let mut rejected = Vec::new();
    for (line, hint, outcome) in parsed {
        let id = match &outcome {
            Ok(value) => Some(id_of(value).to_owned()),
            Err(_) => hint,
        };
        let others: Vec<u64> = id
            .as_ref()
            .and_then(|id| lines_by_id.get(id))
            .map(|lines| lines.iter().copied().filter(|l| *l != line).collect())
            .unwrap_or_default();
        let mut problems = match outcome {
            Ok(value) if others.is_empty() => {
                accepted.push(value);
                continue;
            }
            Ok(_) => Vec::new(),
            Err(problems) => problems,
        };
        if !others.is_empty() {
            let listed = others
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            problems.insert(
                0,
                FileProblem::new(
                    file,
                    Some(line),
                    codes::DUPLICATE_ID,
                    format!(
                        "id `{}` is also used at line {listed}; neither entry is used",
                        id.as_deref().unwrap_or_default()
                    ),
                )
                .with_source(id.as_deref())
                .with_field("id"),
            );
        }
        rejected.push(RejectedEntry {
            source: id,
            line,
            problems,
        });
    }
    (accepted, rejected)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDescriptor {
    id: Spanned<String>,
    organization: Option<Spanned<String>>,
    name: Option<Spanned<String>>,
    maintainer: Option<Spanned<String>>,
    method: Option<Spanned<String>>,
    url: Option<Spanned<String>>,
    #[serde(rename = "ref")]
    reference: Option<Spanned<String>>,
    commit: Option<Spanned<String>>,
    sha512: Option<Spanned<String>>,
    wip: Option<Spanned<bool>>,
    layout: Option<Spanned<RawLayout>>,
    provides: Option<Spanned<Vec<RawProvide>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLayout {
    skills_root: Option<Spanned<String>>,
    evals_root: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProvide {
    skill: Option<Spanned<String>>,
    family: Option<Spanned<String>>,
}

/// A value and the markdown line it was written on.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Located<T> {
    value: T,
    line: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct DraftProvide {
    line: u64,
    skill: Option<Located<String>>,
    family: Option<Located<String>>,
}

/// An entry as written, every field with its line, before validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Draft {
    file: PathBuf,
    line: u64,
    id: Located<String>,
    organization: Option<Located<String>>,
    name: Option<Located<String>>,
    maintainer: Option<Located<String>>,
    method: Option<Located<String>>,
    url: Option<Located<String>>,
    reference: Option<Located<String>>,
    commit: Option<Located<String>>,
    sha512: Option<Located<String>>,
    wip: Option<Located<bool>>,
    layout_line: Option<u64>,
    skills_root: Option<Located<String>>,
    evals_root: Option<Located<String>>,
    provides: Option<Located<Vec<DraftProvide>>>,
}

impl Draft {
    /// Only `id`, `ref`, an anchor and `wip`: a reference to a curated descriptor.
    pub(super) fn is_reference(&self) -> bool {
        self.organization.is_none()
            && self.name.is_none()
            && self.maintainer.is_none()
            && self.method.is_none()
            && self.url.is_none()
            && self.layout_line.is_none()
            && self.provides.is_none()
    }

    /// The line of `organization:`, or of the entry when it is absent.
    pub(super) fn organization_line(&self) -> u64 {
        self.organization.as_ref().map_or(self.line, |o| o.line)
    }
}

pub(super) fn read_draft(file: &Path, item: &Item) -> Result<Draft, Vec<FileProblem>> {
    let mut raw: Vec<RawDescriptor> =
        parse_yaml(file, item.line, &item.text, item.id_hint.as_deref())?;
    let Some(raw) = raw.pop() else {
        return Err(vec![FileProblem::new(
            file,
            Some(item.line),
            codes::FENCE_NOT_LIST,
            "an empty list item".to_owned(),
        )]);
    };
    let first = item.line;
    let at = |line: u64| first + line.max(1) - 1;
    let located = |s: Option<Spanned<String>>| {
        s.map(|s| Located {
            line: at(s.referenced.line()),
            value: s.value,
        })
    };
    let (layout_line, skills_root, evals_root) = match raw.layout {
        Some(layout) => (
            Some(at(layout.referenced.line())),
            located(layout.value.skills_root),
            located(layout.value.evals_root),
        ),
        None => (None, None, None),
    };
    let provides = raw.provides.map(|list| {
        let line = at(list.referenced.line());
        Located {
            value: list
                .value
                .into_iter()
                .map(|item| {
                    let skill = located(item.skill);
                    let family = located(item.family);
                    let item_line = skill.as_ref().or(family.as_ref()).map_or(line, |l| l.line);
                    DraftProvide {
                        line: item_line,
                        skill,
                        family,
                    }
                })
                .collect(),
            line,
        }
    });
    Ok(Draft {
        file: file.to_path_buf(),
        line: first,
        id: Located {
            line: at(raw.id.referenced.line()),
            value: raw.id.value,
        },
        organization: located(raw.organization),
        name: located(raw.name),
        maintainer: located(raw.maintainer),
        method: located(raw.method),
        url: located(raw.url),
        reference: located(raw.reference),
        commit: located(raw.commit),
        sha512: located(raw.sha512),
        wip: raw.wip.map(|w| Located {
            line: at(w.referenced.line()),
            value: w.value,
        }),
        layout_line,
        skills_root,
        evals_root,
        provides,
    })
}

/// Checks the fields a reference-form entry must carry on its own (`id`, `ref`); the
/// anchor is checked once it is merged with the curated method.
pub(super) fn reference_entry(draft: Draft) -> Result<ReferenceEntry, Vec<FileProblem>> {
    let mut problems = Vec::new();
    let id = SourceId::parse(&draft.id.value).map_err(|message| {
        FileProblem::new(&draft.file, Some(draft.id.line), codes::ID_INVALID, message)
            .with_source(Some(&draft.id.value))
            .with_field("id")
    });
    let id = match id {
        Ok(id) => Some(id),
        Err(problem) => {
            problems.push(problem);
            None
        }
    };
    let source = Some(draft.id.value.as_str());
    match &draft.reference {
        None => problems.push(
            FileProblem::new(
                &draft.file,
                Some(draft.line),
                codes::MISSING_FIELD,
                "missing required field `ref` (a reference-form entry is `id`, `ref` and the anchor)".to_owned(),
            )
            .with_source(source)
            .with_field("ref"),
        ),
        Some(reference) => {
            if let Err(mut p) = check_token(&draft.file, reference, source, "ref", codes::REF_INVALID)
            {
                problems.append(&mut p);
            }
        }
    }
    match id {
        Some(id) if problems.is_empty() => Ok(ReferenceEntry {
            id,
            line: draft.line,
            draft,
        }),
        _ => Err(problems),
    }
}

/// Checks a single path segment (an organization name or a `provides` value).
pub(super) fn check_segment(value: &str) -> Result<(), &'static str> {
    if value.is_empty() {
        Err("is empty")
    } else if value.contains(['/', '\\']) || value.chars().any(char::is_whitespace) {
        Err("must be a single path segment without whitespace")
    } else if value.starts_with('.') {
        Err("must not start with `.`")
    } else {
        Ok(())
    }
}

fn is_kebab(value: &str) -> bool {
    SourceId::parse(value).is_ok()
}

/// A url or ref: non-empty, no whitespace or control characters, no leading `-` (which a
/// command line would read as an option).
fn check_token(
    file: &Path,
    value: &Located<String>,
    source: Option<&str>,
    field: &str,
    code: &'static str,
) -> Result<(), Vec<FileProblem>> {
    let text = &value.value;
    let why = if text.is_empty() {
        Some("is empty")
    } else if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        Some("holds whitespace or control characters")
    } else if text.starts_with('-') {
        Some("starts with `-`")
    } else {
        None
    };
    match why {
        Some(why) => Err(vec![
            FileProblem::new(
                file,
                Some(value.line),
                code,
                format!("{field} `{text}` {why}"),
            )
            .with_source(source)
            .with_field(field),
        ]),
        None => Ok(()),
    }
}

/// A layout root: relative, plain segments only.
pub(super) fn check_relative(path: &str) -> Result<PathBuf, String> {
    if path.is_empty() {
        return Err("is empty".to_owned());
    }
    if path.contains('\\') {
        return Err("holds a backslash".to_owned());
    }
    if path.starts_with('/') {
        return Err("is absolute".to_owned());
    }
    if path
        .split('/')
        .any(|segment| segment.is_empty() || segment == ".")
    {
        return Err("holds an empty or `.` segment".to_owned());
    }
    let candidate = PathBuf::from(path);
    for component in candidate.components() {
        match component {
            Component::Normal(_) => {}
            Component::ParentDir => return Err("holds `..`".to_owned()),
            Component::CurDir => return Err("holds `.`".to_owned()),
            Component::RootDir | Component::Prefix(_) => return Err("is absolute".to_owned()),
        }
    }
    Ok(candidate)
}

fn is_lower_hex(value: &str) -> bool {
    value
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Checks a draft completely and builds the descriptor; every problem is reported.
pub(super) fn validate(draft: &Draft) -> Result<Descriptor, Vec<FileProblem>> {
    let file = draft.file.as_path();
    let source = Some(draft.id.value.as_str());
    let mut problems = Vec::new();
    let problem = |line: u64, code: &'static str, field: &str, message: String| {
        FileProblem::new(file, Some(line), code, message)
            .with_source(source)
            .with_field(field)
    };
    let missing = |field: &str| {
        problem(
            draft.line,
            codes::MISSING_FIELD,
            field,
            format!("missing required field `{field}`"),
        )
    };

    let id = SourceId::parse(&draft.id.value)
        .map_err(|message| problems.push(problem(draft.id.line, codes::ID_INVALID, "id", message)))
        .ok();

    let organization = match &draft.organization {
        None => {
            problems.push(missing("organization"));
            None
        }
        Some(org) => match check_segment(&org.value) {
            Ok(()) => Some(org.value.clone()),
            Err(why) => {
                problems.push(problem(
                    org.line,
                    codes::ORGANIZATION_INVALID,
                    "organization",
                    format!("organization `{}` {why}", org.value),
                ));
                None
            }
        },
    };

    let mut text_field = |value: &Option<Located<String>>, field: &str, required: bool| match value
    {
        None => {
            if required {
                problems.push(missing(field));
            }
            None
        }
        Some(v) if v.value.trim().is_empty() => {
            problems.push(problem(
                v.line,
                codes::TEXT_EMPTY,
                field,
                format!("`{field}` is empty"),
            ));
            None
        }
        Some(v) => Some(v.value.clone()),
    };
    let name = text_field(&draft.name, "name", true);
    let maintainer = text_field(&draft.maintainer, "maintainer", false);

    let method = match &draft.method {
        None => {
            problems.push(missing("method"));
            None
        }
        Some(m) => {
            let parsed = Method::parse(&m.value);
            if parsed.is_none() {
                problems.push(problem(
                    m.line,
                    codes::METHOD_INVALID,
                    "method",
                    format!(
                        "method `{}` is not one of `git-tag`, `git-branch`, `archive`",
                        m.value
                    ),
                ));
            }
            parsed
        }
    };

    let mut token = |value: &Option<Located<String>>, field: &str, code: &'static str| match value {
        None => {
            problems.push(missing(field));
            None
        }
        Some(v) => match check_token(file, v, source, field, code) {
            Ok(()) => Some(v.value.clone()),
            Err(mut p) => {
                problems.append(&mut p);
                None
            }
        },
    };
    let url = token(&draft.url, "url", codes::URL_INVALID);
    let reference = token(&draft.reference, "ref", codes::REF_INVALID);

    let wip = draft.wip.as_ref().is_some_and(|w| w.value);
    let anchor = check_anchor(draft, method, wip, &mut problems);

    let mut root = |value: &Option<Located<String>>, field: &str, default: &str| match value {
        None => Some(PathBuf::from(default)),
        Some(v) => match check_relative(&v.value) {
            Ok(path) => Some(path),
            Err(why) => {
                problems.push(problem(
                    v.line,
                    codes::LAYOUT_INVALID,
                    field,
                    format!(
                        "{field} `{}` {why}; it must be a relative path inside the source",
                        v.value
                    ),
                ));
                None
            }
        },
    };
    let defaults = TreeLayout::default();
    let skills_root = root(
        &draft.skills_root,
        "layout.skills_root",
        &defaults.skills_root.display().to_string(),
    );
    let evals_root = root(
        &draft.evals_root,
        "layout.evals_root",
        &defaults.evals_root.display().to_string(),
    );

    let provides = check_provides(draft, &mut problems);

    match (
        id,
        organization,
        name,
        method,
        url,
        reference,
        skills_root,
        evals_root,
        provides,
    ) {
        (
            Some(id),
            Some(organization),
            Some(name),
            Some(method),
            Some(url),
            Some(reference),
            Some(skills_root),
            Some(evals_root),
            Some(provides),
        ) if problems.is_empty() => Ok(Descriptor {
            id,
            organization,
            name,
            maintainer,
            method,
            url,
            reference,
            anchor,
            wip,
            layout: TreeLayout {
                skills_root,
                evals_root,
            },
            provides,
            file: draft.file.clone(),
            line: draft.line,
        }),
        _ => Err(problems),
    }
}

/// The anchor the method requires, checked for kind and format.
fn check_anchor(
    draft: &Draft,
    method: Option<Method>,
    wip: bool,
    problems: &mut Vec<FileProblem>,
) -> Option<Anchor> {
    let file = draft.file.as_path();
    let source = Some(draft.id.value.as_str());
    let problem = |line: u64, code: &'static str, field: &str, message: String| {
        FileProblem::new(file, Some(line), code, message)
            .with_source(source)
            .with_field(field)
    };
    let method = method?;
    match method {
        Method::GitBranch => {
            for (value, key) in [(&draft.commit, "commit"), (&draft.sha512, "sha512")] {
                if let Some(v) = value {
                    problems.push(problem(
                        v.line,
                        codes::BRANCH_ANCHORED,
                        key,
                        format!(
                            "a git-branch source tracks the branch tip and takes no `{key}` anchor"
                        ),
                    ));
                }
            }
            if !wip {
                let line = draft.wip.as_ref().map_or(draft.line, |w| w.line);
                problems.push(problem(
                    line,
                    codes::BRANCH_NOT_WIP,
                    "wip",
                    "a git-branch source is unanchored and must be marked `wip: true`".to_owned(),
                ));
            }
            None
        }
        Method::GitTag | Method::Archive => {
            let (wanted, wrong, wanted_key, wrong_key) = if method == Method::GitTag {
                (&draft.commit, &draft.sha512, "commit", "sha512")
            } else {
                (&draft.sha512, &draft.commit, "sha512", "commit")
            };
            if let Some(v) = wrong {
                problems.push(problem(
                    v.line,
                    codes::ANCHOR_WRONG_KIND,
                    wrong_key,
                    format!("a {method} source is anchored by `{wanted_key}`, not `{wrong_key}`"),
                ));
            }
            let Some(v) = wanted else {
                problems.push(problem(
                    draft.line,
                    codes::ANCHOR_MISSING,
                    wanted_key,
                    format!("a {method} source needs its `{wanted_key}` anchor"),
                ));
                return None;
            };
            let lengths: &[usize] = if method == Method::GitTag {
                &[40, 64]
            } else {
                &[128]
            };
            if !lengths.contains(&v.value.len()) || !is_lower_hex(&v.value) {
                let expected = if method == Method::GitTag {
                    "40 or 64 lowercase hex digits"
                } else {
                    "128 lowercase hex digits"
                };
                problems.push(problem(
                    v.line,
                    codes::ANCHOR_MALFORMED,
                    wanted_key,
                    format!("{wanted_key} `{}` is not {expected}", v.value),
                ));
                return None;
            }
            Some(if method == Method::GitTag {
                Anchor::Commit(v.value.clone())
            } else {
                Anchor::Sha512(v.value.clone())
            })
        }
    }
}

fn check_provides(draft: &Draft, problems: &mut Vec<FileProblem>) -> Option<Vec<Provide>> {
    let file = draft.file.as_path();
    let source = Some(draft.id.value.as_str());
    let problem = |line: u64, code: &'static str, message: String| {
        FileProblem::new(file, Some(line), code, message)
            .with_source(source)
            .with_field("provides")
    };
    let Some(list) = &draft.provides else {
        problems.push(problem(
            draft.line,
            codes::MISSING_FIELD,
            "missing required field `provides`".to_owned(),
        ));
        return None;
    };
    if list.value.is_empty() {
        problems.push(problem(
            list.line,
            codes::PROVIDES_EMPTY,
            "`provides` is empty; list at least one `skill:` or `family:`".to_owned(),
        ));
        return None;
    }
    let before = problems.len();
    let mut items: Vec<Provide> = Vec::new();
    for item in &list.value {
        let parsed = match (&item.skill, &item.family) {
            (Some(skill), None) => match check_skill_name(&skill.value) {
                Ok(()) => Some(Provide::Skill(skill.value.clone())),
                Err(why) => {
                    problems.push(problem(
                        skill.line,
                        codes::PROVIDES_INVALID,
                        format!("{why} (a skill is one kebab-case directory name)"),
                    ));
                    None
                }
            },
            (None, Some(family)) => {
                let prefix = family.value.strip_suffix('*');
                match prefix {
                    Some(prefix)
                        if prefix.ends_with('-')
                            && is_kebab(prefix.trim_end_matches('-'))
                            && !prefix.ends_with("--") =>
                    {
                        Some(Provide::Family(prefix.to_owned()))
                    }
                    _ => {
                        problems.push(problem(
                            family.line,
                            codes::FAMILY_INVALID,
                            format!(
                                "family `{}` is not of the form `<kebab-prefix>-*`",
                                family.value
                            ),
                        ));
                        None
                    }
                }
            }
            _ => {
                problems.push(problem(
                    item.line,
                    codes::PROVIDES_INVALID,
                    "each `provides` item is exactly one of `skill: <name>` or `family: <prefix>-*`".to_owned(),
                ));
                None
            }
        };
        if let Some(parsed) = parsed {
            if items.contains(&parsed) {
                problems.push(problem(
                    item.line,
                    codes::PROVIDES_DUPLICATE,
                    format!("`{parsed}` is listed twice"),
                ));
            } else {
                items.push(parsed);
            }
        }
    }
    (problems.len() == before).then_some(items)
}
