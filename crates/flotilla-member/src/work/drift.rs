//! Differences between a manifest (as the hub wants it, overrides applied) and the object on
//! the member, as KubeFleet reports them in `driftDetails` and `diffDetails`: one
//! [`PatchDetail`] `{path, valueInMember, valueInHub}` per differing field, `path` a JSON
//! pointer, a value absent when the field is absent on that side.
//!
//! Both sides are first reduced to their [`comparable`] view (no status, system metadata,
//! owner references, managed fields, finalizers or reserved labels and annotations). Then:
//!
//! - **PartialComparison** compares only what the manifest sets: what applying it would change.
//!   KubeFleet computes this by diffing a dry-run server-side apply against the live object;
//!   this module walks the manifest instead, with the same merge semantics. Fields only the
//!   member has (server defaults, other managers' fields, extra labels) are ignored; a `null`
//!   in the manifest means "absent", so a member value there is drift; lists merge as the
//!   [`PatchStrategy`] says: elements of keyed lists (`containers` by `name`) are matched by
//!   key, so member-added elements and order are ignored; set lists (`finalizers`) need the
//!   manifest's values present; atomic lists compare element by element (again ignoring
//!   member-only fields inside elements) and must have the same length.
//! - **FullComparison** compares the whole comparable view, so server-populated fields the
//!   manifest leaves out show up too (KubeFleet compares the two objects' JSON the same way).
//!   Lists compare by position.
//!
//! In both modes a missing field, `null`, `{}` and `[]` are the same (serializers differ in
//! which they write), numbers compare by value (`3` = `3.0`), and inside resource quantity
//! maps (`limits`, `requests`, `hard`, `capacity`, `min`, `max`, …) quantities compare by value
//! (`1000m` = `1` = `"1"`), as the API server canonicalizes them. Values render as KubeFleet
//! shows them: strings bare, anything else as compact JSON. At most [`MAX_DETAILS`] entries
//! are reported, the first ones in manifest order; KubeFleet truncates at the same count.

use flotilla_api::placement::status::PatchDetail;
use flotilla_api::placement::strategy::ComparisonOption;
use flotilla_apimachinery::patch::{ListStrategy, PatchStrategy};
use flotilla_apimachinery::quantity::parse_milli;
use serde_json::Value;

use super::manifest::comparable;

/// The most differences reported for one object (KubeFleet's `patchDetailPerObjLimit`).
pub const MAX_DETAILS: usize = 100;

/// Map keys whose values are resource quantities.
const QUANTITY_MAPS: [&str; 11] = [
    "limits",
    "requests",
    "hard",
    "capacity",
    "allocatable",
    "overhead",
    "min",
    "max",
    "default",
    "defaultRequest",
    "maxLimitRequestRatio",
];

/// The differences between `desired` (the manifest) and `live` (the member object) under
/// `comparison`; `lists` says how each list merges (`BuiltinStrategy` for built-in kinds, the
/// CRD's schema for custom resources).
pub fn differences(
    comparison: ComparisonOption,
    desired: &Value,
    live: &Value,
    lists: &dyn PatchStrategy,
) -> Vec<PatchDetail> {
    let mut walk = Walk {
        partial: comparison == ComparisonOption::PartialComparison,
        lists,
        details: Vec::new(),
    };
    walk.compare(
        &Location::default(),
        Some(&comparable(desired)),
        Some(&comparable(live)),
    );
    walk.details
}

/// Where in the object a value sits.
#[derive(Default)]
struct Location {
    /// JSON pointer.
    pointer: String,
    /// Field names from the root, without list indices (what [`PatchStrategy`] reads).
    fields: Vec<String>,
}

impl Location {
    /// The location of field `name` of the object here.
    fn field(&self, name: &str) -> Location {
        let mut fields = self.fields.clone();
        fields.push(name.to_owned());
        Location {
            pointer: format!(
                "{}/{}",
                self.pointer,
                name.replace('~', "~0").replace('/', "~1")
            ),
            fields,
        }
    }

    /// The location of element `index` of the list here.
    fn index(&self, index: usize) -> Location {
        Location {
            pointer: format!("{}/{index}", self.pointer),
            fields: self.fields.clone(),
        }
    }

    /// Whether a value here is a resource quantity.
    fn holds_quantity(&self) -> bool {
        self.fields.len() >= 2
            && QUANTITY_MAPS.contains(&self.fields[self.fields.len() - 2].as_str())
    }
}

