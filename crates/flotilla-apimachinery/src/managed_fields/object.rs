//! Walking objects by field path under list semantics: the members an object sets, the changes
//! between two objects, and removal of one path.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::field_set::FieldSet;
use super::path::PathElement;
use crate::patch::{ListStrategy, PatchStrategy};

/// How the elements of one list value are identified.
pub(crate) enum ListKind {
    /// The list is a single value.
    Atomic,
    /// An associative list: the `k:` step of each element, in order.
    Map(Vec<PathElement>),
    /// A set of scalars: the `v:` step of each element, in order.
    Set(Vec<PathElement>),
}

/// Classifies the list `items` found at field path `names`. A list the semantics call
/// mergeable but whose elements cannot be told apart (an element without any key field, a
/// non-scalar in a set, duplicates) is atomic, so that nothing is ever merged ambiguously.
pub(crate) fn list_kind(
    items: &[Value],
    names: &[&str],
    semantics: &dyn PatchStrategy,
) -> ListKind {
    match semantics.list_strategy(names) {
        ListStrategy::Atomic => ListKind::Atomic,
        ListStrategy::MergePrimitives => distinct(
            items
                .iter()
                .map(|item| {
                    (!item.is_object() && !item.is_array()).then(|| PathElement::value(item))
                })
                .collect(),
        )
        .map_or(ListKind::Atomic, ListKind::Set),
        ListStrategy::MergeByKey(merge_key) => {
            let mut keys = semantics.list_map_keys(names);
            if keys.is_empty() {
                keys.push(merge_key);
            }
            distinct(items.iter().map(|item| key_of(item, &keys)).collect())
                .map_or(ListKind::Atomic, ListKind::Map)
        }
    }
}

/// The element steps, if every element has one and no two are equal.
fn distinct(elements: Option<Vec<PathElement>>) -> Option<Vec<PathElement>> {
    let elements = elements?;
    let mut seen = BTreeSet::new();
    elements
        .iter()
        .all(|element| seen.insert(element))
        .then_some(elements)
}

/// The `k:` step of an associative-list element: the key fields it has (at least one).
fn key_of(item: &Value, keys: &[String]) -> Option<PathElement> {
    let object = item.as_object()?;
    let fields: Vec<(&str, &Value)> = keys
        .iter()
        .filter_map(|key| object.get(key).map(|value| (key.as_str(), value)))
        .collect();
    (!fields.is_empty()).then(|| PathElement::key(fields))
}

/// One member of an object's field set: its path and its value, or `None` for an
/// associative-list element (whose content is described by its own members).
pub(crate) type Member<'v> = (Vec<PathElement>, Option<&'v Value>);

/// Every member `value` sets (see [`FieldSet::from_object`]), in document order.
pub(crate) fn members<'v>(value: &'v Value, semantics: &dyn PatchStrategy) -> Vec<Member<'v>> {
    let mut out = Vec::new();
    if let Value::Object(object) = value {
        walk_object(
            object,
            &mut Vec::new(),
            &mut Vec::new(),
            semantics,
            &mut out,
        );
    }
    out
}

fn walk_object<'v>(
    object: &'v Map<String, Value>,
    names: &mut Vec<&'v str>,
    path: &mut Vec<PathElement>,
    semantics: &dyn PatchStrategy,
    out: &mut Vec<Member<'v>>,
) {
    for (name, child) in object {
        names.push(name);
        path.push(PathElement::field(name));
        walk_value(child, names, path, semantics, out);
        path.pop();
        names.pop();
    }
}

fn walk_value<'v>(
    value: &'v Value,
    names: &mut Vec<&'v str>,
    path: &mut Vec<PathElement>,
    semantics: &dyn PatchStrategy,
    out: &mut Vec<Member<'v>>,
) {
    match value {
        Value::Object(object) if !object.is_empty() => {
            walk_object(object, names, path, semantics, out);
        }
        Value::Array(items) => match list_kind(items, names, semantics) {
            ListKind::Atomic => out.push((path.clone(), Some(value))),
            ListKind::Set(elements) => {
                for (element, item) in elements.into_iter().zip(items) {
                    path.push(element);
                    out.push((path.clone(), Some(item)));
                    path.pop();
                }
            }
            ListKind::Map(elements) => {
                for (element, item) in elements.into_iter().zip(items) {
                    path.push(element);
                    out.push((path.clone(), None));
                    if let Value::Object(object) = item {
                        walk_object(object, names, path, semantics, out);
                    }
                    path.pop();
                }
            }
        },
        _ => out.push((path.clone(), Some(value))),
    }
}

/// What changed between two versions of an object, as field sets.
pub(crate) struct Changes {
    /// Members added, or leaves whose value changed.
    pub(crate) changed: FieldSet,
    /// Members that disappeared.
    pub(crate) removed: FieldSet,
}

/// Compares the members of `old` and `new` (structured-merge-diff's `Compare`).
pub(crate) fn compare(old: &Value, new: &Value, semantics: &dyn PatchStrategy) -> Changes {
    let old: BTreeMap<Vec<PathElement>, Option<&Value>> =
        members(old, semantics).into_iter().collect();
    let new = members(new, semantics);
    let mut changed = FieldSet::new();
    for (path, value) in &new {
        if old.get(path) != Some(value) {
            changed.insert(path);
        }
    }
    let new_paths: BTreeSet<&Vec<PathElement>> = new.iter().map(|(path, _)| path).collect();
    let mut removed = FieldSet::new();
    for path in old.keys().filter(|path| !new_paths.contains(path)) {
        removed.insert(path);
    }
    Changes { changed, removed }
}

/// Removes the member at `path` from `value` (a field, or a list element with everything in
/// it). Nothing happens when the path does not exist.
pub(crate) fn remove_path(value: &mut Value, path: &[PathElement], semantics: &dyn PatchStrategy) {
    remove_at(value, path, &mut Vec::new(), semantics);
}

fn remove_at(
    value: &mut Value,
    path: &[PathElement],
    names: &mut Vec<String>,
    semantics: &dyn PatchStrategy,
) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    if let Some(name) = first.field_name() {
        let Some(object) = value.as_object_mut() else {
            return;
        };
        if rest.is_empty() {
            object.shift_remove(name);
        } else if let Some(child) = object.get_mut(name) {
            names.push(name.to_owned());
            remove_at(child, rest, names, semantics);
            names.pop();
        }
        return;
    }
    let Some(position) = list_position(value, first, names, semantics) else {
        return;
    };
    if let Some(items) = value.as_array_mut() {
        if rest.is_empty() {
            items.remove(position);
        } else {
            remove_at(&mut items[position], rest, names, semantics);
        }
    }
}

/// The position in the list `value` of the element a `k:`, `v:` or `i:` step names.
fn list_position(
    value: &Value,
    element: &PathElement,
    names: &[String],
    semantics: &dyn PatchStrategy,
) -> Option<usize> {
    let items = value.as_array()?;
    if let Some(index) = element.index() {
        return (index < items.len()).then_some(index);
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    match list_kind(items, &names, semantics) {
        ListKind::Map(elements) | ListKind::Set(elements) => {
            elements.iter().position(|candidate| candidate == element)
        }
        ListKind::Atomic => None,
    }
}
