//! The checks apiextensions-apiserver runs beside schema validation: embedded resources
//! (`x-kubernetes-embedded-resource` needs `apiVersion` and `kind`) and the uniqueness
//! invariants of `x-kubernetes-list-type: set|map`.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::gofmt::go_json;
use super::unchanged::Unchanged;
use super::{FieldPath, flag, properties};
use crate::{FieldError, FieldErrorType};

/// Walks `obj` along the structural schema, but not into what is `unchanged` (as stored, for
/// an update); returns (embedded-resource errors, list errors). A changed list is still
/// checked whole.
pub(super) fn check(
    schema: &Value,
    obj: &Value,
    unchanged: &Unchanged<'_>,
) -> (Vec<FieldError>, Vec<FieldError>) {
    let mut walk = Walk {
        unchanged,
        path: FieldPath::default(),
        embedded: Vec::new(),
        lists: Vec::new(),
    };
    walk.node(schema, obj);
    (walk.embedded, walk.lists)
}

struct Walk<'u> {
    unchanged: &'u Unchanged<'u>,
    path: FieldPath,
    embedded: Vec<FieldError>,
    lists: Vec<FieldError>,
}

impl Walk<'_> {
    fn node(&mut self, schema: &Value, v: &Value) {
        let Some(s) = schema.as_object() else {
            return;
        };
        match v {
            Value::Object(m) => {
                if flag(s, "x-kubernetes-embedded-resource") {
                    self.embedded_resource(m);
                }
                let props = properties(s);
                let extra = s.get("additionalProperties").filter(|a| a.is_object());
                for (k, child) in m {
                    if self.unchanged.contains(child) {
                        continue;
                    }
                    if let Some(p) = props.and_then(|p| p.get(k)) {
                        let mark = self.path.child(k);
                        self.node(p, child);
                        self.path.restore(mark);
                    } else if let Some(extra) = extra {
                        let mark = self.path.key(k);
                        self.node(extra, child);
                        self.path.restore(mark);
                    }
                }
            }
            Value::Array(items) => {
                match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
                    Some("set") => {
                        for i in non_unique(items.iter().map(Key::of)) {
                            self.duplicate(i, items[i].clone());
                        }
                    }
                    Some("map") => self.list_map(s, items),
                    _ => {}
                }
                if let Some(item_schema) = s.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        if self.unchanged.contains(item) {
                            continue;
                        }
                        let mark = self.path.index(i);
                        self.node(item_schema, item);
                        self.path.restore(mark);
                    }
                }
            }
            _ => {}
        }
    }

    fn at(&mut self, child: &str) -> String {
        let mark = self.path.child(child);
        let field = self.path.field();
        self.path.restore(mark);
        field
    }

    /// `objectmeta.validateEmbeddedResource` (metadata itself is left to the server).
    fn embedded_resource(&mut self, m: &Map<String, Value>) {
        let api_version = self.at("apiVersion");
        let kind = self.at("kind");
        match m.get("apiVersion") {
            None => self.embedded.push(FieldError::required(api_version, "")),
            Some(Value::String(s)) if s.is_empty() => self.embedded.push(FieldError::invalid(
                api_version,
                Value::String(String::new()),
                "must not be empty",
            )),
            Some(Value::String(s)) if s != "/" && s.matches('/').count() > 1 => {
                self.embedded.push(FieldError::invalid(
                    api_version,
                    Value::String(s.clone()),
                    format!("unexpected GroupVersion string: {s}"),
                ))
            }
            Some(Value::String(_)) => {}
            Some(other) => self.embedded.push(FieldError::invalid(
                api_version,
                other.clone(),
                "must be a string",
            )),
        }
        match m.get("kind") {
            None => self.embedded.push(FieldError::required(kind, "")),
            Some(Value::String(s)) if s.is_empty() => self.embedded.push(FieldError::invalid(
                kind,
                Value::String(String::new()),
                "must not be empty",
            )),
            Some(Value::String(s)) => {
                let errs = dns1035_label_errors(&s.to_lowercase());
                if !errs.is_empty() {
                    self.embedded.push(FieldError::invalid(
                        kind,
                        Value::String(s.clone()),
                        format!(
                            "may have mixed case, but should otherwise match: {}",
                            errs.join(",")
                        ),
                    ));
                }
            }
            Some(other) => {
                self.embedded
                    .push(FieldError::invalid(kind, other.clone(), "must be a string"))
            }
        }
    }

    fn duplicate(&mut self, i: usize, value: Value) {
        let mark = self.path.index(i);
        self.lists.push(FieldError::new(
            FieldErrorType::Duplicate,
            self.path.field(),
            Some(value),
            "",
        ));
        self.path.restore(mark);
    }

    /// `x-kubernetes-list-type: map`: items must be objects with unique key tuples.
    fn list_map(&mut self, s: &Map<String, Value>, items: &[Value]) {
        if let Some(i) = items.iter().position(|x| !x.is_null() && !x.is_object()) {
            let mark = self.path.index(i);
            self.lists.push(FieldError::invalid(
                self.path.field(),
                items[i].clone(),
                "must be an object for an array of list-type map",
            ));
            self.path.restore(mark);
            return;
        }
        let key_names: Vec<&str> = s
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .map(|ks| ks.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let tuples: Vec<Map<String, Value>> = items
            .iter()
            .map(|x| {
                key_names
                    .iter()
                    .filter_map(|k| Some(((*k).to_string(), x.get(*k)?.clone())))
                    .collect::<Map<_, _>>()
            })
            .collect();
        let keys: Vec<Key> = if let [single] = key_names.as_slice() {
            items
                .iter()
                .map(|x| x.get(*single).map_or(Key::Unspecified, Key::of))
                .collect()
        } else {
            tuples
                .iter()
                .map(|t| Key::Compound(go_json(&Value::Object(t.clone()))))
                .collect()
        };
        for i in non_unique(keys.into_iter()) {
            self.duplicate(i, Value::Object(tuples[i].clone()));
        }
    }
}

/// A list element (or key) as Go compares it: scalars by type and value, compounds by JSON.
#[derive(PartialEq, Eq, Hash)]
enum Key {
    Unspecified,
    Null,
    Bool(bool),
    Int(i64),
    Float(u64),
    Str(String),
    Compound(String),
}

impl Key {
    fn of(v: &Value) -> Key {
        match v {
            Value::Null => Key::Null,
            Value::Bool(b) => Key::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Key::Int(i),
                None => Key::Float(n.as_f64().unwrap_or(0.0).to_bits()),
            },
            Value::String(s) => Key::Str(s.clone()),
            other => Key::Compound(go_json(other)),
        }
    }
}

/// Indices of the second occurrence of each repeated key (kube reports one per value).
fn non_unique(keys: impl Iterator<Item = Key>) -> Vec<usize> {
    let mut seen: HashMap<Key, u32> = HashMap::new();
    let mut out = Vec::new();
    for (i, k) in keys.enumerate() {
        let times = seen.entry(k).or_insert(0);
        *times += 1;
        if *times == 2 {
            out.push(i);
        }
    }
    out
}

/// `validation.IsDNS1035Label`.
fn dns1035_label_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    let b = value.as_bytes();
    let ok = match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_lowercase()
                && (l.is_ascii_lowercase() || l.is_ascii_digit())
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        }
        _ => false,
    };
    if !ok {
        errs.push("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".to_string());
    }
    errs
}
