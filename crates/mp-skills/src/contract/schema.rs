//! The machine half of a contract: the JSON Schemas (draft 2020-12) fenced in its
//! `## Input contract` and `## Output contract` sections, the parameter rules the linter
//! applies to the input schema, and the validators the sandbox enforces at call time.
//!
//! One source of truth: the schema a document shows is the schema every call is checked
//! against, so a document that disagrees with what the skill receives or answers is caught
//! as `skill_contract_violation`, never trusted.

use jsonschema::{Draft, Validator};
use serde_json::Value;

use super::user_id::{check_identifier, is_user_identifier};
use super::{ContractGap, Section};

/// The first ```` ```json ```` fenced block of a section body, if any.
pub(super) fn fenced_json(body: &str) -> Option<String> {
    let mut lines = body.lines();
    while let Some(line) = lines.next() {
        let opening = line.trim_start();
        if opening.starts_with("```json") || opening.starts_with("~~~json") {
            let fence = &opening[..3];
            let mut text = String::new();
            for inner in lines.by_ref() {
                if inner.trim_start().starts_with(fence) {
                    return Some(text);
                }
                text.push_str(inner);
                text.push('\n');
            }
            return None;
        }
    }
    None
}

/// Compiles a schema the way calls are checked: draft 2020-12, offline, formats asserted.
pub(crate) fn compile(schema: &Value) -> Result<Validator, String> {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// The schema of `section` (parsed and compiled), or the gaps that stop it.
pub(super) fn section_schema(section: Section, body: &str) -> Result<Value, ContractGap> {
    let Some(text) = fenced_json(body) else {
        return Err(ContractGap::MissingSchema { section });
    };
    let schema: Value = serde_json::from_str(&text).map_err(|e| ContractGap::InvalidSchema {
        section,
        detail: format!("not JSON: {e}"),
    })?;
    if !schema.is_object() {
        return Err(ContractGap::InvalidSchema {
            section,
            detail: "a schema must be a JSON object".to_owned(),
        });
    }
    compile(&schema).map_err(|detail| ContractGap::InvalidSchema { section, detail })?;
    Ok(schema)
}

/// The parameter rules over the input schema's top-level `properties`: each states its
/// format in a `description` and carries at least one `examples` entry valid against its
/// own schema; `user_id` accepts an RFC 4122 UUID or null only (`format: uuid`, type
/// `["string", "null"]`); no example, default, const or enum value of an identifier breaks
/// the identifier rules (a reserved word, the nil UUID).
pub(super) fn parameter_gaps(input: &Value) -> Vec<ContractGap> {
    let Some(properties) = input.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut gaps = Vec::new();
    for (name, schema) in properties {
        let parameter = name.clone();
        let described = schema
            .get("description")
            .and_then(Value::as_str)
            .is_some_and(|d| !d.trim().is_empty());
        if !described {
            gaps.push(ContractGap::ParameterUndocumented {
                parameter: parameter.clone(),
            });
        }
        let examples = schema
            .get("examples")
            .and_then(Value::as_array)
            .filter(|e| !e.is_empty());
        match (examples, compile(schema)) {
            (None, _) => gaps.push(ContractGap::ParameterWithoutExample {
                parameter: parameter.clone(),
            }),
            (Some(_), Err(detail)) => gaps.push(ContractGap::ParameterExampleInvalid {
                parameter: parameter.clone(),
                detail,
            }),
            (Some(examples), Ok(validator)) => {
                if let Some(bad) = examples.iter().find(|e| !validator.is_valid(e)) {
                    gaps.push(ContractGap::ParameterExampleInvalid {
                        parameter: parameter.clone(),
                        detail: format!("example {bad} does not match the parameter's schema"),
                    });
                } else if let Some((example, refusal)) = examples
                    .iter()
                    .find_map(|e| check_identifier(name, e).err().map(|r| (e, r)))
                {
                    gaps.push(ContractGap::IdentifierExampleRefused {
                        parameter: parameter.clone(),
                        example: example.to_string(),
                        detail: refusal.to_string(),
                    });
                }
            }
        }
        gaps.extend(declared_values_refused(name, schema));
        if is_user_identifier(name) && !uuid_or_null(schema) {
            gaps.push(ContractGap::IdentifierNotUuid { parameter });
        }
    }
    gaps
}

/// The values an identifier parameter's schema names in `default`, `const` or `enum` that
/// the identifier rules refuse (a schema that offers `"enum": ["system", ...]` contradicts
/// them: every call that follows it would be refused).
fn declared_values_refused(name: &str, schema: &Value) -> Vec<ContractGap> {
    let mut declared: Vec<(&'static str, &Value)> = Vec::new();
    for keyword in ["default", "const"] {
        if let Some(value) = schema.get(keyword) {
            declared.push((keyword, value));
        }
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        declared.extend(values.iter().map(|v| ("enum", v)));
    }
    declared
        .into_iter()
        .filter_map(|(keyword, value)| {
            let refusal = check_identifier(name, value).err()?;
            Some(ContractGap::IdentifierValueRefused {
                parameter: name.to_owned(),
                keyword,
                value: value.to_string(),
                detail: refusal.to_string(),
            })
        })
        .collect()
}

/// Whether a parameter schema accepts exactly "an RFC 4122 UUID or null": `format: uuid`
/// and a type list of string and null.
fn uuid_or_null(schema: &Value) -> bool {
    let uuid = schema.get("format").and_then(Value::as_str) == Some("uuid");
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect(),
        Some(Value::String(one)) => vec![one.as_str()],
        _ => Vec::new(),
    };
    uuid && types.len() == 2 && types.contains(&"string") && types.contains(&"null")
}

/// The compiled input and output schemas of one contract, as calls are checked.
#[derive(Debug)]
pub struct ContractSchemas {
    input: Validator,
    output: Validator,
}

impl ContractSchemas {
    /// Compiles both schemas of a parsed contract.
    ///
    /// # Errors
    /// When a schema does not compile (a parsed [`super::Contract`] never has one).
    pub fn compile(contract: &super::Contract) -> Result<Self, String> {
        Ok(Self {
            input: compile(contract.input_schema())?,
            output: compile(contract.output_schema())?,
        })
    }

    /// Checks the input a call is about to receive against the schema, then its top-level
    /// identifier parameters against the identifier rules (`user_id` is an RFC 4122 UUID or
    /// null, never the nil UUID; no identifier carries a reserved word), which hold
    /// whatever the schema says; the first error, with its location.
    ///
    /// # Errors
    /// The first schema error, else the first identifier refused.
    pub fn check_input(&self, input: &Value) -> Result<(), String> {
        first_error(&self.input, input)?;
        let Some(parameters) = input.as_object() else {
            return Ok(());
        };
        for (name, value) in parameters {
            if let Err(refusal) = check_identifier(name, value) {
                let pointer = name.replace('~', "~0").replace('/', "~1");
                return Err(format!("at /{pointer}: {refusal}"));
            }
        }
        Ok(())
    }

    /// Checks a call's answer; the first error, with its location.
    ///
    /// # Errors
    /// The first schema error.
    pub fn check_output(&self, output: &Value) -> Result<(), String> {
        first_error(&self.output, output)
    }
}

fn first_error(validator: &Validator, value: &Value) -> Result<(), String> {
    match validator.iter_errors(value).next() {
        None => Ok(()),
        Some(error) => {
            let at = error.instance_path().to_string();
            let at = if at.is_empty() { "/".to_owned() } else { at };
            Err(format!("at {at}: {error}"))
        }
    }
}
