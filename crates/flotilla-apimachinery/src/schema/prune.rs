//! Structural pruning, as apiextensions-apiserver's `structuralpruning.PruneWithOptions`
//! followed by `PruneNonNullableNullsWithoutDefaults` (both run when a custom resource is
//! decoded).

use serde_json::{Map, Value};

use super::{flag, properties};

/// Removes from `obj` every field its schema does not declare and returns their paths, sorted,
/// in kube's strict-decoding form without a leading dot: `spec.foo`, `spec.stages[0].bar`
/// (values under `additionalProperties` are dotted too: `spec.labels.x.bar`). The server turns
/// each into `unknown field "<path>"` (strict: 400 `strict decoding error: ...`; warn: one
/// warning each; ignore: nothing).
///
/// Kept regardless: the root's `apiVersion`/`kind` (strings) and `metadata` (an object), the
/// same fields of `x-kubernetes-embedded-resource` objects, everything under
/// `x-kubernetes-preserve-unknown-fields: true` (whose declared properties are still pruned
/// inside), and any key allowed by `additionalProperties` (`true` keeps values as they are).
/// Afterwards, `null`s of non-nullable properties without a default are dropped silently.
/// A schema that is not an object (no schema) keeps only `apiVersion`, `kind` and `metadata`.
pub fn prune(schema: &Value, obj: &mut Value) -> Vec<String> {
    let mut walk = Walk::default();
    // Like kube, a resource without a schema still keeps its apiVersion, kind and metadata.
    let empty = Map::new();
    let root = match Node::of(Some(schema)) {
        Node::Missing => Node::Schema(&empty),
        node => node,
    };
    walk.prune(root, obj, true);
    walk.removed.sort();
    drop_nulls(schema, obj);
    walk.removed
}

/// A schema position: none (everything inside is unknown), anything goes, or a schema.
#[derive(Clone, Copy)]
enum Node<'a> {
    Missing,
    Anything,
    Schema(&'a Map<String, Value>),
}

impl<'a> Node<'a> {
    fn of(v: Option<&'a Value>) -> Node<'a> {
        match v {
            Some(Value::Object(s)) => Node::Schema(s),
            Some(Value::Bool(true)) => Node::Anything,
            _ => Node::Missing,
        }
    }

    /// Where a key not in `properties` goes, if `additionalProperties` allows it.
    fn additional(s: &'a Map<String, Value>) -> Option<Node<'a>> {
        match s.get("additionalProperties") {
            Some(Value::Object(a)) => Some(Node::Schema(a)),
            Some(Value::Bool(true)) => Some(Node::Anything),
            _ => None,
        }
    }

    /// The schema for key `k` of an object at this node, if the key is allowed.
    fn child(s: &'a Map<String, Value>, k: &str) -> Option<Node<'a>> {
        match properties(s).and_then(|p| p.get(k)) {
            Some(p) => Some(Node::of(Some(p))),
            None => Node::additional(s),
        }
    }
}

/// The walk's state: the current path (`spec.stages[0]`) and the removed paths so far.
#[derive(Default)]
struct Walk {
    path: String,
    removed: Vec<String>,
}

impl Walk {
    fn record(&mut self, key: &str) {
        let mark = self.push_key(key);
        self.removed.push(self.path.clone());
        self.path.truncate(mark);
    }

    fn push_key(&mut self, key: &str) -> usize {
        let mark = self.path.len();
        if mark > 0 {
            self.path.push('.');
        }
        self.path.push_str(key);
        mark
    }

    fn with_key(&mut self, key: &str, f: impl FnOnce(&mut Self)) {
        let mark = self.push_key(key);
        f(self);
        self.path.truncate(mark);
    }

    fn with_index(&mut self, i: usize, f: impl FnOnce(&mut Self)) {
        let mark = self.path.len();
        self.path.push('[');
        self.path.push_str(&i.to_string());
        self.path.push(']');
        f(self);
        self.path.truncate(mark);
    }

    fn prune(&mut self, node: Node<'_>, x: &mut Value, resource_root: bool) {
        let s = match node {
            Node::Anything => return,
            Node::Schema(s) if flag(s, "x-kubernetes-preserve-unknown-fields") => {
                return self.skip(s, x, resource_root);
            }
            Node::Schema(s) => Some(s),
            Node::Missing => None,
        };
        match x {
            Value::Object(m) => {
                let Some(s) = s else {
                    for k in m.keys() {
                        self.record(k);
                    }
                    m.clear();
                    return;
                };
                let embedded = resource_root || flag(s, "x-kubernetes-embedded-resource");
                m.retain(|k, v| {
                    if embedded && is_meta_field(k, v) {
                        return true;
                    }
                    match Node::child(s, k) {
                        Some(child) => {
                            self.with_key(k, |w| w.prune(child, v, false));
                            true
                        }
                        None => {
                            self.record(k);
                            false
                        }
                    }
                });
            }
            Value::Array(items) => {
                let item_node = s.map_or(Node::Missing, |s| Node::of(s.get("items")));
                for (i, item) in items.iter_mut().enumerate() {
                    self.with_index(i, |w| w.prune(item_node, item, false));
                }
            }
            _ => {}
        }
    }

    /// Under `x-kubernetes-preserve-unknown-fields`: unknown keys stay, known ones are pruned
    /// by their own schemas.
    fn skip(&mut self, s: &Map<String, Value>, x: &mut Value, resource_root: bool) {
        match x {
            Value::Object(m) => {
                let embedded = resource_root || flag(s, "x-kubernetes-embedded-resource");
                for (k, v) in m.iter_mut() {
                    if embedded && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                        continue;
                    }
                    if let Some(child) = Node::child(s, k) {
                        self.with_key(k, |w| w.prune(child, v, false));
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item_schema) = s.get("items").and_then(Value::as_object) {
                    for (i, item) in items.iter_mut().enumerate() {
                        self.with_index(i, |w| w.skip(item_schema, item, false));
                    }
                }
            }
            _ => {}
        }
    }
}

/// `apiVersion`/`kind` strings and a `metadata` object, kept on resources.
fn is_meta_field(k: &str, v: &Value) -> bool {
    match k {
        "apiVersion" | "kind" => v.is_string(),
        "metadata" => v.is_object(),
        _ => false,
    }
}

/// `PruneNonNullableNullsWithoutDefaults`.
fn drop_nulls(schema: &Value, x: &mut Value) {
    let Some(s) = schema.as_object() else {
        return;
    };
    match x {
        Value::Object(m) => {
            let extra = s.get("additionalProperties").filter(|a| a.is_object());
            m.retain(|k, v| {
                let Some(prop) = properties(s).and_then(|p| p.get(k)).or(extra) else {
                    return true;
                };
                let droppable = v.is_null()
                    && prop.get("default").is_none()
                    && !prop.as_object().is_some_and(|p| flag(p, "nullable"));
                if !droppable {
                    drop_nulls(prop, v);
                }
                !droppable
            });
        }
        Value::Array(items) => {
            if let Some(item_schema) = s.get("items") {
                for item in items {
                    drop_nulls(item_schema, item);
                }
            }
        }
        _ => {}
    }
}
