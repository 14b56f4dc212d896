//! GitHub's published REST description (`@octokit/openapi`, OpenAPI 3.0.3 with every
//! `$ref` inlined) as JSON Schema validators of response bodies, one per operation and
//! status.
//!
//! OpenAPI 3.0's schema objects are a dialect of JSON Schema: `nullable: true` is the only
//! keyword that changes what validates, and it is translated to a `null` type (or, where
//! the schema has no `type`, to an `anyOf` with `null`). The rest is read as draft 2020-12
//! with `format` asserted; OpenAPI's annotations (`example`, `discriminator`, `x-*`) are
//! unknown keywords there and ignored.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use jsonschema::{Draft, Validator};
use serde_json::{Map, Value};

/// The environment variable `cargo xtask test` sets to the description's path.
const ENV: &str = "MP_GITHUB_OPENAPI";

/// Where `cargo xtask openapi` extracts the description, from the workspace root.
const DEFAULT_PATH: &str = "target/openapi/api.github.com.deref.json";

/// Known defects of the pinned description, each corrected before its schema compiles:
/// the method and path of the operation, the JSON pointer of a schema object in its
/// response schema, and a keyword of that object renamed (`from`, `to`).
///
/// `GET /app/installations` describes an installation's `account` as both a simple user and
/// an enterprise (`allOf`), which no account is (an organization has no enterprise `slug`);
/// every other installation answer in the description has one or the other (`anyOf`), and
/// GitHub sends the same installation object on all of them.
pub const ERRATA: &[(&str, &str, &str, &str, &str)] = &[(
    "GET",
    "/app/installations",
    "/items/properties/account",
    "allOf",
    "anyOf",
)];

/// `schema` of `method path` with [`ERRATA`] corrected.
fn corrected(method: &str, path: &str, schema: &Value) -> Value {
    let mut schema = schema.clone();
    for (m, p, pointer, from, to) in ERRATA {
        if !(m.eq_ignore_ascii_case(method) && *p == path) {
            continue;
        }
        if let Some(Value::Object(object)) = schema.pointer_mut(pointer)
            && let Some(value) = object.remove(*from)
        {
            object.insert((*to).to_owned(), value);
        }
    }
    schema
}

/// The description's path: `MP_GITHUB_OPENAPI`, else the place `cargo xtask openapi` uses.
pub fn description_path() -> PathBuf {
    std::env::var_os(ENV).map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../..")
                .join(DEFAULT_PATH)
        },
        PathBuf::from,
    )
}

/// The loaded description, shared by the tests of this binary.
pub fn description() -> &'static Description {
    static LOADED: LazyLock<Result<Description, String>> = LazyLock::new(Description::load);
    match &*LOADED {
        Ok(description) => description,
        Err(why) => panic!("{why}"),
    }
}

/// The response schemas of GitHub's REST operations.
pub struct Description {
    /// The package's version (`info.version`).
    pub version: String,
    /// `paths` of the description: path template -> method -> operation.
    paths: Map<String, Value>,
    compiled: Mutex<HashMap<(String, String, u16), Arc<Validator>>>,
}

impl Description {
    fn load() -> Result<Self, String> {
        let path = description_path();
        let text = std::fs::read(&path).map_err(|err| {
            format!(
                "GitHub's REST description is missing at {} ({err}): run `cargo xtask openapi` \
                 (`cargo xtask test` runs it first), or set {ENV} to the file \
                 generated/api.github.com.deref.json of the npm package @octokit/openapi",
                path.display()
            )
        })?;
        let mut root: Value = serde_json::from_slice(&text)
            .map_err(|err| format!("{}: not JSON: {err}", path.display()))?;
        let version = root
            .pointer("/info/version")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned();
        let Some(Value::Object(paths)) = root.get_mut("paths").map(Value::take) else {
            return Err(format!("{}: no `paths`", path.display()));
        };
        Ok(Self {
            version,
            paths,
            compiled: Mutex::new(HashMap::new()),
        })
    }

    /// The untranslated response schema of `method path` answering `status`, or why there
    /// is none.
    pub fn response_schema(&self, method: &str, path: &str, status: u16) -> Result<&Value, String> {
        let operation = self
            .paths
            .get(path)
            .and_then(|p| p.get(method.to_ascii_lowercase()))
            .ok_or_else(|| format!("{method} {path} is not in the description"))?;
        let response = operation
            .get("responses")
            .and_then(|r| r.get(status.to_string()))
            .ok_or_else(|| format!("{method} {path} does not describe status {status}"))?;
        response
            .pointer("/content/application~1json/schema")
            .ok_or_else(|| format!("{method} {path} {status} has no JSON body"))
    }

