//! Skill contract documents (`<name>.md` next to each user skill) and their linter.
//!
//! A contract is a Markdown document with one `## ` section per required item: purpose,
//! when to call, when not to call, input contract, output contract (success and failure
//! shapes), permissions, execution method, failure classes (fatal, retryable, needs user
//! report), completion criteria and verification method. The loader refuses a user skill
//! whose contract has a gap; `mp skills lint` lists every gap.

use std::collections::BTreeMap;
use std::fmt;

mod builtin;
mod schema;
mod user_id;

#[cfg(test)]
mod tests;

pub use builtin::builtin_contract;
pub use schema::ContractSchemas;
pub use user_id::{UserId, UserIdError};

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
    /// How the skill runs (for mp: in the WebAssembly sandbox).
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
    /// A section fails to name something it must describe (e.g. the failure shape).
    MissingTopic {
        /// The section.
        section: Section,
        /// What it must name: `success`, `failure`, `fatal`, `retryable`, `user report`.
        topic: &'static str,
    },
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
    /// An identifier parameter (`id`, `*_id`) does not accept exactly a UUID or null.
    IdentifierNotUuid {
        /// The parameter.
        parameter: String,
    },
}

impl ContractGap {
    /// The stable code: `contract_missing_section`, `contract_empty_section`,
    /// `contract_repeated_section`, `contract_missing_topic`, `contract_missing_schema`,
    /// `contract_invalid_schema`, `contract_parameter_undocumented`,
    /// `contract_parameter_without_example`, `contract_parameter_example_invalid` or
    /// `contract_identifier_not_uuid`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::MissingSection { .. } => "contract_missing_section",
            Self::EmptySection { .. } => "contract_empty_section",
            Self::RepeatedSection { .. } => "contract_repeated_section",
            Self::MissingTopic { .. } => "contract_missing_topic",
            Self::MissingSchema { .. } => "contract_missing_schema",
            Self::InvalidSchema { .. } => "contract_invalid_schema",
            Self::ParameterUndocumented { .. } => "contract_parameter_undocumented",
            Self::ParameterWithoutExample { .. } => "contract_parameter_without_example",
            Self::ParameterExampleInvalid { .. } => "contract_parameter_example_invalid",
            Self::IdentifierNotUuid { .. } => "contract_identifier_not_uuid",
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
                Some(body) => gaps.extend(missing_topics(section, body)),
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

/// Topics a section must name (case-insensitive).
fn missing_topics(section: Section, body: &str) -> Vec<ContractGap> {
    let topics: &[(&'static str, &[&str])] = match section {
        Section::OutputContract => &[("success", &["success"]), ("failure", &["failure"])],
        Section::FailureClasses => &[
            ("fatal", &["fatal"]),
            ("retryable", &["retryable"]),
            ("user report", &["user report", "needs_user_report"]),
        ],
        _ => &[],
    };
    let lower = body.to_ascii_lowercase();
    topics
        .iter()
        .filter(|(_, words)| !words.iter().any(|w| contains_word(&lower, w)))
        .map(|(topic, _)| ContractGap::MissingTopic { section, topic })
        .collect()
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
