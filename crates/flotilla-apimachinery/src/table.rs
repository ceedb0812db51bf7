//! Server-side Tables for `kubectl get`: CRD printer columns (`additionalPrinterColumns`) turned
//! into `columnDefinitions` and row cells exactly as apiextensions-apiserver's `tableconvertor`
//! does, including the `Age`-style durations of `duration.HumanDuration`.

mod jsonpath;
pub mod printers;

pub use jsonpath::{eval_json_path, validate_json_path};

use std::borrow::Cow;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::schema::gofmt::{format_float_v, go_json};

/// `ObjectMeta.name`'s documentation, the `Name` column's description.
const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// `ObjectMeta.creationTimestamp`'s documentation, the default `Age` column's description.
const CREATION_TIMESTAMP_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// One CRD printer column (`CustomResourceColumnDefinition`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrinterColumn {
    /// Column header, e.g. `Ready`.
    pub name: String,
    /// OpenAPI type of the cells: `string`, `integer`, `number`, `boolean` or `date`.
    pub column_type: String,
    /// Optional OpenAPI format hint for clients (`name`, `int32`, ...).
    pub format: String,
    /// Human description; empty means the default `Custom resource definition column ...`.
    pub description: String,
    /// 0 shows by default; higher priorities only with `kubectl get -o wide`.
    pub priority: i32,
    /// JSONPath of the value inside each object, e.g. `.status.conditions[?(@.type=="Ready")].status`.
    pub json_path: String,
}

impl PrinterColumn {
    /// Reads one `additionalPrinterColumns` entry of a CRD version (`name`, `type`, `jsonPath`
    /// required; `format`, `description`, `priority` optional). `None` if a required field is
    /// missing or not a string.
    pub fn from_crd_json(v: &Value) -> Option<PrinterColumn> {
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        Some(PrinterColumn {
            name: text("name")?,
            column_type: text("type")?,
            format: text("format").unwrap_or_default(),
            description: text("description").unwrap_or_default(),
            priority: v
                .get("priority")
                .and_then(Value::as_i64)
                .map_or(0, |p| p.clamp(i32::MIN.into(), i32::MAX.into()) as i32),
            json_path: text("jsonPath")?,
        })
    }

    /// The column kube serves when a CRD declares none: `Age` from `.metadata.creationTimestamp`.
    pub fn default_age() -> PrinterColumn {
        PrinterColumn {
            name: "Age".to_string(),
            column_type: "date".to_string(),
            format: String::new(),
            description: CREATION_TIMESTAMP_DESCRIPTION.to_string(),
            priority: 0,
            json_path: ".metadata.creationTimestamp".to_string(),
        }
    }
}

/// The columns actually served: the declared ones, or the default `Age` column when none.
fn effective(cols: &[PrinterColumn]) -> Cow<'_, [PrinterColumn]> {
    if cols.is_empty() {
        Cow::Owned(vec![PrinterColumn::default_age()])
    } else {
        Cow::Borrowed(cols)
    }
}

/// A Table's `columnDefinitions`: `Name` (type `string`, format `name`) first, then each column
/// as `{name, type, format, description, priority}` (no columns → `Age`).
pub fn column_definitions(cols: &[PrinterColumn]) -> Vec<Value> {
    let mut defs = Vec::with_capacity(cols.len() + 1);
    if !names_itself(cols) {
        defs.push(json!({
            "name": "Name",
            "type": "string",
            "format": "name",
            "description": NAME_DESCRIPTION,
            "priority": 0,
        }));
    }
    for c in effective(cols).iter() {
        let description = if c.description.is_empty() && c.json_path.starts_with(printers::PREFIX) {
            String::new()
        } else if c.description.is_empty() {
            format!(
                "Custom resource definition column (in JSONPath format): {}",
                c.json_path
            )
        } else {
            c.description.clone()
        };
        defs.push(json!({
            "name": c.name,
            "type": c.column_type,
            "format": c.format,
            "description": description,
            "priority": c.priority,
        }));
    }
    defs
}