/// One comparison in progress.
struct Walk<'a> {
    /// PartialComparison: only what the manifest sets counts.
    partial: bool,
    lists: &'a dyn PatchStrategy,
    details: Vec<PatchDetail>,
}

impl Walk<'_> {
    /// Compares the manifest's value `hub` with the member's value `member` at `at`.
    fn compare(&mut self, at: &Location, hub: Option<&Value>, member: Option<&Value>) {
        if self.details.len() >= MAX_DETAILS || (self.partial && hub.is_none()) {
            return;
        }
        if hub.is_none_or(vacuous) && member.is_none_or(vacuous) {
            return;
        }
        match (hub, member) {
            (Some(Value::Object(hub)), Some(Value::Object(member))) => {
                for (key, value) in hub {
                    self.compare(&at.field(key), Some(value), member.get(key));
                }
                if !self.partial {
                    for (key, value) in member.iter().filter(|(key, _)| !hub.contains_key(*key)) {
                        self.compare(&at.field(key), None, Some(value));
                    }
                }
            }
            (Some(Value::Array(hub)), Some(Value::Array(member))) => self.list(at, hub, member),
            (Some(hub), Some(member)) if same_scalar(at, hub, member) => {}
            _ => self.report(at, member, hub),
        }
    }

    /// Compares two lists: by key or as sets where a partial comparison merges them so,
    /// otherwise element by element.
    fn list(&mut self, at: &Location, hub: &[Value], member: &[Value]) {
        if self.partial {
            let path: Vec<&str> = at.fields.iter().map(String::as_str).collect();
            match self.lists.list_strategy(&path) {
                ListStrategy::MergeByKey(key)
                    if hub
                        .iter()
                        .all(|h| h.get(&key).is_some_and(|k| !k.is_null())) =>
                {
                    let mut appended = member.len();
                    for element in hub {
                        let wanted = &element[&key];
                        match member.iter().position(|m| m.get(&key) == Some(wanted)) {
                            Some(index) => {
                                self.compare(&at.index(index), Some(element), Some(&member[index]));
                            }
                            None => {
                                self.report(&at.index(appended), None, Some(element));
                                appended += 1;
                            }
                        }
                    }
                    return;
                }
                ListStrategy::MergePrimitives => {
                    let mut appended = member.len();
                    for element in hub.iter().filter(|h| !h.is_null()) {
                        if !member.iter().any(|m| same_scalar(at, element, m)) {
                            self.report(&at.index(appended), None, Some(element));
                            appended += 1;
                        }
                    }
                    return;
                }
                ListStrategy::MergeByKey(_) | ListStrategy::Atomic => {}
            }
        }
        for index in 0..hub.len().max(member.len()) {
            match (hub.get(index), member.get(index)) {
                (Some(h), Some(m)) => self.compare(&at.index(index), Some(h), Some(m)),
                (h, m) => self.report(&at.index(index), m, h),
            }
        }
    }

    /// Records a difference (a `null` side counts as absent).
    fn report(&mut self, at: &Location, member: Option<&Value>, hub: Option<&Value>) {
        if self.details.len() < MAX_DETAILS {
            let shown = |value: Option<&Value>| value.filter(|v| !v.is_null()).map(render);
            self.details.push(PatchDetail {
                path: at.pointer.clone(),
                value_in_member: shown(member),
                value_in_hub: shown(hub),
            });
        }
    }
}

/// Whether `value` says nothing: `null`, `[]`, or an object of such values.
fn vacuous(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(fields) => fields.values().all(vacuous),
        _ => false,
    }
}

/// Whether two scalars at `at` are the same value.
fn same_scalar(at: &Location, a: &Value, b: &Value) -> bool {
    if a == b {
        return true;
    }
    if let (Value::Number(x), Value::Number(y)) = (a, b)
        && (x.is_f64() || y.is_f64())
    {
        return x.as_f64() == y.as_f64();
    }
    if at.holds_quantity() {
        let quantity = |v: &Value| match v {
            Value::String(text) => parse_milli(text),
            Value::Number(number) => parse_milli(&number.to_string()),
            _ => None,
        };
        if let (Some(x), Some(y)) = (quantity(a), quantity(b)) {
            return x == y;
        }
    }
    false
}

/// A value as a patch detail shows it: strings bare, anything else as compact JSON.
fn render(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
