//! Value validation against an OpenAPI v3 schema with kube-openapi's semantics (the validator
//! apiextensions-apiserver runs on custom resources), plus the structural checks apiextensions
//! adds (embedded resources, list-type uniqueness). Messages are kube-apiserver's.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use regex::Regex;
use serde_json::{Map, Number, Value};

use super::gofmt::{format_float_v, go_json, go_quote};
use super::unchanged::Unchanged;
use super::{FieldPath, flag, format, properties, structural};
use crate::{FieldError, FieldErrorType};

/// Validates `obj` against `schema` (a CRD `openAPIV3Schema`) and returns every violation, in
/// kube-apiserver's order: schema errors first, then embedded-resource errors, then
/// `x-kubernetes-list-type` duplicates. The root `metadata` is only type-checked.
///
/// Paths follow Kubernetes: `spec.stages[0].name`; values of `additionalProperties` maps are
/// `spec.x[key]`. Errors that kube attaches to no field (`anyOf`, `oneOf`, `allOf`, `not`
/// failures) have the field `<nil>`, as kube-apiserver prints them.
pub fn validate(schema: &Value, obj: &Value) -> Vec<FieldError> {
    validate_at(schema, obj, None)
}

/// Validates `obj`, an update of the stored object `old`, as [`validate`] does, except that a
/// value exactly equal to the stored one at the same place is not walked again: what was
/// stored was valid when written, and Kubernetes' validation ratcheting accepts unchanged
/// values even under a schema made stricter since. Places correlate by property name, map
/// key and list index (every element of a list has the same schema, so an element equal to
/// the stored one at its index is as valid as that one was). A status write leaves the spec
/// as stored, and a run's status write that changes ten of ten thousand members is checked
/// for those ten; the checks of a changed node itself (required fields, bounds, list
/// uniqueness) still see all of it.
pub fn validate_update(schema: &Value, obj: &Value, old: &Value) -> Vec<FieldError> {
    validate_at(schema, obj, Some(old))
}

/// [`validate`], skipping what `old` (if any) has unchanged.
fn validate_at(schema: &Value, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let unchanged = match old {
        Some(old) => Unchanged::between(obj, old),
        None => Unchanged::none(),
    };
    let mut out = Vec::new();
    let mut path = FieldPath::default();
    let root = Place {
        root: true,
        unchanged: &unchanged,
    };
    node(schema, obj, &mut path, root, &mut out);
    let (embedded, lists) = structural::check(schema, obj, &unchanged);
    out.extend(embedded);
    out.extend(lists);
    out
}

/// Where a value is: the resource itself or below it, and what of the object is as stored.
#[derive(Clone, Copy)]
struct Place<'u> {
    root: bool,
    unchanged: &'u Unchanged<'u>,
}

impl<'u> Place<'u> {
    /// Anywhere below the root.
    fn below(self) -> Place<'u> {
        Place {
            root: false,
            unchanged: self.unchanged,
        }
    }

    /// Below the root, with nothing taken as stored (the alternatives of `anyOf` and the
    /// like judge a value whole).
    fn whole() -> Place<'static> {
        static NONE: std::sync::LazyLock<Unchanged<'static>> =
            std::sync::LazyLock::new(Unchanged::none);
        Place {
            root: false,
            unchanged: &NONE,
        }
    }

    /// Whether `v` is exactly what is stored at its place, so it need not be walked again.
    fn unchanged(self, v: &Value) -> bool {
        self.unchanged.contains(v)
    }
}

/// A JSON number as Go's decoder sees it: int64 when it fits, otherwise float64.
#[derive(Debug, Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    fn of(n: &Number) -> Num {
        match n.as_i64() {
            Some(i) => Num::Int(i),
            None => Num::Float(n.as_f64().unwrap_or(f64::NAN)),
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    fn to_value(self) -> Value {
        match self {
            Num::Int(i) => Value::from(i),
            Num::Float(f) => Value::from(f),
        }
    }
}

/// `swag.IsFloat64AJSONInteger`: integral and within ±2^53 (with a small relative tolerance).
fn is_json_integer(f: f64) -> bool {
    const MAX: f64 = 9_007_199_254_740_992.0;
    if !f.is_finite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    let r = f.round();
    f == r || (f - r).abs() / (f.abs() + r.abs()) < 1e-9
}

