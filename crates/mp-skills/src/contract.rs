//! Skill contract documents (`<name>.md` next to each user skill) and their linter.
//!
//! A contract is a Markdown document with one `## ` section per required item: purpose,
//! when to call, when not to call, input contract, output contract (success and failure
//! shapes), permissions, execution method, failure classes (fatal, retryable, needs user
//! report), completion criteria and verification method. Some sections are read for
//! content too: the failure classes name all three classes, the execution method says how
//! the skill runs, the permissions state when approval is needed. The loader refuses a user
//! skill whose contract has a gap; `mp skills lint` lists every gap.

use std::collections::BTreeMap;
use std::fmt;

use mp_core::skill::FailureClass;

mod builtin;
mod schema;
mod user_id;

#[cfg(test)]
mod tests;

pub use builtin::builtin_contract;
pub use schema::ContractSchemas;
pub use user_id::{
    IdentifierError, RESERVED_WORDS, UserId, UserIdError, check_identifier, is_identifier,
    is_reserved, is_user_identifier,
};

/// One required section of a contract document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Section {
    /// The problem the skill solves.
    Purpose,
    /// When the skill should be called.
    WhenToCall,
    /// When the skill must not be called.
    WhenNotToCall,
    /// Required and optional inputs, their format and constraints.
    InputContract,
    /// The success and failure shapes of the answer.
    OutputContract,
    /// Tokens, access scope and approvals the skill needs.
    Permissions,
    /// How the skill runs: HTTP API, CLI, in a container, in mp's WebAssembly sandbox or
    /// in process.
    ExecutionMethod,
    /// Fatal, retryable and needs-user-report failures.
    FailureClasses,
    /// When a call counts as finished.
    CompletionCriteria,
    /// How to check that the skill works (sample calls, logs).
    VerificationMethod,
}

impl Section {
    /// Every section, in document order.
    pub const ALL: [Section; 10] = [
        Section::Purpose,
        Section::WhenToCall,
        Section::WhenNotToCall,
        Section::InputContract,
        Section::OutputContract,
        Section::Permissions,
        Section::ExecutionMethod,
        Section::FailureClasses,
        Section::CompletionCriteria,
        Section::VerificationMethod,
    ];

    /// The heading text, e.g. `When not to call`.
    pub fn heading(self) -> &'static str {
        match self {
            Self::Purpose => "Purpose",
            Self::WhenToCall => "When to call",
            Self::WhenNotToCall => "When not to call",
            Self::InputContract => "Input contract",
            Self::OutputContract => "Output contract",
            Self::Permissions => "Permissions",
            Self::ExecutionMethod => "Execution method",
            Self::FailureClasses => "Failure classes",
            Self::CompletionCriteria => "Completion criteria",
            Self::VerificationMethod => "Verification method",
        }
    }

    /// The machine key, e.g. `when_not_to_call` (used by `mp skills contract --section`).
    pub fn key(self) -> &'static str {
        match self {
            Self::Purpose => "purpose",
            Self::WhenToCall => "when_to_call",
            Self::WhenNotToCall => "when_not_to_call",
            Self::InputContract => "input_contract",
            Self::OutputContract => "output_contract",
            Self::Permissions => "permissions",
            Self::ExecutionMethod => "execution_method",
            Self::FailureClasses => "failure_classes",
            Self::CompletionCriteria => "completion_criteria",
            Self::VerificationMethod => "verification_method",
        }
    }

    /// The section whose [`Section::key`] is `key`.
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.key() == key)
    }

    fn from_heading(text: &str) -> Option<Self> {
        let wanted = text.trim().trim_end_matches(':').to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|s| s.heading().to_ascii_lowercase() == wanted)
    }
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.heading())
    }
}

