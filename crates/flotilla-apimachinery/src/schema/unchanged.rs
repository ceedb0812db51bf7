//! The parts of an update left exactly as stored, found in one walk over the object: what
//! validation ratcheting skips. Values correlate by property name, map key and list index.
//!
//! Asking "is this value the stored one?" at every node of a walk would compare each changed
//! node's subtree again at every level above the change (a run's status that changes ten of
//! ten thousand members would be compared a dozen times over); one bottom-up walk compares
//! every node once and remembers the largest unchanged subtrees by address.

use std::collections::HashSet;
use std::marker::PhantomData;

use serde_json::{Map, Value};

/// The largest subtrees of an object that are exactly as stored, by address (the object is
/// borrowed for as long as this lives, so the addresses stay its nodes').
#[derive(Default)]
pub(crate) struct Unchanged<'a> {
    nodes: HashSet<usize>,
    object: PhantomData<&'a Value>,
}

impl<'a> Unchanged<'a> {
    /// Nothing unchanged: a create, or an update validated whole.
    pub(crate) fn none() -> Unchanged<'a> {
        Unchanged::default()
    }

    /// The subtrees of `new` equal to what `old` has at the same place.
    pub(crate) fn between(new: &'a Value, old: &Value) -> Unchanged<'a> {
        let mut found = Unchanged::default();
        if found.walk(new, old) {
            found.nodes.insert(address(new));
        }
        found
    }

    /// Whether `value`, a node of the object, is exactly as stored.
    pub(crate) fn contains(&self, value: &Value) -> bool {
        !self.nodes.is_empty() && self.nodes.contains(&address(value))
    }

    /// Whether `new` equals `old`; when it does not, records its children that do.
    fn walk(&mut self, new: &'a Value, old: &Value) -> bool {
        match (new, old) {
            (Value::Object(new), Value::Object(old)) => self.objects(new, old),
            (Value::Array(new), Value::Array(old)) => {
                let mut equal = Vec::new();
                let mut all = new.len() == old.len();
                for (new, old) in new.iter().zip(old) {
                    if self.walk(new, old) {
                        equal.push(new);
                    } else {
                        all = false;
                    }
                }
                self.unless_all(all, equal)
            }
            (new, old) => new == old,
        }
    }

    /// [`Unchanged::walk`] of two objects: in step while their keys come in the same order (as
    /// they do when both were serialized alike), by lookup otherwise.
    fn objects(&mut self, new: &'a Map<String, Value>, old: &Map<String, Value>) -> bool {
        let mut equal = Vec::new();
        let mut all = new.len() == old.len();
        let mut in_step = old.iter();
        for (key, value) in new {
            let stored = match in_step.next() {
                Some((old_key, old_value)) if old_key == key => Some(old_value),
                _ => old.get(key),
            };
            match stored {
                Some(stored) if self.walk(value, stored) => equal.push(value),
                _ => all = false,
            }
        }
        self.unless_all(all, equal)
    }

    /// Records the `equal` children of a node unless `all` its children are equal (then the
    /// node itself is recorded by its parent, or is the root).
    fn unless_all(&mut self, all: bool, equal: Vec<&'a Value>) -> bool {
        if !all {
            self.nodes.extend(equal.into_iter().map(address));
        }
        all
    }
}

/// A node's address, its identity while the object is borrowed.
fn address(value: &Value) -> usize {
    std::ptr::from_ref(value) as usize
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn finds_the_largest_unchanged_subtrees() {
        let old =
            json!({"spec": {"a": 1, "b": [1, 2, {"c": 3}]}, "status": {"x": [{"n": 1}, {"n": 2}]}});
        let new =
            json!({"status": {"x": [{"n": 1}, {"n": 3}]}, "spec": {"a": 1, "b": [1, 2, {"c": 3}]}});
        let unchanged = Unchanged::between(&new, &old);
        assert!(
            unchanged.contains(&new["spec"]),
            "keys out of order still match"
        );
        assert!(unchanged.contains(&new["status"]["x"][0]));
        assert!(!unchanged.contains(&new["status"]["x"][1]));
        assert!(!unchanged.contains(&new["status"]));
        assert!(!unchanged.contains(&new));
        assert!(
            !unchanged.contains(&new["spec"]["a"]),
            "only the largest unchanged subtrees"
        );
        let same = Unchanged::between(&old, &old.clone());
        assert!(same.contains(&old));
        assert!(!Unchanged::none().contains(&old));
        let longer = json!({"spec": {"a": 1, "b": [1, 2, {"c": 3}], "d": 0}});
        let unchanged = Unchanged::between(&longer, &old);
        assert!(unchanged.contains(&longer["spec"]["b"]));
        assert!(!unchanged.contains(&longer["spec"]));
    }
}
