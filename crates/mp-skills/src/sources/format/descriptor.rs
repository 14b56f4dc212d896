//! The markdown formats of trusted skill sources, parsed strictly: source descriptors
//! (YAML list items inside ```` ```yaml ```` fences), the adopter's trust list, an
//! org-curated list, the discovery registry (two tables) and pointer files
//! (`skills/<name>/source.md`). Parsing is pure: callers hand in the text.
//!
//! Unknown keys, duplicate keys, YAML 1.1 booleans and unquoted numbers are errors (the
//! strict options of `docs/decisions/0001-yaml-parser.md`). Every problem names the file,
//! the line in the markdown file, the source id when known, the field and a stable code.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use mp_core::config::yaml::strict_options;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_saphyr::{Error as YamlError, Spanned};

use crate::sources::model::{Anchor, Method, Pin, Refusal, SourceId, check_skill_name};

/// The stable codes of format problems. They never change meaning.
pub mod codes {
    /// The fence text is not well-formed YAML.
    pub const YAML_SYNTAX: &str = "source_yaml_syntax";
    /// A YAML feature the strict reader refuses (merge keys, tags, budgets).
    pub const UNSUPPORTED_YAML: &str = "source_unsupported_yaml";
    /// A mapping repeats a key.
    pub const DUPLICATE_KEY: &str = "source_duplicate_key";
    /// A key the format does not define.
    pub const UNKNOWN_FIELD: &str = "source_unknown_field";
    /// A required key is absent.
    pub const MISSING_FIELD: &str = "source_missing_field";
    /// A value of the wrong kind (a list for text, `yes` for a boolean, an unquoted number).
    pub const WRONG_TYPE: &str = "source_wrong_type";
    /// A required markdown section (`## Trusted sources`, `## Curated sources`) is absent.
    pub const SECTION_MISSING: &str = "source_section_missing";
    /// A ```` ```yaml ```` fence is never closed.
    pub const FENCE_UNCLOSED: &str = "source_fence_unclosed";
    /// A fence holds something other than a block list of `- id: ...` entries.
    pub const FENCE_NOT_LIST: &str = "source_fence_not_list";
    /// Frontmatter that is not closed, not a mapping, or absent where required.
    pub const FRONTMATTER_INVALID: &str = "source_frontmatter_invalid";
    /// The id is not kebab-case.
    pub const ID_INVALID: &str = "source_id_invalid";
    /// Two entries of one file share an id.
    pub const DUPLICATE_ID: &str = "source_duplicate_id";
    /// The organization is empty or not a single plain path segment.
    pub const ORGANIZATION_INVALID: &str = "source_organization_invalid";
    /// An org-curated descriptor names another organization than its file's.
    pub const ORGANIZATION_MISMATCH: &str = "source_organization_mismatch";
    /// An empty `name` or `maintainer`.
    pub const TEXT_EMPTY: &str = "source_text_empty";
    /// The method is not `git-tag`, `git-branch` or `archive`.
    pub const METHOD_INVALID: &str = "source_method_invalid";
    /// The url is empty, holds whitespace or starts with `-`.
    pub const URL_INVALID: &str = "source_url_invalid";
    /// The ref is empty, holds whitespace or starts with `-`.
    pub const REF_INVALID: &str = "source_ref_invalid";
    /// A git-tag source without `commit` or an archive source without `sha512`.
    pub const ANCHOR_MISSING: &str = "source_anchor_missing";
    /// An anchor key that does not belong to the method (e.g. `sha512` on git-tag, or both).
    pub const ANCHOR_WRONG_KIND: &str = "source_anchor_wrong_kind";
    /// A commit that is not 40 or 64 lowercase hex digits, or a sha512 not 128.
    pub const ANCHOR_MALFORMED: &str = "source_anchor_malformed";
    /// A git-branch source carries an anchor: a branch tip cannot be pinned.
    pub const BRANCH_ANCHORED: &str = "source_branch_anchored";
    /// A git-branch source not marked `wip: true`.
    pub const BRANCH_NOT_WIP: &str = "source_branch_not_wip";
    /// A layout root that is empty, absolute, or holds `.`/`..` segments.
    pub const LAYOUT_INVALID: &str = "source_layout_invalid";
    /// `provides` is an empty list.
    pub const PROVIDES_EMPTY: &str = "source_provides_empty";
    /// A `provides` item that is not exactly one `skill:` (a kebab-case name) or `family:`.
    pub const PROVIDES_INVALID: &str = "source_provides_invalid";
    /// A `family:` value not of the form `<kebab-prefix>-*`.
    pub const FAMILY_INVALID: &str = "source_family_invalid";
    /// The same `provides` item listed twice.
    pub const PROVIDES_DUPLICATE: &str = "source_provides_duplicate";
    /// A registry table whose header is not the expected one.
    pub const REGISTRY_TABLE_INVALID: &str = "source_registry_table_invalid";
    /// A registry row with the wrong number of cells or a bad source id.
    pub const REGISTRY_ROW_INVALID: &str = "source_registry_row_invalid";
    /// A pointer path (`skill_path`, `evals_path`) that is empty, absolute or holds `..`.
    pub const POINTER_PATH_INVALID: &str = "source_pointer_path_invalid";
}

