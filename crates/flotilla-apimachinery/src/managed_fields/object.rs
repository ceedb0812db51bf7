//! Walking objects by field path under list semantics: the members an object sets, the changes
//! between two objects, and removal of one path.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

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
///
/// The two are walked together and equal subtrees are skipped without listing their members,
/// so a write that changes a few fields of a large object (a status patch, a label) costs in
/// proportion to what changed, not to the object. Associative and set lists are matched
/// element by element; where a value changes shape (object to scalar, atomic list to
/// associative) the members under it are listed on both sides and compared.
pub(crate) fn compare(old: &Value, new: &Value, semantics: &dyn PatchStrategy) -> Changes {
    diff(semantics, |walk| walk.objects(fields(old), fields(new)))
}

/// What `walk` finds with a fresh [`Diff`].
fn diff<'v>(semantics: &dyn PatchStrategy, walk: impl FnOnce(&mut Diff<'v, '_, '_>)) -> Changes {
    let mut changes = Changes {
        changed: FieldSet::new(),
        removed: FieldSet::new(),
    };
    walk(&mut Diff {
        names: Vec::new(),
        path: Vec::new(),
        semantics,
        changes: &mut changes,
    });
    changes
}

/// Part of an object, borrowed: some of its top-level fields and, as the value of
/// `metadata`, some of its metadata fields (none: no `metadata`). What [`compare_parts`]
/// compares without copying the object.
#[derive(Default)]
pub(crate) struct Part<'v> {
    /// Top-level fields other than `metadata`.
    pub(crate) top: Vec<(&'v str, &'v Value)>,
    /// Fields of `metadata`.
    pub(crate) metadata: Vec<(&'v str, &'v Value)>,
}

/// [`compare`] of two objects' parts, as if each were an object of just those fields.
pub(crate) fn compare_parts(
    old: &Part<'_>,
    new: &Part<'_>,
    semantics: &dyn PatchStrategy,
) -> Changes {
    diff(semantics, |walk| {
        walk.objects(&old.top[..], &new.top[..]);
        if !old.metadata.is_empty() || !new.metadata.is_empty() {
            walk.names.push("metadata");
            walk.path.push(PathElement::field("metadata"));
            walk.objects(&old.metadata[..], &new.metadata[..]);
        }
    })
}

/// Named values [`Diff::objects`] compares: an object's fields, or a [`Part`]'s.
trait Fields<'v>: Copy {
    /// Every field, in order.
    fn each(self) -> impl Iterator<Item = (&'v str, &'v Value)>;
    /// The value of field `name`.
    fn field(self, name: &str) -> Option<&'v Value>;
}

impl<'v> Fields<'v> for &'v Map<String, Value> {
    fn each(self) -> impl Iterator<Item = (&'v str, &'v Value)> {
        self.iter().map(|(name, value)| (name.as_str(), value))
    }

    fn field(self, name: &str) -> Option<&'v Value> {
        self.get(name)
    }
}

impl<'v> Fields<'v> for &[(&'v str, &'v Value)] {
    fn each(self) -> impl Iterator<Item = (&'v str, &'v Value)> {
        self.iter().copied()
    }

    fn field(self, name: &str) -> Option<&'v Value> {
        self.iter()
            .find(|(field, _)| *field == name)
            .map(|(_, value)| *value)
    }
}

/// No fields: what a value that is not an object has.
static EMPTY: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);

/// The fields of `value`, none if it is not an object.
fn fields(value: &Value) -> &Map<String, Value> {
    value.as_object().unwrap_or(&EMPTY)
}

/// A walk of two objects together (see [`compare`]).
struct Diff<'v, 's, 'c> {
    names: Vec<&'v str>,
    path: Vec<PathElement>,
    semantics: &'s dyn PatchStrategy,
    changes: &'c mut Changes,
}

impl<'v> Diff<'v, '_, '_> {
    /// The fields of two objects at the current path.
    fn objects(&mut self, old: impl Fields<'v>, new: impl Fields<'v>) {
        for (name, new_child) in new.each() {
            self.names.push(name);
            self.path.push(PathElement::field(name));
            match old.field(name) {
                Some(old_child) if old_child == new_child => {}
                Some(old_child) => self.values(old_child, new_child),
                None => self.all(new_child, Side::Changed),
            }
            self.path.pop();
            self.names.pop();
        }
        for (name, old_child) in old.each() {
            if new.field(name).is_none() {
                self.names.push(name);
                self.path.push(PathElement::field(name));
                self.all(old_child, Side::Removed);
                self.path.pop();
                self.names.pop();
            }
        }
    }

