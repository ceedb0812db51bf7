//! Field paths in the `FieldsV1` vocabulary: `f:<field>`, `k:<key object>`, `v:<value>`,
//! `i:<index>`.

use std::fmt;

use serde_json::{Map, Value};

use super::ManagedFieldsError;

/// One step of a field path, stored in its canonical `FieldsV1` spelling so that equal steps
/// compare equal and sets sort deterministically.
///
/// - `f:spec` — a field of an object;
/// - `k:{"name":"nginx"}` — the element of an associative list with these key fields (keys
///   sorted by name);
/// - `v:"foo"` — the element of a set list with this value;
/// - `i:3` — a list element by position (only ever read from other writers' field sets).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PathElement(String);

/// A decoded [`PathElement`].
enum Step {
    Field(String),
    Key(Map<String, Value>),
    Value(Value),
    Index(usize),
}

impl PathElement {
    /// The step into field `name` of an object.
    pub(crate) fn field(name: &str) -> Self {
        Self(format!("f:{name}"))
    }

    /// The step to the associative-list element identified by `fields` (name, value) pairs.
    pub(crate) fn key<'a>(fields: impl IntoIterator<Item = (&'a str, &'a Value)>) -> Self {
        let mut fields: Vec<(&str, &Value)> = fields.into_iter().collect();
        fields.sort_by(|a, b| a.0.cmp(b.0));
        let object: Map<String, Value> = fields
            .into_iter()
            .map(|(name, value)| (name.to_owned(), crate::canonical::sorted(value)))
            .collect();
        Self(format!("k:{}", Value::Object(object)))
    }

    /// The step to the set-list element equal to `value`.
    pub(crate) fn value(value: &Value) -> Self {
        Self(format!("v:{}", crate::canonical::to_string(value)))
    }

    /// Parses a `FieldsV1` key (anything but `.`), canonicalising JSON payloads.
    pub fn parse(text: &str) -> Result<Self, ManagedFieldsError> {
        let invalid = |message: &str| ManagedFieldsError::InvalidFieldsV1 {
            element: text.to_owned(),
            message: message.to_owned(),
        };
        let (prefix, rest) = text
            .split_once(':')
            .ok_or_else(|| invalid("expected a prefix f:, k:, v: or i:"))?;
        match prefix {
            "f" => Ok(Self::field(rest)),
            "k" => match serde_json::from_str(rest) {
                Ok(Value::Object(key)) if !key.is_empty() => Ok(Self::key(
                    key.iter().map(|(name, value)| (name.as_str(), value)),
                )),
                _ => Err(invalid("a key must be a non-empty JSON object")),
            },
            "v" => serde_json::from_str(rest)
                .map(|value: Value| Self::value(&value))
                .map_err(|_| invalid("a value must be JSON")),
            "i" => rest
                .parse::<usize>()
                .map(|index| Self(format!("i:{index}")))
                .map_err(|_| invalid("an index must be a non-negative integer")),
            _ => Err(invalid("expected a prefix f:, k:, v: or i:")),
        }
    }

    /// The canonical `FieldsV1` spelling, e.g. `f:spec` or `k:{"name":"nginx"}`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The field name, if this is an `f:` step.
    pub(crate) fn field_name(&self) -> Option<&str> {
        self.0.strip_prefix("f:")
    }

    /// The position, if this is an `i:` step.
    pub(crate) fn index(&self) -> Option<usize> {
        self.0
            .strip_prefix("i:")
            .and_then(|index| index.parse().ok())
    }

    fn decode(&self) -> Step {
        let (prefix, rest) = self.0.split_at(2);
        match prefix {
            "k:" => match serde_json::from_str(rest) {
                Ok(Value::Object(key)) => Step::Key(key),
                _ => Step::Field(self.0.clone()),
            },
            "v:" => Step::Value(serde_json::from_str(rest).unwrap_or(Value::Null)),
            "i:" => Step::Index(rest.parse().unwrap_or_default()),
            _ => Step::Field(rest.to_owned()),
        }
    }
}

/// Renders like structured-merge-diff: `.spec`, `[name="nginx"]`, `[="foo"]`, `[3]`.
impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.decode() {
            Step::Field(name) => write!(f, ".{name}"),
            Step::Key(key) => {
                let fields: Vec<String> = key
                    .iter()
                    .map(|(name, value)| format!("{name}={value}"))
                    .collect();
                write!(f, "[{}]", fields.join(","))
            }
            Step::Value(value) => write!(f, "[={value}]"),
            Step::Index(index) => write!(f, "[{index}]"),
        }
    }
}

/// A path from the object root to one member of a [`FieldSet`](super::FieldSet).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FieldPath(pub(crate) Vec<PathElement>);

impl FieldPath {
    /// The steps of the path, from the root.
    pub fn elements(&self) -> &[PathElement] {
        &self.0
    }
}

/// Renders like kube-apiserver's conflict messages: `.spec.containers[name="nginx"].image`.
impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|element| element.fmt(f))
    }
}
