//! The common case of [`record_update`](super::record_update), done on the encoded entries:
//! a manager writing again fields it alone already owns (a controller updating its status).
//! Decoding every entry's `fieldsV1`, taking set differences and unions that change nothing,
//! and encoding them all again would cost more than the write itself for a large object;
//! here the owners of the changed fields are looked up in the encoded sets, and at most the
//! writer's `time` changes. Anything else (a field changing hands, removed fields, entries
//! the client sent, an order the new time would change) is left to the general path.

use std::cmp::Ordering;

use serde_json::Value;

use super::entry::{Operation, seconds};
use super::object::Changes;
use super::path::PathElement;

/// Records `changes`, made by `manager` (an Update through `api_version`/`subresource`), in
/// `new`'s entries if this is the common case, and says whether it was. `old` is the stored
/// object: its entries, which `new` must carry unchanged.
pub(super) fn touch(
    old: Option<&Value>,
    new: &mut Value,
    changes: &Changes,
    manager: &str,
    api_version: &str,
    subresource: Option<&str>,
    now: &str,
) -> bool {
    let stored = old.and_then(|old| old.pointer("/metadata/managedFields"));
    if !changes.removed.is_empty() || new.pointer("/metadata/managedFields") != stored {
        return false;
    }
    if changes.changed.is_empty() {
        // The entries as stored, which the general path would write back as they are.
        return true;
    }
    let Some(Value::Array(entries)) = new.pointer_mut("/metadata/managedFields") else {
        return false;
    };
    let is_mine = |entry: &Value| {
        text(entry, "manager") == Some(manager)
            && text(entry, "operation") == Some(Operation::Update.as_str())
            && text(entry, "apiVersion") == Some(api_version)
            && text(entry, "subresource") == subresource
    };
    let mut mine = entries.iter().enumerate().filter(|(_, e)| is_mine(e));
    let (Some((index, _)), None) = (mine.next(), mine.next()) else {
        return false;
    };
    let paths = changes.changed.paths();
    let owned_alone = entries.iter().enumerate().all(|(i, entry)| {
        let fields = entry.get("fieldsV1").unwrap_or(&Value::Null);
        paths
            .iter()
            .all(|path| member(fields, path.elements()) == (i == index))
    });
    if !owned_alone {
        return false;
    }
    let previous = entries[index].get("time").cloned();
    entries[index]["time"] = Value::from(now);
    if entries.is_sorted_by(|a, b| order(a, b) != Ordering::Greater) {
        return true;
    }
    match previous {
        Some(time) => entries[index]["time"] = time,
        None => {
            if let Some(entry) = entries[index].as_object_mut() {
                entry.shift_remove("time");
            }
        }
    }
    false
}

/// A string field of an encoded entry (an empty subresource is none, as decoding has it).
fn text<'a>(entry: &'a Value, name: &str) -> Option<&'a str> {
    entry
        .get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty() || name != "subresource")
}

/// Whether `path` is a member of the encoded set `fields` (see
/// [`FieldSet`](super::FieldSet): a member is a
/// node without children, or one with the `"."` marker).
fn member(fields: &Value, path: &[PathElement]) -> bool {
    let node = path
        .iter()
        .try_fold(fields, |node, element| node.get(element.as_str()));
    match node {
        Some(Value::Object(node)) => {
            !path.is_empty() && (node.is_empty() || node.contains_key("."))
        }
        _ => false,
    }
}

/// kube-apiserver's order of encoded entries, as `write_managed_fields` sorts decoded ones.
fn order(a: &Value, b: &Value) -> Ordering {
    let key = |entry: &Value| {
        let operation = match text(entry, "operation") {
            Some("Apply") => Operation::Apply,
            _ => Operation::Update,
        };
        let time = text(entry, "time").map(str::to_owned);
        (
            operation,
            seconds(&time),
            text(entry, "manager").unwrap_or_default().to_owned(),
            text(entry, "apiVersion").unwrap_or_default().to_owned(),
            text(entry, "subresource").map(str::to_owned),
        )
    };
    key(a).cmp(&key(b))
}