/// One gap in a contract document.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContractGap {
    /// A required section has no `## ` heading.
    MissingSection {
        /// The section.
        section: Section,
    },
    /// A required section is present but says nothing.
    EmptySection {
        /// The section.
        section: Section,
    },
    /// The same section appears twice.
    RepeatedSection {
        /// The section.
        section: Section,
    },
    /// The output contract fails to name one of its shapes.
    MissingTopic {
        /// The section.
        section: Section,
        /// What it must name: `success` or `failure`.
        topic: &'static str,
    },
    /// `## Failure classes` leaves out one of the three classes (each has its own code).
    MissingFailureClass {
        /// The class left out.
        class: FailureClass,
    },
    /// `## Execution method` does not say how the skill runs (HTTP API, CLI, in a
    /// container, in the WebAssembly sandbox or in process).
    UnstatedExecutionMethod,
    /// `## Permissions` does not say when approval is needed (or that none is).
    UnstatedApproval,
    /// The input or output contract has no ```` ```json ```` schema block.
    MissingSchema {
        /// `Input contract` or `Output contract`.
        section: Section,
    },
    /// The schema block is not JSON or not a valid draft 2020-12 schema.
    InvalidSchema {
        /// The section.
        section: Section,
        /// Why.
        detail: String,
    },
    /// An input parameter has no `description` stating its format.
    ParameterUndocumented {
        /// The parameter (a top-level property of the input schema).
        parameter: String,
    },
    /// An input parameter has no `examples`.
    ParameterWithoutExample {
        /// The parameter.
        parameter: String,
    },
    /// An example of an input parameter does not match the parameter's own schema.
    ParameterExampleInvalid {
        /// The parameter.
        parameter: String,
        /// Which example, and why.
        detail: String,
    },
    /// The user identifier parameter `user_id` does not accept exactly a UUID or null.
    IdentifierNotUuid {
        /// The parameter.
        parameter: String,
    },
    /// An example of an identifier parameter (`id`, `*_id`) breaks the identifier rules: a
    /// reserved word, or for `user_id` the nil UUID or another non-RFC 4122 value.
    IdentifierExampleRefused {
        /// The parameter.
        parameter: String,
        /// The example, as JSON.
        example: String,
        /// Why it is refused.
        detail: String,
    },
    /// An identifier parameter's schema names a value the identifier rules refuse in its
    /// `default`, `const` or `enum`.
    IdentifierValueRefused {
        /// The parameter.
        parameter: String,
        /// `default`, `const` or `enum`.
        keyword: &'static str,
        /// The value, as JSON.
        value: String,
        /// Why it is refused.
        detail: String,
    },
}

impl ContractGap {
    /// The stable code: `contract_missing_section`, `contract_empty_section`,
    /// `contract_repeated_section`, `contract_missing_topic`, `contract_missing_fatal_class`,
    /// `contract_missing_retryable_class`, `contract_missing_user_report_class`,
    /// `contract_unstated_execution_method`, `contract_unstated_approval`,
    /// `contract_missing_schema`, `contract_invalid_schema`,
    /// `contract_parameter_undocumented`, `contract_parameter_without_example`,
    /// `contract_parameter_example_invalid`, `contract_identifier_not_uuid`,
    /// `contract_identifier_example_refused` or `contract_identifier_value_refused`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::MissingSection { .. } => "contract_missing_section",
            Self::EmptySection { .. } => "contract_empty_section",
            Self::RepeatedSection { .. } => "contract_repeated_section",
            Self::MissingTopic { .. } => "contract_missing_topic",
            Self::MissingFailureClass { class } => match class {
                FailureClass::Fatal => "contract_missing_fatal_class",
                FailureClass::Retryable => "contract_missing_retryable_class",
                FailureClass::NeedsUserReport => "contract_missing_user_report_class",
            },
            Self::UnstatedExecutionMethod => "contract_unstated_execution_method",
            Self::UnstatedApproval => "contract_unstated_approval",
            Self::MissingSchema { .. } => "contract_missing_schema",
            Self::InvalidSchema { .. } => "contract_invalid_schema",
            Self::ParameterUndocumented { .. } => "contract_parameter_undocumented",
            Self::ParameterWithoutExample { .. } => "contract_parameter_without_example",
            Self::ParameterExampleInvalid { .. } => "contract_parameter_example_invalid",
            Self::IdentifierNotUuid { .. } => "contract_identifier_not_uuid",
            Self::IdentifierExampleRefused { .. } => "contract_identifier_example_refused",
            Self::IdentifierValueRefused { .. } => "contract_identifier_value_refused",
        }
    }
}