    /// Whether the description lists `status` for `method path` without a JSON body (a
    /// 204, or an error status it describes by its meaning only).
    pub fn describes_no_body(&self, method: &str, path: &str, status: u16) -> bool {
        self.paths
            .get(path)
            .and_then(|p| p.get(method.to_ascii_lowercase()))
            .and_then(|operation| operation.get("responses"))
            .and_then(|r| r.get(status.to_string()))
            .is_some_and(|response| response.pointer("/content/application~1json").is_none())
    }

    /// The validator of `method path`'s answer with `status`, compiled once.
    pub fn validator(
        &self,
        method: &str,
        path: &str,
        status: u16,
    ) -> Result<Arc<Validator>, String> {
        let key = (method.to_owned(), path.to_owned(), status);
        if let Some(found) = self.lock().get(&key) {
            return Ok(Arc::clone(found));
        }
        let schema = corrected(method, path, self.response_schema(method, path, status)?);
        let schema = translate(&schema);
        let validator = jsonschema::options()
            .with_draft(Draft::Draft202012)
            .should_validate_formats(true)
            .build(&schema)
            .map_err(|err| {
                format!("{method} {path} {status}: the schema does not compile: {err}")
            })?;
        let validator = Arc::new(validator);
        self.lock().insert(key, Arc::clone(&validator));
        Ok(validator)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String, u16), Arc<Validator>>> {
        self.compiled.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every way `body` breaks the response schema of `method path` with `status`, as
    /// `<JSON pointer>: <message>` lines (at most `limit`); empty when it validates.
    pub fn problems(
        &self,
        method: &str,
        path: &str,
        status: u16,
        body: &Value,
        limit: usize,
    ) -> Vec<String> {
        let validator = match self.validator(method, path, status) {
            Ok(validator) => validator,
            Err(why) => return vec![why],
        };
        validator
            .iter_errors(body)
            .take(limit)
            .map(|err| {
                let at = err.instance_path().to_string();
                let at = if at.is_empty() { "/".to_owned() } else { at };
                format!("{at}: {}", shorten(&err.to_string()))
            })
            .collect()
    }
}

/// A message cut to a readable length (a `oneOf` failure quotes the whole instance).
fn shorten(message: &str) -> String {
    const MAX: usize = 300;
    if message.len() <= MAX {
        return message.to_owned();
    }
    let mut end = MAX;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &message[..end])
}

/// The keywords whose value is one schema.
const ONE_SCHEMA: &[&str] = &["items", "not", "additionalProperties"];

/// The keywords whose value is a list of schemas.
const SCHEMA_LISTS: &[&str] = &["allOf", "anyOf", "oneOf"];

/// The keywords whose value maps names to schemas.
const SCHEMA_MAPS: &[&str] = &["properties", "patternProperties"];

/// An OpenAPI 3.0 schema object as a JSON Schema (draft 2020-12): `nullable: true` becomes
/// a `null` type (and a `null` member of an `enum`), or an `anyOf` with `null` where the
/// schema has no `type`. Only schema positions are walked, so a property named `nullable`
/// stays a property.
pub fn translate(schema: &Value) -> Value {
    let Value::Object(object) = schema else {
        // `true`, `false`: already JSON Schema.
        return schema.clone();
    };
    let mut out = Map::new();
    let mut nullable = false;
    for (key, value) in object {
        let key = key.as_str();
        let translated = if key == "nullable" {
            nullable = value == &Value::Bool(true);
            continue;
        } else if ONE_SCHEMA.contains(&key) {
            translate(value)
        } else if SCHEMA_LISTS.contains(&key) {
            match value {
                Value::Array(items) => Value::Array(items.iter().map(translate).collect()),
                other => other.clone(),
            }
        } else if SCHEMA_MAPS.contains(&key) {
            match value {
                Value::Object(map) => Value::Object(
                    map.iter()
                        .map(|(name, schema)| (name.clone(), translate(schema)))
                        .collect(),
                ),
                other => other.clone(),
            }
        } else {
            value.clone()
        };
        out.insert(key.to_owned(), translated);
    }
    if !nullable {
        return Value::Object(out);
    }
    if let Some(Value::Array(members)) = out.get_mut("enum")
        && !members.contains(&Value::Null)
    {
        members.push(Value::Null);
    }
    match out.get("type").cloned() {
        Some(Value::String(kind)) => {
            out.insert(
                "type".to_owned(),
                Value::Array(vec![Value::String(kind), Value::String("null".to_owned())]),
            );
            Value::Object(out)
        }
        Some(Value::Array(mut kinds)) => {
            let null = Value::String("null".to_owned());
            if !kinds.contains(&null) {
                kinds.push(null);
            }
            out.insert("type".to_owned(), Value::Array(kinds));
            Value::Object(out)
        }
        _ => serde_json::json!({ "anyOf": [{ "type": "null" }, Value::Object(out)] }),
    }
}
