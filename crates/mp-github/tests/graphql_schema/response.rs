//! A GraphQL answer's `data` against the operation that asked for it: the shape GitHub
//! would give under the schema, checked key by key.
//!
//! Self-contained (apollo-compiler and serde_json only), so another test binary can include
//! it with `#[path = "../graphql_schema/response.rs"] mod response;`.

use apollo_compiler::ast::Type;
use apollo_compiler::executable::{DirectiveList, Field, Selection, SelectionSet};
use apollo_compiler::schema::ExtendedType;
use apollo_compiler::validation::Valid;
use apollo_compiler::{ExecutableDocument, Schema};
use serde_json::{Map, Value};

/// Scalars GitHub serializes as JSON strings: the built-in `String` and `ID`, and each of
/// its custom scalars (dates and times, object ids, URIs, `BigInt`, which it documents as
/// encoded as a string). A scalar in none of the lists is reported, never guessed.
const STRING_SCALARS: &[&str] = &[
    "String",
    "ID",
    "Base64String",
    "BigInt",
    "Date",
    "DateTime",
    "GitObjectID",
    "GitRefname",
    "GitSSHRemote",
    "GitTimestamp",
    "HTML",
    "PreciseDateTime",
    "URI",
    "X509Certificate",
];

/// What is wrong with `data` as the answer to the operation `operation_name` of `document`
/// (empty when nothing is), one line each, led by the JSON path (`data.repository.…`):
///
/// - every selected field is present under its response key (alias or name), and nothing
///   else is (a field under `@skip`/`@include` may be absent);
/// - `null` only where the schema's type is nullable; a list where it is a list;
/// - a scalar of its JSON kind (`Int` an integer in 32 bits, `Float` a number, `Boolean` a
///   boolean, `String`, `ID` and GitHub's custom scalars a string);
/// - an enum value among the enum's values;
/// - an object where the type is an object, interface or union; for an interface or union
///   the answer's `__typename` names an object type of it and chooses the fragments that
///   apply (without `__typename`, fragments on other types cannot be chosen: reported).
pub fn response_problems(
    schema: &Valid<Schema>,
    document: &Valid<ExecutableDocument>,
    operation_name: &str,
    data: &Value,
) -> Vec<String> {
    let mut check = Check {
        schema,
        document,
        problems: Vec::new(),
    };
    match document.operations.get(Some(operation_name)) {
        Err(_) => check.say(
            "data",
            format!("the document has no operation {operation_name}"),
        ),
        Ok(operation) => check.named(
            operation.selection_set.ty.as_str(),
            &[&operation.selection_set],
            data,
            "data",
        ),
    }
    check.problems
}

struct Check<'a> {
    schema: &'a Schema,
    document: &'a ExecutableDocument,
    problems: Vec<String>,
}

/// The fields selected under one response key.
struct Entry<'a> {
    key: &'a str,
    fields: Vec<&'a Field>,
    /// Selected at least once outside `@skip`/`@include`.
    required: bool,
}

impl<'a> Check<'a> {
    fn say(&mut self, path: &str, what: String) {
        self.problems.push(format!("{path}: {what}"));
    }