impl fmt::Display for ContractGap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingSection { section } => write!(f, "missing section `## {section}`"),
            Self::EmptySection { section } => write!(f, "section `## {section}` is empty"),
            Self::RepeatedSection { section } => {
                write!(f, "section `## {section}` appears more than once")
            }
            Self::MissingTopic { section, topic } => {
                write!(f, "section `## {section}` does not describe `{topic}`")
            }
            Self::MissingFailureClass { class } => {
                let what = match class {
                    FailureClass::Fatal => "the fatal failures",
                    FailureClass::Retryable => "the retryable failures",
                    FailureClass::NeedsUserReport => "the failures that need a user report",
                };
                write!(
                    f,
                    "section `## {}` does not describe {what}",
                    Section::FailureClasses
                )
            }
            Self::UnstatedExecutionMethod => write!(
                f,
                "section `## {}` does not say how the skill runs (HTTP API, CLI, in a container, in the WebAssembly sandbox or in process)",
                Section::ExecutionMethod
            ),
            Self::UnstatedApproval => write!(
                f,
                "section `## {}` does not state when approval is needed (or that none is)",
                Section::Permissions
            ),
            Self::MissingSchema { section } => {
                write!(f, "section `## {section}` has no ```json schema block")
            }
            Self::InvalidSchema { section, detail } => {
                write!(f, "the schema of `## {section}` is invalid: {detail}")
            }
            Self::ParameterUndocumented { parameter } => write!(
                f,
                "input parameter `{parameter}` has no description stating its format"
            ),
            Self::ParameterWithoutExample { parameter } => {
                write!(
                    f,
                    "input parameter `{parameter}` has no example (`examples`)"
                )
            }
            Self::ParameterExampleInvalid { parameter, detail } => {
                write!(f, "input parameter `{parameter}`: {detail}")
            }
            Self::IdentifierNotUuid { parameter } => write!(
                f,
                "identifier parameter `{parameter}` must accept an RFC 4122 UUID or null only (`\"type\": [\"string\", \"null\"], \"format\": \"uuid\"`)"
            ),
            Self::IdentifierExampleRefused {
                parameter,
                example,
                detail,
            } => write!(
                f,
                "input parameter `{parameter}`: example {example} is refused: {detail}"
            ),
            Self::IdentifierValueRefused {
                parameter,
                keyword,
                value,
                detail,
            } => write!(
                f,
                "input parameter `{parameter}`: its `{keyword}` names {value}, which is refused: {detail}"
            ),
        }
    }
}

/// A contract document whose required sections are all present and non-empty, with the
/// input and output schemas the runtime enforces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contract {
    sections: BTreeMap<Section, String>,
    input_schema: serde_json::Value,
    output_schema: serde_json::Value,
}

impl Contract {
    /// Parses and lints a contract document.
    ///
    /// # Errors
    /// Every gap, in section order.
    pub fn parse(text: &str) -> Result<Self, Vec<ContractGap>> {
        let (sections, mut gaps) = split(text);
        for section in Section::ALL {
            match sections.get(&section) {
                None => gaps.push(ContractGap::MissingSection { section }),
                Some(body) if body.trim().is_empty() => {
                    gaps.push(ContractGap::EmptySection { section });
                }
                Some(body) => gaps.extend(content_gaps(section, body)),
            }
        }
        let mut schemas = Vec::new();
        for section in [Section::InputContract, Section::OutputContract] {
            match sections
                .get(&section)
                .filter(|body| !body.trim().is_empty())
                .map(|body| schema::section_schema(section, body))
            {
                Some(Ok(found)) => schemas.push(found),
                Some(Err(gap)) => gaps.push(gap),
                None => {}
            }
        }
        if let [input, _] = schemas.as_slice() {
            gaps.extend(schema::parameter_gaps(input));
        }
        match <[serde_json::Value; 2]>::try_from(schemas) {
            Ok([input_schema, output_schema]) if gaps.is_empty() => Ok(Self {
                sections,
                input_schema,
                output_schema,
            }),
            _ => Err(gaps),
        }
    }

    /// The JSON Schema of the input (from `## Input contract`).
    pub fn input_schema(&self) -> &serde_json::Value {
        &self.input_schema
    }

    /// The JSON Schema of the answer (from `## Output contract`).
    pub fn output_schema(&self) -> &serde_json::Value {
        &self.output_schema
    }

    /// The text of one section (without its heading).
    pub fn section(&self, section: Section) -> &str {
        self.sections.get(&section).map_or("", |s| s.trim())
    }

    /// The prose of one section without its fenced blocks (the schema travels separately).
    pub fn section_prose(&self, section: Section) -> String {
        let mut prose = String::new();
        let mut in_fence = false;
        for line in self.section(section).lines() {
            let fence =
                line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~");
            if fence {
                in_fence = !in_fence;
                continue;
            }
            if !in_fence {
                prose.push_str(line);
                prose.push('\n');
            }
        }
        prose.trim().to_owned()
    }

    /// The requested sections as one compact JSON object keyed by [`Section::key`]: prose as
    /// a string; the input and output contracts as `{"text", "schema"}`. Only what is asked
    /// for is included, so a caller can inject exactly the parts a request needs.
    pub fn extract(&self, sections: &[Section]) -> serde_json::Value {
        let mut map = serde_json::Map::new();
        for &section in sections {
            let text = self.section_prose(section);
            let value = match section {
                Section::InputContract => {
                    serde_json::json!({ "text": text, "schema": self.input_schema })
                }
                Section::OutputContract => {
                    serde_json::json!({ "text": text, "schema": self.output_schema })
                }
                _ => serde_json::Value::String(text),
            };
            map.insert(section.key().to_owned(), value);
        }
        serde_json::Value::Object(map)
    }
}

