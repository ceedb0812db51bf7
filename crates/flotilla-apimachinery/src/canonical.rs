//! Canonical JSON: the same value always gives the same text, whatever order its object keys
//! were inserted in (`serde_json` keeps insertion order in this workspace). Hashes of objects
//! (resource snapshots, policy snapshots, managed-field paths, applied manifests) are taken over
//! this text, so an object read back from the API server hashes as it did when written.

use serde_json::Value;

/// `value` with every object's keys sorted.
pub fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(object) => {
            let mut entries: Vec<(&String, &Value)> = object.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(name, value)| (name.clone(), sorted(value)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        scalar => scalar.clone(),
    }
}

/// The canonical JSON text of `value`: compact, object keys sorted.
pub fn to_string(value: &Value) -> String {
    sorted(value).to_string()
}

/// A short stable hash of `value`: 64-bit FNV-1a of its canonical text, as 16 hex digits.
/// For hashes only Flotilla reads back (annotations comparing an object with what it was made
/// from); not for anything adversarial.
pub fn fnv_hash(value: &Value) -> String {
    let hash = to_string(value)
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn key_order_does_not_change_the_text() {
        let a = json!({"b": 1, "a": {"y": [ {"q": 1, "p": 2} ], "x": null}});
        let b = json!({"a": {"x": null, "y": [ {"p": 2, "q": 1} ]}, "b": 1});
        assert_eq!(to_string(&a), to_string(&b));
        assert_eq!(
            to_string(&a),
            r#"{"a":{"x":null,"y":[{"p":2,"q":1}]},"b":1}"#
        );
    }

    #[test]
    fn array_order_still_matters() {
        assert_ne!(to_string(&json!([1, 2])), to_string(&json!([2, 1])));
    }
}