/// One Table row's `cells` for `obj`: its `metadata.name`, then per column the first JSONPath
/// result (absent, or a path that fails to evaluate → `null`), rendered by column type:
/// `string` → text (numbers and booleans printed as Go prints them, objects and lists as compact
/// JSON, a JSON `null` as `<no value>`); `integer` / `number` / `boolean` → typed values (floats
/// truncated for `integer`; anything else `null`); `date` → the age relative to `now`
/// ([`human_duration`]), `<unknown>` for empty or zero times, `<invalid>` when unparsable.
pub fn row_cells(cols: &[PrinterColumn], obj: &Value, now: Timestamp) -> Vec<Value> {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut cells = Vec::with_capacity(cols.len() + 1);
    if !names_itself(cols) {
        cells.push(Value::String(name.to_string()));
    }
    for c in effective(cols).iter() {
        if let Some(spec) = c.json_path.strip_prefix(printers::PREFIX) {
            cells.push(printers::cell(spec, obj, now));
            continue;
        }
        let first = eval_json_path(&c.json_path, obj)
            .ok()
            .and_then(|r| r.into_iter().next());
        cells.push(first.map_or(Value::Null, |v| cell(&c.column_type, &v, now)));
    }
    cells
}

/// Whether a built-in kind places its own `Name` column (kube's event table puts it last):
/// then no leading `Name` column is added.
fn names_itself(cols: &[PrinterColumn]) -> bool {
    cols.iter().any(|c| c.json_path == printers::NAME_COLUMN)
}

/// `tableconvertor`'s rendering of one found value (`cellForJSONValue` and `PrintResults`).
fn cell(column_type: &str, v: &Value, now: Timestamp) -> Value {
    match (column_type, v) {
        ("string", Value::Null) => Value::String("<no value>".to_string()),
        ("string", Value::String(s)) => Value::String(s.clone()),
        ("string", Value::Bool(b)) => Value::String(b.to_string()),
        ("string", Value::Number(n)) => Value::String(match n.as_i64() {
            Some(i) => i.to_string(),
            None => format_float_v(n.as_f64().unwrap_or(0.0)),
        }),
        ("string", other) => Value::String(go_json(other)),
        ("integer", Value::Number(n)) => Value::from(
            n.as_i64()
                .unwrap_or_else(|| n.as_f64().unwrap_or(0.0) as i64),
        ),
        ("number", Value::Number(n)) => Value::from(n.as_f64().unwrap_or(0.0)),
        ("boolean", Value::Bool(b)) => Value::Bool(*b),
        ("date", Value::String(s)) => Value::String(age(s, now)),
        _ => Value::Null,
    }
}

/// `metav1.Time.UnmarshalQueryParameter` then `ConvertToHumanReadableDateType`.
fn age(text: &str, now: Timestamp) -> String {
    if text.is_empty() || text == "null" {
        return "<unknown>".to_string();
    }
    let Some(t) = parse_rfc3339(text) else {
        return "<invalid>".to_string();
    };
    if t == go_zero_time() {
        return "<unknown>".to_string();
    }
    human_duration(now.duration_since(t))
}

/// Go's zero `time.Time` instant, `0001-01-01T00:00:00Z`.
fn go_zero_time() -> Timestamp {
    Timestamp::from_second(-62_135_596_800).unwrap_or(Timestamp::MIN)
}

/// Go's `time.Parse(time.RFC3339, s)`: `2006-01-02T15:04:05[.frac](Z|±hh:mm)`.
fn parse_rfc3339(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let shape = b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    if !shape {
        return None;
    }
    let mut i = 19;
    if b[i] == b'.' {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    let zone = &b[i..];
    let zone_ok = zone == b"Z"
        || (zone.len() == 6
            && matches!(zone[0], b'+' | b'-')
            && digits(i + 1..i + 3)
            && zone[3] == b':'
            && digits(i + 4..i + 6));
    if !zone_ok {
        return None;
    }
    s.parse().ok()
}

/// `duration.HumanDuration`: a short age with 2–3 significant figures (`0s`, `59s`, `119s`,
/// `2m`, `5m10s`, `10m`, `3h`, `7h59m`, `47h`, `2d`, `7d23h`, `8d`, `729d`, `2y`, `7y364d`,
/// `8y`); up to one second in the future reads `0s`, further is `<invalid>`.
pub fn human_duration(d: SignedDuration) -> String {
    let seconds = d.as_secs();
    if seconds < -1 {
        return "<invalid>".to_string();
    }
    if seconds < 0 {
        return "0s".to_string();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let days = (hours / 24) % 365;
        return if days == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{days}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests;