/// One problem in one sources file.
///
/// `Display` renders one line, e.g.
/// ``skill-sources.md:14: source_anchor_malformed: source acme-skills: commit `ABC` is not 40 or 64 lowercase hex digits (field `commit`)``.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileProblem {
    /// The file as given to the parser.
    pub file: PathBuf,
    /// 1-based line in that (markdown) file, when known.
    pub line: Option<u64>,
    /// The source id as written, when known.
    pub source: Option<String>,
    /// The offending key, e.g. `layout.skills_root`, when known.
    pub field: Option<String>,
    /// Stable snake_case code (see [`codes`]).
    pub code: &'static str,
    /// What is wrong, naming the offending value.
    pub message: String,
}

impl FileProblem {
    pub(crate) fn new(file: &Path, line: Option<u64>, code: &'static str, message: String) -> Self {
        Self {
            file: file.to_path_buf(),
            line,
            source: None,
            field: None,
            code,
            message,
        }
    }

    /// `source_file_unreadable`: `file` exists but cannot be read.
    pub fn unreadable(file: &Path, err: &std::io::Error) -> Self {
        Self::new(
            file,
            None,
            crate::sources::trust::codes::FILE_UNREADABLE,
            format!("cannot read the file: {err}"),
        )
    }

    pub(crate) fn with_source(mut self, source: Option<&str>) -> Self {
        self.source = source.map(str::to_owned);
        self
    }

    pub(crate) fn with_field(mut self, field: &str) -> Self {
        if !field.is_empty() {
            self.field = Some(field.to_owned());
        }
        self
    }

    /// `file:line` (or just `file`).
    pub fn position(&self) -> String {
        match self.line {
            Some(line) => format!("{}:{line}", self.file.display()),
            None => self.file.display().to_string(),
        }
    }
}

impl fmt::Display for FileProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: ", self.position(), self.code)?;
        if let Some(source) = &self.source {
            write!(f, "source {source}: ")?;
        }
        f.write_str(&self.message)?;
        if let Some(field) = &self.field {
            write!(f, " (field `{field}`)")?;
        }
        Ok(())
    }
}

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

/// The descriptors of one org-curated file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DescriptorFile {
    /// The valid descriptors, in file order.
    pub descriptors: Vec<Descriptor>,
    /// The refused entries.
    pub rejected: Vec<RejectedEntry>,
}

impl DescriptorFile {
    /// The valid descriptor with `id`.
    pub fn get(&self, id: &SourceId) -> Option<&Descriptor> {
        self.descriptors.iter().find(|d| &d.id == id)
    }

    /// Whether some entry (valid or refused) carries `id`.
    pub fn mentions(&self, id: &SourceId) -> bool {
        self.get(id).is_some()
            || self
                .rejected
                .iter()
                .any(|r| r.source.as_deref() == Some(id.as_str()))
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

/// One trust-list entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustEntry {
    /// `id` + `ref` + anchor, looked up in the adopter's org-curated list.
    Reference(ReferenceEntry),
    /// A complete descriptor, used as it stands.
    Full(Descriptor),
}

impl TrustEntry {
    /// The entry's source id.
    pub fn id(&self) -> &SourceId {
        match self {
            Self::Reference(entry) => &entry.id,
            Self::Full(descriptor) => &descriptor.id,
        }
    }
}

/// The adopter's trust list, parsed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TrustList {
    /// The adopter's organization (frontmatter `organization:`), which reference-form
    /// entries are looked up in.
    pub organization: Option<String>,
    /// The well-formed entries, in file order.
    pub entries: Vec<TrustEntry>,
    /// The refused entries.
    pub rejected: Vec<RejectedEntry>,
}

