//! RFC 7386 JSON merge patch (`application/merge-patch+json`).

use serde_json::{Map, Value};

/// Applies an RFC 7386 JSON merge patch to `target` and returns the result.
///
/// `null` deletes a key, objects merge recursively, and every other value (lists included)
/// replaces the target's value. A patch that is not an object replaces the whole target.
/// Unlike a naive implementation, deleting a key keeps the order of the remaining keys, so
/// stored objects do not shuffle their fields on every patch.
pub fn merge_patch(target: &Value, patch: &Value) -> Value {
    let Value::Object(patch) = patch else {
        return patch.clone();
    };
    let empty = Map::new();
    let target = match target {
        Value::Object(target) => target,
        _ => &empty,
    };
    // Built in one walk: the target's keys in their order (each copied once, or merged with
    // its patch without copying the value it replaces), then the patch's new keys in the
    // patch's order. Heartbeats and status writes patch deep inside large objects, and copying
    // the target first, then each patched subtree again, was most of a patch's cost.
    let mut result = Map::new();
    for (key, value) in target {
        match patch.get(key) {
            None => {
                result.insert(key.clone(), value.clone());
            }
            Some(Value::Null) => {}
            Some(change) => {
                result.insert(key.clone(), merge_patch(value, change));
            }
        }
    }
    for (key, change) in patch {
        if !change.is_null() && !target.contains_key(key) {
            result.insert(key.clone(), merge_patch(&Value::Null, change));
        }
    }
    Value::Object(result)
}