/// A `FieldError` for a kube-openapi error that carries no field (`errors.New`): kube reports
/// it on the nil path with an empty value.
fn composite(msg: String) -> FieldError {
    FieldError::invalid("<nil>", Value::String(String::new()), msg)
}

/// Validates one value against one schema node (kube-openapi's `SchemaValidator.Validate`).
fn node(
    schema: &Value,
    v: &Value,
    path: &mut FieldPath,
    place: Place<'_>,
    out: &mut Vec<FieldError>,
) {
    let Some(s) = schema.as_object() else {
        return;
    };
    check_type(s, v, path, out);
    if v.is_null() {
        check_enum(s, v, path, out);
        return;
    }
    check_composition(s, v, path, out);
    match v {
        Value::String(text) => {
            check_string(s, text, path, out);
            check_format(s, text, path, out);
        }
        Value::Number(n) => check_number(s, Num::of(n), path, out),
        Value::Array(items) => check_array(s, items, path, place, out),
        _ => {}
    }
    check_enum(s, v, path, out);
    if let Value::Object(m) = v {
        check_object(s, m, path, place, out);
    }
}

/// The declared types; `x-kubernetes-int-or-string` means `integer,string`.
fn types(s: &Map<String, Value>) -> Vec<&str> {
    if flag(s, "x-kubernetes-int-or-string") {
        return vec!["integer", "string"];
    }
    match s.get("type") {
        Some(Value::String(t)) if !t.is_empty() => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn type_error(path: &FieldPath, expected: &str, actual: &str) -> FieldError {
    FieldError::new(
        FieldErrorType::TypeInvalid,
        path.field(),
        Some(Value::String(actual.to_string())),
        format!(
            "{} in body must be of type {expected}: {}",
            path.as_str(),
            go_quote(actual)
        ),
    )
}

/// kube-openapi's `typeValidator`, including its format/type interplay.
fn check_type(s: &Map<String, Value>, v: &Value, path: &FieldPath, out: &mut Vec<FieldError>) {
    let types = types(s);
    let format = s.get("format").and_then(Value::as_str).unwrap_or("");
    if types.is_empty() && format.is_empty() {
        return;
    }
    if v.is_null() {
        if !types.is_empty() && !types.contains(&"null") && !flag(s, "nullable") {
            out.push(type_error(path, &types.join(","), "null"));
        }
        return;
    }
    let (actual, data_format, whole) = match v {
        Value::Bool(_) => ("boolean", "", false),
        Value::String(_) => ("string", "", false),
        Value::Number(n) => match Num::of(n) {
            Num::Int(_) => ("integer", "int64", false),
            Num::Float(f) => ("number", "float64", is_json_integer(f)),
        },
        Value::Array(_) => ("array", "", false),
        _ => ("object", "", false),
    };
    let float_int = whole && types.contains(&"integer");
    let int_float = actual == "integer" && types.contains(&"number");
    let text_like = v.is_string() || v.is_array();
    let format_matches = types.contains(&actual) || data_format == format || float_int || int_float;
    if !(text_like || format.is_empty() || format_matches) {
        out.push(type_error(path, format, data_format));
        return;
    }
    if text_like && !format.is_empty() && !(types.contains(&"number") || types.contains(&"integer"))
    {
        return;
    }
    if !(types.contains(&actual) || float_int || int_float) {
        out.push(type_error(path, &types.join(","), actual));
    }
}

/// `anyOf`, `oneOf`, `allOf` and `not` (kube-openapi's `schemaPropsValidator`).
fn check_composition(
    s: &Map<String, Value>,
    v: &Value,
    path: &mut FieldPath,
    out: &mut Vec<FieldError>,
) {
    let alternatives = |name: &str| {
        s.get(name)
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
    };
    if let Some(any) = alternatives("anyOf") {
        let mut best: Option<Vec<FieldError>> = None;
        let mut ok = false;
        for sub in any {
            let mut errs = Vec::new();
            node(sub, v, path, Place::whole(), &mut errs);
            if errs.is_empty() {
                ok = true;
                break;
            }
            if best.as_ref().is_none_or(|b| errs.len() < b.len()) {
                best = Some(errs);
            }
        }
        if !ok {
            out.push(composite(format!(
                "{} must validate at least one schema (anyOf)",
                go_quote(path.as_str())
            )));
            out.extend(best.unwrap_or_default());
        }
    }
    if let Some(one) = alternatives("oneOf") {
        let mut best: Option<Vec<FieldError>> = None;
        let mut valid = 0;
        for sub in one {
            let mut errs = Vec::new();
            node(sub, v, path, Place::whole(), &mut errs);
            if errs.is_empty() {
                valid += 1;
            } else if valid == 0 && best.as_ref().is_none_or(|b| errs.len() < b.len()) {
                best = Some(errs);
            }
        }
        if valid != 1 {
            let found = if valid == 0 {
                "Found none valid".to_string()
            } else {
                format!("Found {valid} valid alternatives")
            };
            out.push(composite(format!(
                "{} must validate one and only one schema (oneOf). {found}",
                go_quote(path.as_str())
            )));
            if valid == 0 {
                out.extend(best.unwrap_or_default());
            }
        }
    }
    if let Some(all) = alternatives("allOf") {
        let mut valid = 0;
        for sub in all {
            let before = out.len();
            node(sub, v, path, Place::whole(), out);
            if out.len() == before {
                valid += 1;
            }
        }
        if valid != all.len() {
            let none = if valid == 0 { ". None validated" } else { "" };
            out.push(composite(format!(
                "{} must validate all the schemas (allOf){none}",
                go_quote(path.as_str())
            )));
        }
    }
    if let Some(not) = s.get("not") {
        let mut errs = Vec::new();
        node(not, v, path, Place::whole(), &mut errs);
        if errs.is_empty() {
            out.push(composite(format!(
                "{} must not validate the schema (not)",
                go_quote(path.as_str())
            )));
        }
    }
}

/// A non-negative integer keyword (`maxLength`, `minItems`, ...).
fn count(s: &Map<String, Value>, name: &str) -> Option<u64> {
    let v = s.get(name)?;
    v.as_u64()
        .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
}

/// kube-openapi's `stringValidator`: the first failing of maxLength, minLength, pattern.
fn check_string(s: &Map<String, Value>, text: &str, path: &FieldPath, out: &mut Vec<FieldError>) {
    let len = || text.chars().count() as u64;
    let value = || Some(Value::String(text.to_string()));
    if let Some(max) = count(s, "maxLength")
        && len() > max
    {
        out.push(FieldError::new(
            FieldErrorType::TooLong,
            path.field(),
            value(),
            format!("may not be more than {max} bytes"),
        ));
        return;
    }
    if let Some(min) = count(s, "minLength")
        && len() < min
    {
        out.push(FieldError::new(
            FieldErrorType::Invalid,
            path.field(),
            value(),
            format!(
                "{} in body should be at least {min} chars long",
                path.as_str()
            ),
        ));
        return;
    }
    let Some(pattern) = s
        .get("pattern")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
    else {
        return;
    };
    let detail = match compiled(pattern) {
        Ok(re) if re.is_match(text) => return,
        Ok(_) => format!("{} in body should match '{pattern}'", path.as_str()),
        Err(e) => format!(
            "{} in body should match '{pattern}, but pattern is invalid: {e}'",
            path.as_str()
        ),
    };
    out.push(FieldError::new(
        FieldErrorType::Invalid,
        path.field(),
        value(),
        detail,
    ));
}

/// A compiled `pattern`, cached: validation runs on every write and schemas repeat patterns.
fn compiled(pattern: &str) -> Result<Regex, String> {
    const MAX_ENTRIES: usize = 4096;
    static CACHE: OnceLock<Mutex<HashMap<String, Result<Regex, String>>>> = OnceLock::new();
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(hit) = cache.get(pattern) {
        return hit.clone();
    }
    let compiled = Regex::new(pattern).map_err(|e| {
        e.to_string()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    });
    if cache.len() >= MAX_ENTRIES {
        cache.clear();
    }
    cache.insert(pattern.to_string(), compiled.clone());
    compiled
}

/// kube-openapi's `formatValidator` (strings in a known format only).
fn check_format(s: &Map<String, Value>, text: &str, path: &FieldPath, out: &mut Vec<FieldError>) {
    let Some(name) = s.get("format").and_then(Value::as_str) else {
        return;
    };
    if format::conforms(name, text) == Some(false) {
        out.push(FieldError::new(
            FieldErrorType::TypeInvalid,
            path.field(),
            Some(Value::String(text.to_string())),
            format!(
                "{} in body must be of type {name}: {}",
                path.as_str(),
                go_quote(text)
            ),
        ));
    }
}

/// A numeric bound as Go prints it: truncated to int64 against integer data, else `%v`.
fn bound_text(data: Num, bound: f64) -> String {
    match data {
        Num::Int(_) => (bound as i64).to_string(),
        Num::Float(_) => format_float_v(bound),
    }
}

/// kube-openapi's `numberValidator`: multipleOf, minimum, maximum (all reported), plus the
/// `format: int32` range (a Flotilla addition: Go's typed decoding rejects such values).
fn check_number(s: &Map<String, Value>, n: Num, path: &FieldPath, out: &mut Vec<FieldError>) {
    let name = path.as_str();
    let invalid = |detail: String| {
        FieldError::new(
            FieldErrorType::Invalid,
            path.field(),
            Some(n.to_value()),
            detail,
        )
    };
    if let Some(factor) = s.get("multipleOf").and_then(Value::as_f64) {
        if factor < 0.0 {
            let factor_value = match n {
                Num::Int(_) => Value::from(factor as i64),
                Num::Float(_) => Value::from(factor),
            };
            out.push(FieldError::invalid(
                path.field(),
                factor_value,
                format!(
                    "factor MultipleOf declared for {name} must be positive: {}",
                    bound_text(n, factor)
                ),
            ));
        } else {
            let multiple = match n {
                Num::Int(i) if factor as i64 != 0 => i % (factor as i64) == 0,
                _ => {
                    let data = n.as_f64();
                    factor != 0.0
                        && is_json_integer(if factor < 1.0 {
                            1.0 / factor * data
                        } else {
                            data / factor
                        })
                }
            };
            if !multiple {
                out.push(invalid(format!(
                    "{name} in body should be a multiple of {}",
                    bound_text(n, factor)
                )));
            }
        }
    }
    if let Some((bound, exclusive)) = bound(s, "minimum", "exclusiveMinimum") {
        let below = match n {
            Num::Int(i) => i < bound as i64 || (exclusive && i == bound as i64),
            Num::Float(f) => f < bound || (exclusive && f == bound),
        };
        if below {
            let rel = if exclusive {
                "greater than"
            } else {
                "greater than or equal to"
            };
            out.push(invalid(format!(
                "{name} in body should be {rel} {}",
                bound_text(n, bound)
            )));
        }
    }
    if let Some((bound, exclusive)) = bound(s, "maximum", "exclusiveMaximum") {
        let above = match n {
            Num::Int(i) => i > bound as i64 || (exclusive && i == bound as i64),
            Num::Float(f) => f > bound || (exclusive && f == bound),
        };
        if above {
            let rel = if exclusive {
                "less than"
            } else {
                "less than or equal to"
            };
            out.push(invalid(format!(
                "{name} in body should be {rel} {}",
                bound_text(n, bound)
            )));
        }
    }
    if s.get("format").and_then(Value::as_str) == Some("int32")
        && let Num::Int(i) = n
        && i32::try_from(i).is_err()
    {
        out.push(FieldError::new(
            FieldErrorType::TypeInvalid,
            path.field(),
            Some(n.to_value()),
            format!("{name} in body must be of type int32: \"{i}\""),
        ));
    }
}

/// A bound and whether it is exclusive: OpenAPI v3.0's boolean `exclusiveMinimum` modifier, or
/// JSON Schema's numeric `exclusiveMinimum` on its own.
fn bound(s: &Map<String, Value>, inclusive: &str, exclusive: &str) -> Option<(f64, bool)> {
    match (s.get(inclusive).and_then(Value::as_f64), s.get(exclusive)) {
        (Some(b), excl) => Some((b, excl.and_then(Value::as_bool).unwrap_or(false))),
        (None, Some(Value::Number(b))) => b.as_f64().map(|b| (b, true)),
        _ => None,
    }
}

/// kube-openapi's `schemaSliceValidator`: items, then minItems, maxItems, uniqueItems.
fn check_array(
    s: &Map<String, Value>,
    items: &[Value],
    path: &mut FieldPath,
    place: Place<'_>,
    out: &mut Vec<FieldError>,
) {
    let mut element = |item_schema: &Value, i: usize, item: &Value| {
        if !place.unchanged(item) {
            let mark = path.index(i);
            node(item_schema, item, path, place.below(), out);
            path.restore(mark);
        }
    };
    match s.get("items") {
        Some(item_schema @ Value::Object(_)) => {
            for (i, item) in items.iter().enumerate() {
                element(item_schema, i, item);
            }
        }
        Some(Value::Array(tuple)) => {
            for (i, (item_schema, item)) in tuple.iter().zip(items).enumerate() {
                element(item_schema, i, item);
            }
        }
        _ => {}
    }
    let size = items.len() as u64;
    if let Some(min) = count(s, "minItems")
        && size < min
    {
        out.push(FieldError::invalid(
            path.field(),
            Value::from(size),
            format!("{} in body should have at least {min} items", path.as_str()),
        ));
    }
    if let Some(max) = count(s, "maxItems")
        && size > max
    {
        out.push(too_many(path, size, max));
    }
    if flag(s, "uniqueItems")
        && items
            .iter()
            .enumerate()
            .any(|(i, a)| items[..i].iter().any(|b| json_equal(a, b)))
    {
        out.push(FieldError::invalid(
            path.field(),
            Value::String(String::new()),
            format!("{} in body shouldn't contain duplicates", path.as_str()),
        ));
    }
}

/// `field.TooMany`: `Too many: 101: must have at most 100 items`. The count is carried in the
/// detail because `FieldError::body` prints no value for this error type.
fn too_many(path: &FieldPath, actual: u64, max: u64) -> FieldError {
    FieldError::new(
        FieldErrorType::TooMany,
        path.field(),
        None,
        format!("{actual}: must have at most {max} items"),
    )
}

/// kube-openapi's `basicCommonValidator`: `enum` (null never matches, as in kube).
fn check_enum(s: &Map<String, Value>, v: &Value, path: &FieldPath, out: &mut Vec<FieldError>) {
    let Some(allowed) = s
        .get("enum")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
    else {
        return;
    };
    if !v.is_null() && allowed.iter().any(|a| json_equal(v, a)) {
        return;
    }
    let names: Vec<String> = allowed
        .iter()
        .map(|a| match a {
            Value::String(s) => s.clone(),
            other => go_json(other),
        })
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let bad = if v.is_null() {
        Value::String("null".to_string())
    } else {
        v.clone()
    };
    out.push(FieldError::not_supported(path.field(), bad, &names));
}

/// Deep equality with numbers compared by value (`1` equals `1.0`).
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, a)| y.get(k).is_some_and(|b| json_equal(a, b)))
        }
        _ => a == b,
    }
}