    /// `value` against the type `ty` of the fields `fields` (one response key).
    fn value(&mut self, ty: &Type, fields: &[&'a Field], value: &Value, path: &str) {
        match (ty, value) {
            (Type::NonNullNamed(_) | Type::NonNullList(_), Value::Null) => {
                self.say(path, format!("null, but {ty} is non-null"));
            }
            (_, Value::Null) => {}
            (Type::Named(name) | Type::NonNullNamed(name), _) => {
                let sets: Vec<&'a SelectionSet> = fields.iter().map(|f| &f.selection_set).collect();
                self.named(name.as_str(), &sets, value, path);
            }
            (Type::List(item) | Type::NonNullList(item), Value::Array(items)) => {
                for (i, element) in items.iter().enumerate() {
                    self.value(item, fields, element, &format!("{path}[{i}]"));
                }
            }
            (Type::List(_) | Type::NonNullList(_), _) => {
                self.say(
                    path,
                    format!("expected a list ({ty}), found {}", kind(value)),
                );
            }
        }
    }

    /// A non-null `value` against the named type `name`, with the selection sets of its
    /// fields when it is a composite type.
    fn named(&mut self, name: &str, sets: &[&'a SelectionSet], value: &Value, path: &str) {
        let schema = self.schema;
        match schema.types.get(name) {
            Some(ExtendedType::Scalar(_)) => self.scalar(name, value, path),
            Some(ExtendedType::Enum(enumeration)) => match value.as_str() {
                Some(s) if enumeration.values.contains_key(s) => {}
                Some(s) => self.say(path, format!("\"{s}\" is not a value of enum {name}")),
                None => self.say(
                    path,
                    format!("expected a string (enum {name}), found {}", kind(value)),
                ),
            },
            Some(ExtendedType::Object(_) | ExtendedType::Interface(_) | ExtendedType::Union(_)) => {
                match value.as_object() {
                    Some(object) => self.object(name, sets, object, path),
                    None => self.say(
                        path,
                        format!("expected an object ({name}), found {}", kind(value)),
                    ),
                }
            }
            Some(ExtendedType::InputObject(_)) | None => {
                self.say(path, format!("{name} is not an output type of the schema"));
            }
        }
    }

    fn scalar(&mut self, name: &str, value: &Value, path: &str) {
        let (fits, expected) = match name {
            "Int" => (
                value.as_i64().is_some_and(|n| i32::try_from(n).is_ok()),
                "an integer in 32 bits",
            ),
            "Float" => (value.is_number(), "a number"),
            "Boolean" => (value.is_boolean(), "a boolean"),
            _ if STRING_SCALARS.contains(&name) => (value.is_string(), "a string"),
            _ => {
                self.say(
                    path,
                    format!("no JSON kind is known for scalar {name}: add it to STRING_SCALARS or the match"),
                );
                return;
            }
        };
        if !fits {
            self.say(
                path,
                format!("expected {expected} ({name}), found {}", kind(value)),
            );
        }
    }

    /// An object answering the selection sets `sets` on the type `parent`.
    fn object(
        &mut self,
        parent: &str,
        sets: &[&'a SelectionSet],
        object: &Map<String, Value>,
        path: &str,
    ) {
        let schema = self.schema;
        let runtime = match schema.types.get(parent) {
            Some(ExtendedType::Interface(_) | ExtendedType::Union(_)) => {
                let typename = sets
                    .iter()
                    .flat_map(|set| &set.selections)
                    .find_map(|selection| match selection {
                        Selection::Field(field) if field.name == "__typename" => {
                            Some(field.response_key().as_str())
                        }
                        _ => None,
                    })
                    .and_then(|key| Some((key, object.get(key)?.as_str()?)));
                match typename {
                    Some((_, name))
                        if schema.get_object(name).is_some() && schema.is_subtype(parent, name) =>
                    {
                        Some(name)
                    }
                    Some((key, name)) => {
                        self.say(
                            &format!("{path}.{key}"),
                            format!("\"{name}\" is not an object type of {parent}"),
                        );
                        return;
                    }
                    None => None,
                }
            }
            _ => Some(parent),
        };

        let mut entries: Vec<Entry<'a>> = Vec::new();
        let mut undecided = false;
        for set in sets {
            self.collect(set, parent, runtime, false, &mut entries, &mut undecided);
        }
        if undecided {
            self.say(
                path,
                format!(
                    "no `__typename` in the answer, so the fragments on {parent} cannot be chosen"
                ),
            );
        }

        for entry in &entries {
            let at = format!("{path}.{}", entry.key);
            match object.get(entry.key) {
                None if entry.required => self.say(&at, "missing".to_owned()),
                None => {}
                Some(value) => {
                    let first = entry.fields[0];
                    if first.name == "__typename"
                        && let (Some(runtime), Some(found)) = (runtime, value.as_str())
                        && found != runtime
                    {
                        self.say(&at, format!("\"{found}\", but the object is a {runtime}"));
                    }
                    self.value(&first.definition.ty, &entry.fields, value, &at);
                }
            }
        }
        // Keys of fragments that could not be chosen are not known to be extra.
        if !undecided {
            for key in object.keys() {
                if !entries.iter().any(|entry| entry.key == key) {
                    self.say(&format!("{path}.{key}"), "not selected".to_owned());
                }
            }
        }
    }

    /// The fields `set` selects on an object of type `runtime` (unknown: only `parent`
    /// is), merged by response key, as the spec's CollectFields does.
    fn collect(
        &mut self,
        set: &'a SelectionSet,
        parent: &str,
        runtime: Option<&str>,
        conditional: bool,
        entries: &mut Vec<Entry<'a>>,
        undecided: &mut bool,
    ) {
        for selection in &set.selections {
            match selection {
                Selection::Field(field) => {
                    let required = !(conditional || is_conditional(&field.directives));
                    let key = field.response_key().as_str();
                    match entries.iter_mut().find(|entry| entry.key == key) {
                        Some(entry) => {
                            entry.fields.push(field);
                            entry.required |= required;
                        }
                        None => entries.push(Entry {
                            key,
                            fields: vec![field],
                            required,
                        }),
                    }
                }
                Selection::InlineFragment(fragment) => {
                    let condition = fragment.type_condition.as_ref().map(|c| c.as_str());
                    match self.applies(condition, parent, runtime) {
                        Some(true) => self.collect(
                            &fragment.selection_set,
                            parent,
                            runtime,
                            conditional || is_conditional(&fragment.directives),
                            entries,
                            undecided,
                        ),
                        Some(false) => {}
                        None => *undecided = true,
                    }
                }
                Selection::FragmentSpread(spread) => {
                    let Some(fragment) = self.document.fragments.get(&spread.fragment_name) else {
                        continue; // a validated document has every fragment it spreads
                    };
                    match self.applies(Some(fragment.selection_set.ty.as_str()), parent, runtime) {
                        Some(true) => self.collect(
                            &fragment.selection_set,
                            parent,
                            runtime,
                            conditional || is_conditional(&spread.directives),
                            entries,
                            undecided,
                        ),
                        Some(false) => {}
                        None => *undecided = true,
                    }
                }
            }
        }
    }

    /// Whether a fragment on `condition` applies to an object of type `runtime` (the spec's
    /// DoesFragmentTypeApply); with the runtime type unknown, only a fragment on `parent`
    /// or on a type `parent` implements is known to apply (`None`: cannot say).
    fn applies(
        &self,
        condition: Option<&str>,
        parent: &str,
        runtime: Option<&str>,
    ) -> Option<bool> {
        let Some(condition) = condition else {
            return Some(true);
        };
        match runtime {
            Some(runtime) => {
                Some(condition == runtime || self.schema.is_subtype(condition, runtime))
            }
            None if condition == parent || self.schema.is_subtype(condition, parent) => Some(true),
            None => None,
        }
    }
}

/// Whether a selection is under `@skip` or `@include` (whatever their argument).
fn is_conditional(directives: &DirectiveList) -> bool {
    directives.get("skip").is_some() || directives.get("include").is_some()
}

/// A value's JSON kind, with the value itself when it is a scalar.
fn kind(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "an object".to_owned(),
        scalar => scalar.to_string(),
    }
}