    /// Two unequal values at the current path.
    fn values(&mut self, old: &'v Value, new: &'v Value) {
        match (old, new) {
            (Value::Object(old), Value::Object(new)) if !old.is_empty() && !new.is_empty() => {
                self.objects(old, new);
            }
            (Value::Array(old_items), Value::Array(new_items)) => {
                let kinds = (
                    list_kind(old_items, &self.names, self.semantics),
                    list_kind(new_items, &self.names, self.semantics),
                );
                match kinds {
                    (ListKind::Map(old_keys), ListKind::Map(new_keys)) => {
                        self.elements(old_keys, old_items, new_keys, new_items, true);
                    }
                    (ListKind::Set(old_keys), ListKind::Set(new_keys)) => {
                        self.elements(old_keys, old_items, new_keys, new_items, false);
                    }
                    _ => self.listed(old, new),
                }
            }
            _ => self.listed(old, new),
        }
    }

    /// The elements of two associative (`map`) or set lists, matched by their steps. A set
    /// element's step is its value, so matched set elements are equal.
    fn elements(
        &mut self,
        old_keys: Vec<PathElement>,
        old_items: &'v [Value],
        new_keys: Vec<PathElement>,
        new_items: &'v [Value],
        map: bool,
    ) {
        let mut old: BTreeMap<PathElement, &'v Value> =
            old_keys.into_iter().zip(old_items).collect();
        for (key, new_item) in new_keys.into_iter().zip(new_items) {
            let old_item = old.remove(&key);
            self.path.push(key);
            match old_item {
                Some(old_item) if !map || old_item == new_item => {}
                Some(old_item) => self.objects(fields(old_item), fields(new_item)),
                None => self.element(new_item, map, Side::Changed),
            }
            self.path.pop();
        }
        for (key, old_item) in old {
            self.path.push(key);
            self.element(old_item, map, Side::Removed);
            self.path.pop();
        }
    }

    /// A list element only one side has: its own member and, in an associative list,
    /// everything in it.
    fn element(&mut self, item: &'v Value, map: bool, side: Side) {
        into(self.changes, side).insert(&self.path);
        if map && let Value::Object(object) = item {
            let mut members = Vec::new();
            walk_object(
                object,
                &mut self.names,
                &mut self.path,
                self.semantics,
                &mut members,
            );
            self.record(members, side);
        }
    }

    /// Every member of `value`, which only one side has.
    fn all(&mut self, value: &'v Value, side: Side) {
        let mut members = Vec::new();
        walk_value(
            value,
            &mut self.names,
            &mut self.path,
            self.semantics,
            &mut members,
        );
        self.record(members, side);
    }

    /// Two values whose members cannot be matched structurally: list both and compare.
    fn listed(&mut self, old: &'v Value, new: &'v Value) {
        let mut old_members = Vec::new();
        walk_value(
            old,
            &mut self.names,
            &mut self.path,
            self.semantics,
            &mut old_members,
        );
        let mut new_members = Vec::new();
        walk_value(
            new,
            &mut self.names,
            &mut self.path,
            self.semantics,
            &mut new_members,
        );
        let old: BTreeMap<Vec<PathElement>, Option<&Value>> = old_members.into_iter().collect();
        let mut new_paths = BTreeSet::new();
        for (path, value) in &new_members {
            if old.get(path) != Some(value) {
                self.changes.changed.insert(path);
            }
            new_paths.insert(path);
        }
        for path in old.keys().filter(|path| !new_paths.contains(path)) {
            self.changes.removed.insert(path);
        }
    }

    fn record(&mut self, members: Vec<Member<'v>>, side: Side) {
        let set = into(self.changes, side);
        for (path, _) in &members {
            set.insert(path);
        }
    }
}

/// The set of `changes` members of `side` go to.
fn into(changes: &mut Changes, side: Side) -> &mut FieldSet {
    match side {
        Side::Changed => &mut changes.changed,
        Side::Removed => &mut changes.removed,
    }
}

/// Which set a one-sided member goes to.
#[derive(Clone, Copy)]
enum Side {
    Changed,
    Removed,
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
