//! A small structural-schema validator, enough to prove that an object applies under strict
//! field validation: unknown fields, types, enums, required fields, bounds and patterns.

use regex::Regex;
use serde_json::{Value, json};

/// Every violation of `schema` by `value`, as `path: problem` strings.
pub(crate) fn violations(schema: &Value, value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    check(schema, value, "", &mut out);
    out
}

fn check(schema: &Value, value: &Value, path: &str, out: &mut Vec<String>) {
    let flag = |key: &str| schema.get(key) == Some(&json!(true));
    if value.is_null() {
        if !flag("nullable") {
            out.push(format!("{path}: null is not allowed"));
        }
        return;
    }
    if flag("x-kubernetes-int-or-string") {
        match value {
            Value::String(s) => string(schema, s, path, out),
            Value::Number(n) if n.is_i64() => number(schema, value, path, out),
            _ => out.push(format!("{path}: must be an integer or a string")),
        }
        return;
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => object(schema, value, path, out),
        Some("array") => match value.as_array() {
            Some(items) => {
                if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
                    && items.len() as u64 > max
                {
                    out.push(format!("{path}: more than {max} items"));
                }
                if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
                    && (items.len() as u64) < min
                {
                    out.push(format!("{path}: fewer than {min} items"));
                }
                for (i, item) in items.iter().enumerate() {
                    check(&schema["items"], item, &format!("{path}[{i}]"), out);
                }
            }
            None => out.push(format!("{path}: must be an array")),
        },
        Some("string") => match value.as_str() {
            Some(s) => string(schema, s, path, out),
            None => out.push(format!("{path}: must be a string")),
        },
        Some("integer") if value.is_i64() => number(schema, value, path, out),
        Some("number") if value.is_number() => number(schema, value, path, out),
        Some("boolean") if value.is_boolean() => {}
        Some(other) => out.push(format!("{path}: must be {other}, got {value}")),
        None if flag("x-kubernetes-preserve-unknown-fields") => {}
        None => out.push(format!("{path}: schema has no type")),
    }
}

fn object(schema: &Value, value: &Value, path: &str, out: &mut Vec<String>) {
    let Some(fields) = value.as_object() else {
        out.push(format!("{path}: must be an object"));
        return;
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties").filter(|a| a.is_object());
    let free_form = schema.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(true))
        || (properties.is_none() && additional.is_none());
    for required in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = required.as_str().unwrap_or_default();
        if !fields.contains_key(key) {
            out.push(format!("{}: required", join(path, key)));
        }
    }
    for (key, child) in fields {
        let child_path = join(path, key);
        match (properties.and_then(|p| p.get(key)), additional) {
            (Some(child_schema), _) | (None, Some(child_schema)) => {
                check(child_schema, child, &child_path, out)
            }
            (None, None) if free_form => {}
            (None, None) => out.push(format!("{child_path}: unknown field")),
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn string(schema: &Value, s: &str, path: &str, out: &mut Vec<String>) {
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(&json!(s))
    {
        out.push(format!("{path}: {s:?} is not one of {allowed:?}"));
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str)
        && !Regex::new(pattern)
            .expect("schema pattern compiles")
            .is_match(s)
    {
        out.push(format!("{path}: {s:?} does not match {pattern}"));
    }
    if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
        && s.chars().count() as u64 > max
    {
        out.push(format!("{path}: longer than {max}"));
    }
}

fn number(schema: &Value, value: &Value, path: &str, out: &mut Vec<String>) {
    let n = value.as_f64().unwrap_or_default();
    if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
        && n < min
    {
        out.push(format!("{path}: {n} is less than {min}"));
    }
    if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
        && n > max
    {
        out.push(format!("{path}: {n} is more than {max}"));
    }
}

#[test]
fn catches_unknown_fields_types_and_bounds() {
    let schema = json!({
        "type": "object",
        "required": ["a"],
        "properties": {
            "a": {"type": "integer", "minimum": 1.0},
            "b": {"type": "array", "maxItems": 1, "items": {"type": "string", "enum": ["x"]}},
            "c": {"x-kubernetes-int-or-string": true, "pattern": "^[0-9]+%$"}
        }
    });
    assert!(violations(&schema, &json!({"a": 1, "b": ["x"], "c": 5})).is_empty());
    assert_eq!(
        violations(&schema, &json!({"b": ["y", "x"], "c": "5", "d": 1})),
        [
            "a: required",
            "b: more than 1 items",
            "b[0]: \"y\" is not one of [String(\"x\")]",
            "c: \"5\" does not match ^[0-9]+%$",
            "d: unknown field",
        ]
    );
}
