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
    let mut result = match target {
        Value::Object(target) => target.clone(),
        _ => Map::new(),
    };
    for (key, value) in patch {
        if value.is_null() {
            result.shift_remove(key);
        } else {
            let merged = merge_patch(result.get(key).unwrap_or(&Value::Null), value);
            result.insert(key.clone(), merged);
        }
    }
    Value::Object(result)
}
