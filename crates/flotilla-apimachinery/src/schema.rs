//! Structural OpenAPI v3 schemas, as CustomResourceDefinitions carry them in
//! `openAPIV3Schema`: validation, defaulting, pruning and duplicate-field detection, each a pure
//! function over `serde_json::Value` reproducing apiextensions-apiserver's behaviour and
//! messages.
//!
//! The server's write path, in kube-apiserver's order:
//! 1. [`find_duplicate_fields`] on the raw body (strict field validation);
//! 2. decode, then [`prune`] (unknown fields: strict → 400, warn → warnings, ignore → silent);
//! 3. [`apply_defaults`];
//! 4. [`validate`] → 422 Invalid with the returned causes.
//!
//! Schemas must be self-contained (no `$ref`), as CRD schemas are. The root object's
//! `metadata` is only type-checked; the server validates metadata itself.

mod default;
mod duplicates;
mod format;
pub(crate) mod gofmt;
mod prune;
mod structural;
mod unchanged;
mod validate;

pub use default::apply_defaults;
pub use duplicates::find_duplicate_fields;
pub use prune::prune;
pub use validate::{validate, validate_update};

use serde_json::{Map, Value};

/// A schema node's `properties`, when it has any.
fn properties(s: &Map<String, Value>) -> Option<&Map<String, Value>> {
    s.get("properties").and_then(Value::as_object)
}

/// Whether a boolean keyword (`nullable`, `x-kubernetes-...`) is `true`.
fn flag(s: &Map<String, Value>, name: &str) -> bool {
    s.get(name).and_then(Value::as_bool).unwrap_or(false)
}

/// A field path under construction, printed as Kubernetes prints `field.Path`:
/// `spec.stages[0].name`, map entries as `spec.x[key]`. Appends return a mark to restore.
#[derive(Default)]
struct FieldPath {
    text: String,
}

impl FieldPath {
    /// Appends `.name` (or `name` at the root).
    fn child(&mut self, name: &str) -> usize {
        let mark = self.text.len();
        if !self.text.is_empty() {
            self.text.push('.');
        }
        self.text.push_str(name);
        mark
    }

    /// Appends `[i]`.
    fn index(&mut self, i: usize) -> usize {
        let mark = self.text.len();
        self.text.push('[');
        self.text.push_str(&i.to_string());
        self.text.push(']');
        mark
    }

    /// Appends `[key]`.
    fn key(&mut self, key: &str) -> usize {
        let mark = self.text.len();
        self.text.push('[');
        self.text.push_str(key);
        self.text.push(']');
        mark
    }

    /// Goes back to a mark returned by an append.
    fn restore(&mut self, mark: usize) {
        self.text.truncate(mark);
    }

    /// The path as it appears inside kube-openapi messages (empty at the root).
    fn as_str(&self) -> &str {
        &self.text
    }

    /// The path as a `FieldError.field` (`<nil>` at the root, as Go prints a nil path).
    fn field(&self) -> String {
        if self.text.is_empty() {
            "<nil>".to_string()
        } else {
            self.text.clone()
        }
    }
}

#[cfg(test)]
mod tests;