/// The section of the trust list that holds entries.
pub const TRUSTED_SECTION: &str = "Trusted sources";
/// The section of an org-curated list that holds descriptors.
pub const CURATED_SECTION: &str = "Curated sources";

/// Parses the adopter's trust list. `Err` means the file as a whole cannot be trusted
/// (bad frontmatter, no `## Trusted sources` section, an unclosed fence, a fence that is
/// not a list); a bad entry is only rejected.
pub fn parse_trust_list(file: &Path, text: &str) -> Result<TrustList, Vec<FileProblem>> {
    let lines = split_lines(text);
    let (organization, body_start) = trust_frontmatter(file, &lines)?;
    let items = section_items(file, &lines, body_start, TRUSTED_SECTION)?;
    let mut list = TrustList {
        organization,
        ..TrustList::default()
    };
    let mut parsed = Vec::new();
    for item in items {
        let id_hint = item.id_hint.clone();
        let outcome = read_draft(file, &item).and_then(|draft| {
            if draft.is_reference() {
                reference_entry(draft).map(TrustEntry::Reference)
            } else {
                validate(&draft).map(TrustEntry::Full)
            }
        });
        parsed.push((item.line, id_hint, outcome));
    }
    let (entries, rejected) = split_duplicates(file, parsed, |entry| entry.id().as_str());
    list.entries = entries;
    list.rejected = rejected;
    Ok(list)
}

/// Parses `organizations/<org>/skill-sources.md`: full descriptors under
/// `## Curated sources`, each naming `org` as its organization.
pub fn parse_curated(
    file: &Path,
    org: &str,
    text: &str,
) -> Result<DescriptorFile, Vec<FileProblem>> {
    let lines = split_lines(text);
    let body_start = skip_frontmatter(file, &lines)?;
    let items = section_items(file, &lines, body_start, CURATED_SECTION)?;
    let mut parsed = Vec::new();
    for item in items {
        let id_hint = item.id_hint.clone();
        let outcome = read_draft(file, &item).and_then(|draft| {
            let descriptor = validate(&draft)?;
            if descriptor.organization == org {
                Ok(descriptor)
            } else {
                let line = draft.organization.as_ref().map_or(draft.line, |o| o.line);
                Err(vec![
                    FileProblem::new(
                        file,
                        Some(line),
                        codes::ORGANIZATION_MISMATCH,
                        format!(
                            "organization `{}` differs from the curating organization `{org}`",
                            descriptor.organization
                        ),
                    )
                    .with_source(Some(descriptor.id.as_str()))
                    .with_field("organization"),
                ])
            }
        });
        parsed.push((item.line, id_hint, outcome));
    }
    let (descriptors, rejected) = split_duplicates(file, parsed, |d| d.id.as_str());
    Ok(DescriptorFile {
        descriptors,
        rejected,
    })
}

type Parsed<T> = (u64, Option<String>, Result<T, Vec<FileProblem>>);

/// Splits parse outcomes into accepted values and rejected entries; every entry whose id
/// appears more than once in the file is rejected, so neither claimant is used.
fn split_duplicates<T>(
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

// ---------------------------------------------------------------------------------------
// Markdown scanning

/// The lines of `text` without line endings (`\r\n` included).
pub(crate) fn split_lines(text: &str) -> Vec<&str> {
    text.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect()
}

/// Frontmatter content lines (1-based number, text) and the index of the first body line.
pub(crate) type Frontmatter<'a> = Option<(Vec<(u64, &'a str)>, usize)>;

/// Frontmatter delimited by `---` lines starting at the first line: its content lines
/// (with 1-based numbers) and the index of the first body line. `None` when absent.
pub(crate) fn frontmatter<'a>(
    file: &Path,
    lines: &[&'a str],
) -> Result<Frontmatter<'a>, Vec<FileProblem>> {
    if lines.first().map(|l| l.trim_end()) != Some("---") {
        return Ok(None);
    }
    for (index, line) in lines.iter().enumerate().skip(1) {
        if line.trim_end() == "---" {
            let content = (1..index).map(|i| (i as u64 + 1, lines[i])).collect();
            return Ok(Some((content, index + 1)));
        }
    }
    Err(vec![FileProblem::new(
        file,
        Some(1),
        codes::FRONTMATTER_INVALID,
        "the frontmatter opened on line 1 is never closed with `---`".to_owned(),
    )])
}