/// kube-openapi's `objectValidator`: property counts (which stop here when violated),
/// `additionalProperties`, properties, `required`.
fn check_object(
    s: &Map<String, Value>,
    m: &Map<String, Value>,
    path: &mut FieldPath,
    place: Place<'_>,
    out: &mut Vec<FieldError>,
) {
    let n = m.len() as u64;
    if let Some(min) = count(s, "minProperties")
        && n < min
    {
        out.push(FieldError::invalid(
            path.field(),
            Value::from(n),
            format!(
                "{} in body should have at least {min} properties",
                path.as_str()
            ),
        ));
        return;
    }
    if let Some(max) = count(s, "maxProperties")
        && n > max
    {
        out.push(too_many(path, n, max));
        return;
    }
    let props = properties(s);
    let known = |k: &str| props.is_some_and(|p| p.contains_key(k));
    match s.get("additionalProperties") {
        Some(Value::Bool(false)) => {
            for k in m.keys().filter(|k| !known(k)) {
                out.push(FieldError::invalid(
                    path.field(),
                    Value::String(k.clone()),
                    format!("{}.{k} in body is a forbidden property", path.as_str()),
                ));
            }
        }
        Some(extra @ Value::Object(_)) => {
            for (k, v) in m.iter().filter(|(k, _)| !known(k)) {
                if !place.unchanged(v) {
                    let mark = path.key(k);
                    node(extra, v, path, place.below(), out);
                    path.restore(mark);
                }
            }
        }
        _ => {}
    }
    for (name, prop) in props.into_iter().flatten() {
        let Some(v) = m.get(name) else {
            continue;
        };
        let metadata = place.root && name == "metadata";
        if !metadata && place.unchanged(v) {
            continue;
        }
        let mark = path.child(name);
        if metadata {
            if let Some(p) = prop.as_object() {
                check_type(p, v, path, out);
            }
        } else {
            node(prop, v, path, place.below(), out);
        }
        path.restore(mark);
    }
    for name in s
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !m.contains_key(name) {
            let mark = path.child(name);
            out.push(FieldError::required(path.field(), ""));
            path.restore(mark);
        }
    }
}
