//! The shared diagnostics of the sources formats: one [`FileProblem`] per problem, naming
//! the file, the line in it, the source id when known, the field and a stable code from
//! [`codes`].

use std::fmt;
use std::path::{Path, PathBuf};

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