/// Index of the first body line after any frontmatter (which is checked to be closed).
fn skip_frontmatter(file: &Path, lines: &[&str]) -> Result<usize, Vec<FileProblem>> {
    Ok(frontmatter(file, lines)?.map_or(0, |(_, start)| start))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTrustFront {
    organization: Option<Spanned<String>>,
}

/// The trust list's frontmatter: only `organization:`.
fn trust_frontmatter(
    file: &Path,
    lines: &[&str],
) -> Result<(Option<String>, usize), Vec<FileProblem>> {
    let Some((content, body_start)) = frontmatter(file, lines)? else {
        return Ok((None, 0));
    };
    let first = content.first().map_or(2, |(n, _)| *n);
    let text = join_lines(&content);
    let front: RawTrustFront = parse_yaml::<Option<RawTrustFront>>(file, first, &text, None)?
        .unwrap_or(RawTrustFront { organization: None });
    let organization = match front.organization {
        Some(org) => {
            let line = first + org.referenced.line().saturating_sub(1);
            if let Err(message) = check_segment(&org.value) {
                return Err(vec![
                    FileProblem::new(
                        file,
                        Some(line),
                        codes::ORGANIZATION_INVALID,
                        format!("organization `{}` {message}", org.value),
                    )
                    .with_field("organization"),
                ]);
            }
            Some(org.value)
        }
        None => None,
    };
    Ok((organization, body_start))
}

pub(crate) fn join_lines(lines: &[(u64, &str)]) -> String {
    let mut text = String::new();
    for (_, line) in lines {
        text.push_str(line);
        text.push('\n');
    }
    text
}

/// One `- ...` item of a fence: the line it starts on, its text (a one-item YAML list) and
/// its id as written, when a line `id: x` can be seen.
#[derive(Debug)]
struct Item {
    line: u64,
    text: String,
    id_hint: Option<String>,
}

/// A fence opener: the fence character, its length and the info string.
fn fence_open(line: &str) -> Option<(char, usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let ch = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let count = rest.chars().take_while(|c| *c == ch).count();
    (count >= 3).then(|| (ch, count, rest[count..].trim()))
}

fn fence_closes(line: &str, ch: char, count: usize) -> bool {
    let trimmed = line.trim();
    trimmed.chars().take_while(|c| *c == ch).count() >= count && trimmed.chars().all(|c| c == ch)
}

/// The level and title of an ATX heading.
fn heading(line: &str) -> Option<(usize, &str)> {
    let trimmed = line.trim_start();
    let level = trimmed.chars().take_while(|c| *c == '#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let rest = &trimmed[level..];
    (rest.is_empty() || rest.starts_with(' '))
        .then(|| (level, rest.trim().trim_end_matches('#').trim()))
}

/// The items of every yaml fence inside the `## <section>` section (up to the next heading
/// of level 1 or 2). Fences elsewhere in the file are examples and are not read.
fn section_items(
    file: &Path,
    lines: &[&str],
    body_start: usize,
    section: &str,
) -> Result<Vec<Item>, Vec<FileProblem>> {
    let mut in_section = false;
    let mut seen_section = false;
    let mut fences: Vec<Vec<(u64, &str)>> = Vec::new();
    let mut index = body_start;
    let mut problems = Vec::new();
    while index < lines.len() {
        let line = lines[index];
        if let Some((ch, count, info)) = fence_open(line) {
            let is_yaml = ch == '`'
                && matches!(
                    info.split_whitespace()
                        .next()
                        .map(str::to_ascii_lowercase)
                        .as_deref(),
                    Some("yaml" | "yml")
                );
            let open_line = index as u64 + 1;
            let mut content = Vec::new();
            let mut closed = false;
            index += 1;
            while index < lines.len() {
                if fence_closes(lines[index], ch, count) {
                    closed = true;
                    break;
                }
                content.push((index as u64 + 1, lines[index]));
                index += 1;
            }
            if in_section && is_yaml {
                if closed {
                    fences.push(content);
                } else {
                    problems.push(FileProblem::new(
                        file,
                        Some(open_line),
                        codes::FENCE_UNCLOSED,
                        "the yaml fence opened here is never closed".to_owned(),
                    ));
                }
            }
            index += 1;
            continue;
        }
        if let Some((level, title)) = heading(line)
            && level <= 2
        {
            in_section = level == 2 && title.eq_ignore_ascii_case(section);
            seen_section |= in_section;
        }
        index += 1;
    }
    if !seen_section {
        problems.push(FileProblem::new(
            file,
            None,
            codes::SECTION_MISSING,
            format!("no `## {section}` section"),
        ));
    }
    let mut items = Vec::new();
    for fence in &fences {
        match split_items(file, fence) {
            Ok(mut found) => items.append(&mut found),
            Err(mut found) => problems.append(&mut found),
        }
    }
    if problems.is_empty() {
        Ok(items)
    } else {
        Err(problems)
    }
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_blank_or_comment(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.is_empty() || trimmed.starts_with('#')
}

/// Splits a fence into its top-level `- ` items.
fn split_items(file: &Path, fence: &[(u64, &str)]) -> Result<Vec<Item>, Vec<FileProblem>> {
    let Some((first_line, first)) = fence.iter().find(|(_, l)| !is_blank_or_comment(l)) else {
        return Ok(Vec::new());
    };
    let base = indentation(first);
    let is_item = |line: &str| {
        indentation(line) == base && {
            let rest = line.trim_start_matches(' ');
            rest == "-" || rest.starts_with("- ")
        }
    };
    if !is_item(first) {
        return Err(vec![FileProblem::new(
            file,
            Some(*first_line),
            codes::FENCE_NOT_LIST,
            "a sources fence must hold a block list of `- id: ...` entries".to_owned(),
        )]);
    }
    let mut items: Vec<(u64, Vec<&str>)> = Vec::new();
    for (number, line) in fence {
        if is_item(line) {
            items.push((*number, vec![line]));
        } else if let Some((_, current)) = items.last_mut() {
            if !is_blank_or_comment(line) && indentation(line) <= base {
                return Err(vec![FileProblem::new(
                    file,
                    Some(*number),
                    codes::FENCE_NOT_LIST,
                    "a line outside any `- ` list item".to_owned(),
                )]);
            }
            current.push(line);
        }
    }
    Ok(items
        .into_iter()
        .map(|(line, body)| Item {
            line,
            id_hint: id_hint(&body, base),
            text: body.iter().map(|l| format!("{l}\n")).collect(),
        })
        .collect())
}

/// Parses a whole file that is a YAML block list (a lock file) item by item, so every
/// problem names its own item's lines: each `(line of the item, value)`.
pub(crate) fn list_items<T: DeserializeOwned>(
    file: &Path,
    text: &str,
) -> Result<Vec<(u64, T)>, Vec<FileProblem>> {
    let lines: Vec<(u64, &str)> = split_lines(text)
        .into_iter()
        .enumerate()
        .map(|(index, line)| (index as u64 + 1, line))
        .collect();
    let mut values = Vec::new();
    let mut problems = Vec::new();
    for item in split_items(file, &lines)? {
        match parse_yaml::<Vec<T>>(file, item.line, &item.text, item.id_hint.as_deref()) {
            Ok(mut parsed) => values.extend(parsed.pop().map(|value| (item.line, value))),
            Err(mut found) => problems.append(&mut found),
        }
    }
    if problems.is_empty() {
        Ok(values)
    } else {
        Err(problems)
    }
}

/// The id as written in an item, read without YAML so that a broken entry can be named.
fn id_hint(body: &[&str], base: usize) -> Option<String> {
    for (index, line) in body.iter().enumerate() {
        let mut rest = line.trim_start_matches(' ');
        if index == 0 {
            rest = rest.strip_prefix('-')?.trim_start();
        } else if indentation(line) > base + 2 {
            continue;
        }
        if let Some(value) = rest.strip_prefix("id:") {
            let value = value.split(" #").next().unwrap_or_default().trim();
            let value = value.trim_matches(|c| c == '"' || c == '\'');
            return (!value.is_empty()).then(|| value.to_owned());
        }
    }
    None
}

// ---------------------------------------------------------------------------------------
// YAML

/// Parses YAML text whose first line is line `first` of `file`.
pub(crate) fn parse_yaml<T: DeserializeOwned>(
    file: &Path,
    first: u64,
    text: &str,
    source: Option<&str>,
) -> Result<T, Vec<FileProblem>> {
    serde_saphyr::from_str_with_options::<T>(text, strict_options())
        .map_err(|err| vec![yaml_problem(file, first, text, source, &err)])
}

fn innermost(err: &YamlError) -> &YamlError {
    match err {
        YamlError::WithSnippet { error, .. } | YamlError::AliasError { error, .. } => {
            innermost(error)
        }
        other => other,
    }
}

/// The key written on line `line` (1-based) of `text`, if any.
fn key_on_line(text: &str, line: u64) -> String {
    let index = usize::try_from(line.saturating_sub(1)).unwrap_or(usize::MAX);
    let Some(content) = text.lines().nth(index) else {
        return String::new();
    };
    let rest = content.trim_start().trim_start_matches("- ").trim_start();
    match rest.split_once(':') {
        Some((key, _)) if !key.is_empty() && !key.contains(' ') => key.to_owned(),
        _ => String::new(),
    }
}

fn yaml_problem(
    file: &Path,
    first: u64,
    text: &str,
    source: Option<&str>,
    err: &YamlError,
) -> FileProblem {
    let err = innermost(err);
    let local = match err {
        // The library points past the mapping; the entry's own line is clearer.
        YamlError::SerdeMissingField { .. } => 1,
        _ => err.location().map_or(1, |loc| loc.line().max(1)),
    };
    let line = first + local - 1;
    let key = key_on_line(text, local);
    let (code, message, field) = match err {
        YamlError::DuplicateMappingKey { key, .. } => {
            let key = key.clone().unwrap_or_default();
            (codes::DUPLICATE_KEY, format!("duplicate key `{key}`"), key)
        }
        YamlError::SerdeUnknownField {
            field, expected, ..
        } => (
            codes::UNKNOWN_FIELD,
            format!(
                "unknown field `{field}`, expected one of {}",
                expected
                    .iter()
                    .map(|e| format!("`{e}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            field.clone(),
        ),
        YamlError::SerdeMissingField { field, .. } => (
            codes::MISSING_FIELD,
            format!("missing required field `{field}`"),
            (*field).to_owned(),
        ),
        YamlError::InvalidBooleanStrict { .. } => (
            codes::WRONG_TYPE,
            "expected `true` or `false`".to_owned(),
            key,
        ),
        YamlError::QuotingRequired { value, .. } => (
            codes::WRONG_TYPE,
            format!("the value `{value}` must be quoted to be read as text"),
            key,
        ),
        YamlError::NullIntoString { .. } => (
            codes::WRONG_TYPE,
            "expected text, found an empty value".to_owned(),
            key,
        ),
        YamlError::InvalidScalar { .. }
        | YamlError::Unexpected { .. }
        | YamlError::SerdeInvalidType { .. }
        | YamlError::SerdeInvalidValue { .. }
        | YamlError::SerdeInvalidLength { .. }
        | YamlError::SerdeUnknownVariant { .. } => (codes::WRONG_TYPE, message_of(err), key),
        YamlError::MergeKeyNotAllowed { .. }
        | YamlError::MergeValueNotMapOrSeqOfMaps { .. }
        | YamlError::UnsupportedTag { .. }
        | YamlError::MultipleDocuments { .. }
        | YamlError::Budget { .. } => (codes::UNSUPPORTED_YAML, message_of(err), key),
        other => (codes::YAML_SYNTAX, message_of(other), key),
    };
    FileProblem::new(file, Some(line), code, message)
        .with_source(source)
        .with_field(&field)
}

/// The library's message without its trailing position.
fn message_of(err: &YamlError) -> String {
    let text = err.to_string();
    match text.rfind(" at line ") {
        Some(index) => text[..index].to_owned(),
        None => text,
    }
}

// ---------------------------------------------------------------------------------------
// Descriptor entries

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
struct Draft {
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
    fn is_reference(&self) -> bool {
        self.organization.is_none()
            && self.name.is_none()
            && self.maintainer.is_none()
            && self.method.is_none()
            && self.url.is_none()
            && self.layout_line.is_none()
            && self.provides.is_none()
    }
}

fn read_draft(file: &Path, item: &Item) -> Result<Draft, Vec<FileProblem>> {
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
fn reference_entry(draft: Draft) -> Result<ReferenceEntry, Vec<FileProblem>> {
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
fn check_segment(value: &str) -> Result<(), &'static str> {
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
pub(crate) fn check_relative(path: &str) -> Result<PathBuf, String> {
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
fn validate(draft: &Draft) -> Result<Descriptor, Vec<FileProblem>> {
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

// ---------------------------------------------------------------------------------------
// Registry

/// A row of the registry's `## Org-curated sources` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuratedRow {
    /// The organization.
    pub organization: String,
    /// Its curated sources, as written.
    pub sources: String,
    /// Its curated file, as written.
    pub file: String,
    /// The row's line.
    pub line: u64,
}

/// A row of the registry's `## Community / external sources` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommunityRow {
    /// The source id.
    pub id: SourceId,
    /// The owning organization.
    pub organization: String,
    /// The maintainer.
    pub maintainer: String,
    /// The repository, as written.
    pub repository: String,
    /// A one-line note.
    pub notes: String,
    /// The row's line.
    pub line: u64,
}

/// The discovery registry. Its rows are editorial: nothing here is ever fetched.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Registry {
    /// `## Org-curated sources` rows.
    pub curated: Vec<CuratedRow>,
    /// `## Community / external sources` rows.
    pub community: Vec<CommunityRow>,
}

const CURATED_HEADER: [&str; 3] = ["Organization", "Curated sources", "File"];
const COMMUNITY_HEADER: [&str; 5] = [
    "Source id",
    "Owning org",
    "Maintainer",
    "Repository",
    "Notes",
];

fn table_cells(line: &str) -> Vec<String> {
    let inner = line.trim();
    let inner = inner.strip_prefix('|').unwrap_or(inner);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    inner
        .split('|')
        .map(|cell| cell.trim().to_owned())
        .collect()
}

/// The table rows (line, cells) of the first table in `## <section>`, after checking its
/// header; `None` when the section is absent.
fn section_table(
    file: &Path,
    lines: &[&str],
    section: &str,
    header: &[&str],
    problems: &mut Vec<FileProblem>,
) -> Vec<(u64, Vec<String>)> {
    let mut in_section = false;
    let mut table: Vec<(u64, &str)> = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        if let Some((level, title)) = heading(line)
            && level <= 2
        {
            if in_section {
                break;
            }
            in_section = level == 2 && title.eq_ignore_ascii_case(section);
            continue;
        }
        if in_section {
            if line.trim_start().starts_with('|') {
                table.push((index as u64 + 1, line));
            } else if !table.is_empty() {
                break;
            }
        }
    }
    let Some((header_line, header_text)) = table.first() else {
        return Vec::new();
    };
    let found = table_cells(header_text);
    let matches = found.len() == header.len()
        && found
            .iter()
            .zip(header)
            .all(|(a, b)| a.eq_ignore_ascii_case(b));
    if !matches {
        problems.push(FileProblem::new(
            file,
            Some(*header_line),
            codes::REGISTRY_TABLE_INVALID,
            format!(
                "the `{section}` table header must be `| {} |`",
                header.join(" | ")
            ),
        ));
        return Vec::new();
    }
    table
        .iter()
        .skip(2)
        .map(|(line, text)| (*line, table_cells(text)))
        .collect()
}

/// Parses the discovery registry: problems are returned beside the rows that were read.
pub fn parse_registry(file: &Path, text: &str) -> (Registry, Vec<FileProblem>) {
    let lines = split_lines(text);
    let mut problems = Vec::new();
    let mut registry = Registry::default();
    let bad_row = |line: u64, message: String| {
        FileProblem::new(file, Some(line), codes::REGISTRY_ROW_INVALID, message)
    };
    for (line, cells) in section_table(
        file,
        &lines,
        "Org-curated sources",
        &CURATED_HEADER,
        &mut problems,
    ) {
        match <[String; 3]>::try_from(cells) {
            Ok([organization, sources, file]) => registry.curated.push(CuratedRow {
                organization,
                sources,
                file,
                line,
            }),
            Err(cells) => problems.push(bad_row(
                line,
                format!("expected 3 cells, found {}", cells.len()),
            )),
        }
    }
    for (line, cells) in section_table(
        file,
        &lines,
        "Community / external sources",
        &COMMUNITY_HEADER,
        &mut problems,
    ) {
        match <[String; 5]>::try_from(cells) {
            Ok([id, organization, maintainer, repository, notes]) => match SourceId::parse(&id) {
                Ok(id) => registry.community.push(CommunityRow {
                    id,
                    organization,
                    maintainer,
                    repository,
                    notes,
                    line,
                }),
                Err(message) => problems.push(bad_row(line, message).with_source(Some(&id))),
            },
            Err(cells) => problems.push(bad_row(
                line,
                format!("expected 5 cells, found {}", cells.len()),
            )),
        }
    }
    (registry, problems)
}

// ---------------------------------------------------------------------------------------
// Pointers

/// A pointer file `skills/<name>/source.md` in the adopter's tree: a redirect naming the
/// source that provides the skill. It never authorises a fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointer {
    /// The skill directory's name.
    pub skill: String,
    /// The pointer file.
    pub file: PathBuf,
    /// `source:` the source id.
    pub source: SourceId,
    /// `organization:` the owning organization.
    pub organization: String,
    /// `skill_path:` the skill's path inside the source.
    pub skill_path: PathBuf,
    /// `evals_path:` the evals' path inside the source, if any.
    pub evals_path: Option<PathBuf>,
    /// The line each value was written on.
    pub lines: PointerLines,
}

/// The lines of a pointer's values, so later checks can name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PointerLines {
    /// `source:`.
    pub source: u64,
    /// `organization:`.
    pub organization: u64,
    /// `skill_path:`.
    pub skill_path: u64,
    /// `evals_path:`, when given.
    pub evals_path: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPointer {
    source: Spanned<String>,
    organization: Spanned<String>,
    skill_path: Spanned<String>,
    evals_path: Option<Spanned<String>>,
}

/// Parses a pointer's frontmatter (`source`, `organization`, `skill_path`, optional
/// `evals_path`; nothing else).
///
/// # Errors
/// Missing or unclosed frontmatter, a YAML problem (a missing, unknown or duplicate key,
/// an empty value), or every bad value: a `source` that is not a source id, an
/// `organization` that is not one path segment, a path that is empty, absolute or holds
/// `..`.
pub fn parse_pointer(file: &Path, skill: &str, text: &str) -> Result<Pointer, Vec<FileProblem>> {
    let lines = split_lines(text);
    let Some((content, _)) = frontmatter(file, &lines)? else {
        return Err(vec![FileProblem::new(
            file,
            Some(1),
            codes::FRONTMATTER_INVALID,
            "a pointer starts with `---` frontmatter naming `source`, `organization` and `skill_path`".to_owned(),
        )]);
    };
    let first = content.first().map_or(2, |(n, _)| *n);
    let raw: RawPointer = parse_yaml(file, first, &join_lines(&content), None)?;
    let at = |s: &Spanned<String>| first + s.referenced.line().max(1) - 1;
    let source_text = raw.source.value.clone();
    let mut problems = Vec::new();
    let source = SourceId::parse(&raw.source.value)
        .map_err(|message| {
            problems.push(
                FileProblem::new(file, Some(at(&raw.source)), codes::ID_INVALID, message)
                    .with_source(Some(&source_text))
                    .with_field("source"),
            );
        })
        .ok();
    if let Err(why) = check_segment(&raw.organization.value) {
        problems.push(
            FileProblem::new(
                file,
                Some(at(&raw.organization)),
                codes::ORGANIZATION_INVALID,
                format!("organization `{}` {why}", raw.organization.value),
            )
            .with_source(Some(&source_text))
            .with_field("organization"),
        );
    }
    let mut path = |value: &Spanned<String>, field: &str| {
        check_relative(&value.value)
            .map_err(|why| {
                problems.push(
                    FileProblem::new(
                        file,
                        Some(at(value)),
                        codes::POINTER_PATH_INVALID,
                        format!("{field} `{}` {why}", value.value),
                    )
                    .with_source(Some(&source_text))
                    .with_field(field),
                );
            })
            .ok()
    };
    let skill_path = path(&raw.skill_path, "skill_path");
    let evals_path = raw
        .evals_path
        .as_ref()
        .map(|value| path(value, "evals_path"));
    match (source, skill_path, evals_path) {
        (Some(source), Some(skill_path), evals_path @ (None | Some(Some(_))))
            if problems.is_empty() =>
        {
            Ok(Pointer {
                skill: skill.to_owned(),
                file: file.to_path_buf(),
                source,
                lines: PointerLines {
                    source: at(&raw.source),
                    organization: at(&raw.organization),
                    skill_path: at(&raw.skill_path),
                    evals_path: raw.evals_path.as_ref().map(at),
                },
                organization: raw.organization.value,
                skill_path,
                evals_path: evals_path.flatten(),
            })
        }
        _ => Err(problems),
    }
}

#[cfg(test)]
mod tests;
