//! Structural defaulting, as apiextensions-apiserver's `structuraldefaulting.Default`.

use serde_json::Value;

use super::{flag, properties};

/// Applies the schema's `default`s to `obj` in place: an absent property (or a `null` one whose
/// schema is not `nullable`) gets a deep copy of its default; the walk then descends into
/// present properties, `additionalProperties` values and array items, so defaults nested in
/// defaults apply too. Nullable `null`s are left alone.
pub fn apply_defaults(schema: &Value, obj: &mut Value) {
    let Some(s) = schema.as_object() else {
        return;
    };
    match obj {
        Value::Object(m) => {
            let props = properties(s);
            for (k, prop) in props.into_iter().flatten() {
                let Some(default) = prop.get("default") else {
                    continue;
                };
                if m.get(k).is_none_or(|v| non_nullable_null(v, prop)) {
                    m.insert(k.clone(), default.clone());
                }
            }
            let extra = s.get("additionalProperties").filter(|a| a.is_object());
            for (k, v) in m.iter_mut() {
                if let Some(prop) = props.and_then(|p| p.get(k)) {
                    apply_defaults(prop, v);
                } else if let Some(extra) = extra {
                    replace_null(extra, v);
                    apply_defaults(extra, v);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = s.get("items").filter(|i| i.is_object()) {
                for item in items {
                    replace_null(item_schema, item);
                    apply_defaults(item_schema, item);
                }
            }
        }
        _ => {}
    }
}

/// `null` where the schema is not nullable.
fn non_nullable_null(v: &Value, schema: &Value) -> bool {
    v.is_null() && !schema.as_object().is_some_and(|s| flag(s, "nullable"))
}

/// Replaces a non-nullable `null` by the schema's default, when it has one.
fn replace_null(schema: &Value, v: &mut Value) {
    if non_nullable_null(v, schema)
        && let Some(default) = schema.get("default")
    {
        *v = default.clone();
    }
}