/// Lints a contract document: every gap, empty when it is complete.
pub fn lint(text: &str) -> Vec<ContractGap> {
    Contract::parse(text).err().unwrap_or_default()
}

/// Splits the document at `## ` headings; unknown headings are kept out of the map.
fn split(text: &str) -> (BTreeMap<Section, String>, Vec<ContractGap>) {
    let mut sections = BTreeMap::new();
    let mut gaps = Vec::new();
    let mut current: Option<Section> = None;
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        let heading = (!in_fence).then(|| line.strip_prefix("## ")).flatten();
        if let Some(heading) = heading {
            current = Section::from_heading(heading);
            if let Some(section) = current
                && sections.insert(section, String::new()).is_some()
            {
                gaps.push(ContractGap::RepeatedSection { section });
            }
            continue;
        }
        if !in_fence && line.starts_with("# ") {
            current = None;
            continue;
        }
        if let Some(body) = current.and_then(|s| sections.get_mut(&s)) {
            body.push_str(line);
            body.push('\n');
        }
    }
    (sections, gaps)
}

/// What a section must say beyond being non-empty (case-insensitive, whole words): the
/// output contract names its success and failure shapes; the failure classes name all
/// three classes; the execution method says how the skill runs; the permissions state the
/// approval conditions.
fn content_gaps(section: Section, body: &str) -> Vec<ContractGap> {
    let lower = body.to_lowercase();
    match section {
        Section::OutputContract => ["success", "failure"]
            .into_iter()
            .filter(|topic| !contains_word(&lower, topic))
            .map(|topic| ContractGap::MissingTopic { section, topic })
            .collect(),
        Section::FailureClasses => {
            // `needs-user-report`, `needs_user_report` and `needs user report` read alike.
            let spaced = lower.replace(['-', '_'], " ");
            FAILURE_CLASS_WORDS
                .into_iter()
                .filter(|(_, words)| !words.iter().any(|w| contains_word(&spaced, w)))
                .map(|(class, _)| ContractGap::MissingFailureClass { class })
                .collect()
        }
        Section::ExecutionMethod => {
            let spaced = lower.replace(['-', '_'], " ");
            let stated = EXECUTION_WORDS.iter().any(|w| contains_word(&spaced, w));
            if stated {
                Vec::new()
            } else {
                vec![ContractGap::UnstatedExecutionMethod]
            }
        }
        Section::Permissions => {
            let stated = APPROVAL_STEMS.iter().any(|w| contains_stem(&lower, w));
            if stated {
                Vec::new()
            } else {
                vec![ContractGap::UnstatedApproval]
            }
        }
        _ => Vec::new(),
    }
}

/// The words that name each failure class (after `-` and `_` became spaces), in English
/// and in the Korean of the contract principles (치명 실패, 재시도 가능 실패, 사용자 보고
/// 필요 실패).
const FAILURE_CLASS_WORDS: [(FailureClass, &[&str]); 3] = [
    (FailureClass::Fatal, &["fatal", "치명"]),
    (
        FailureClass::Retryable,
        &["retryable", "retriable", "재시도 가능"],
    ),
    (
        FailureClass::NeedsUserReport,
        &["needs user report", "user report", "사용자 보고"],
    ),
];

/// The words that say how a skill runs (after `-` and `_` became spaces): an HTTP API, a
/// CLI, a container, mp's WebAssembly sandbox, or in process (the built-ins).
const EXECUTION_WORDS: [&str; 9] = [
    "http",
    "cli",
    "command line",
    "container",
    "컨테이너",
    "webassembly",
    "wasm",
    "sandbox",
    "in process",
];

/// The stems that state an approval condition: `approval`, `approve`, `approved`, ...
/// and the Korean 승인.
const APPROVAL_STEMS: [&str; 2] = ["approv", "승인"];

/// Whether a word starting with `stem` occurs in `text` (`approv` in `approval`).
fn contains_stem(text: &str, stem: &str) -> bool {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(stem)
        .any(|(at, _)| !text[..at].chars().next_back().is_some_and(is_word))
}

/// Whether `word` occurs in `text` as a whole word (not inside `failure_reason`).
fn contains_word(text: &str, word: &str) -> bool {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}
