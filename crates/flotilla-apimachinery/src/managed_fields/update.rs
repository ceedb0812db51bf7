//! Field ownership for ordinary writes (create, update, patch).

use serde_json::{Map, Value};

use super::entry::{ManagedFieldsEntry, Operation, managed_fields, write_managed_fields};
use super::object::{Changes, Part, compare_parts};
use super::ownable::ownable_part;
use super::touch::touch;
use crate::patch::PatchStrategy;

/// Records a non-apply write in `new`'s `metadata.managedFields`, as kube-apiserver does for
/// create, update and patch requests, so that later applies conflict with it.
///
/// The ownable fields (see the module docs) that differ from `old` (`None` for a create) are
/// given to `manager`'s Update entry for `api_version`/`subresource`, and taken from every other
/// entry; fields the write removed are dropped from every entry. Entries left empty are
/// dropped; `time` becomes `now` on the writer's entry when it changed something. A write that
/// changes nothing leaves the managed fields alone.
///
/// The starting entries are `new`'s own `managedFields` when the client sent decodable,
/// non-empty ones, none when it sent `[]` or `[{}]` (kube's reset), and `old`'s otherwise.
pub fn record_update(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: Option<&str>,
    api_version: &str,
    now: &str,
    semantics: &dyn PatchStrategy,
) {
    let old_part = old.map_or_else(Part::default, |old| ownable_part(old, subresource));
    let changes = compare_parts(&old_part, &ownable_part(new, subresource), semantics);
    if !touch(old, new, &changes, manager, api_version, subresource, now) {
        record_in_full(old, new, changes, manager, subresource, api_version, now);
    }
}

/// [`record_update`] of `changes` over every decoded entry: the general path.
pub(super) fn record_in_full(
    old: Option<&Value>,
    new: &mut Value,
    changes: Changes,
    manager: &str,
    subresource: Option<&str>,
    api_version: &str,
    now: &str,
) {
    let mut entries = starting_entries(old, new);

    let mine = entries
        .iter()
        .position(|entry| entry.is(manager, Operation::Update, api_version, subresource));
    for (index, entry) in entries.iter_mut().enumerate() {
        if Some(index) != mine {
            entry.fields = entry
                .fields
                .difference(&changes.changed)
                .difference(&changes.removed);
        }
    }
    match mine {
        Some(index) => {
            let entry = &mut entries[index];
            let fields = entry
                .fields
                .difference(&changes.removed)
                .union(&changes.changed);
            if !changes.changed.is_empty() || fields != entry.fields {
                entry.time = Some(now.to_owned());
            }
            entry.fields = fields;
        }
        None if !changes.changed.is_empty() => entries.push(ManagedFieldsEntry {
            manager: manager.to_owned(),
            operation: Operation::Update,
            api_version: api_version.to_owned(),
            time: Some(now.to_owned()),
            subresource: subresource.map(str::to_owned),
            fields: changes.changed,
        }),
        None => {}
    }
    write_managed_fields(new, entries);
}

/// kube-apiserver's `decodeLiveOrNew`: the entries a write starts from.
fn starting_entries(old: Option<&Value>, new: &Value) -> Vec<ManagedFieldsEntry> {
    if let Some(Value::Array(sent)) = new.pointer("/metadata/managedFields") {
        let reset = match sent.as_slice() {
            [] => true,
            [only] => only.as_object().is_some_and(Map::is_empty),
            _ => false,
        };
        if reset {
            return Vec::new();
        }
    }
    match managed_fields(new) {
        Ok(entries) if !entries.is_empty() => entries,
        _ => old
            .and_then(|old| managed_fields(old).ok())
            .unwrap_or_default(),
    }
}
