//! Server-side apply (`application/apply-patch+yaml`).

use serde_json::{Map, Value};

use super::ApplyError;
use super::conflict::{ApplyConflict, ApplyConflicts};
use super::entry::{ManagedFieldsEntry, Operation, managed_fields, write_managed_fields};
use super::field_set::FieldSet;
use super::merge::merge;
use super::object::{compare, members, remove_path};
use super::ownable::{ownable, splice};
use crate::patch::PatchStrategy;

/// Metadata of the applied configuration used to create an object that does not exist yet.
const IDENTITY_METADATA: [&str; 3] = ["name", "generateName", "namespace"];

/// Server-side applies `config` for `manager` and returns the resulting object with its
/// `metadata.managedFields` updated, as kube-apiserver does (structured-merge-diff semantics).
///
/// - `live` is the current object (`None` creates it from the configuration's `apiVersion`,
///   `kind`, `metadata.name`/`generateName`/`namespace` and ownable fields). Its managed fields
///   are read leniently: undecodable ones are reset, as kube-apiserver does.
/// - Only ownable fields of `config` count (see the module docs): through `subresource`
///   `Some("status")` only `status`, otherwise everything but `status`, with `metadata` limited
///   to labels, annotations, finalizers and owner references.
/// - Configured fields take the configuration's values: objects merge, associative lists merge
///   by key, set lists take the union, atomic lists are replaced; a `null` removes the field.
/// - Fields `manager` applied last time but no longer applies are removed unless another
///   manager owns them (or something inside them).
/// - A configured field another manager owns and whose value would change is a conflict; unless
///   `force`, the apply fails with every conflict. Forced, the other managers lose those fields.
/// - `manager`'s Apply entry then holds exactly the configuration's fields (its `time` is set to
///   `now` when the object or the entry changed); entries left empty are dropped.
pub fn apply(
    live: Option<&Value>,
    config: &Value,
    manager: &str,
    subresource: Option<&str>,
    force: bool,
    semantics: &dyn PatchStrategy,
    now: &str,
) -> Result<Value, ApplyError> {
    if !config.is_object() {
        return Err(ApplyError::NotAnObject);
    }
    let api_version = config
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (mut object, mut entries) = match live {
        Some(live) if live.is_object() => (live.clone(), managed_fields(live).unwrap_or_default()),
        _ => (skeleton(config), Vec::new()),
    };
    let mine = entries
        .iter()
        .position(|entry| entry.is(manager, Operation::Apply, api_version, subresource));
    let last_applied = mine
        .map(|index| entries[index].fields.clone())
        .unwrap_or_default();

    let live_view = ownable(&object, subresource);
    let config_view = ownable(config, subresource);
    let config_members = members(&config_view, semantics);
    let mut applied = FieldSet::new();
    for (path, _) in &config_members {
        applied.insert(path);
    }
    let mut merged = merge(&live_view, &config_view, semantics);

    // Prune what this manager stopped applying and nobody else owns.
    let others = entries
        .iter()
        .enumerate()
        .filter(|(index, _)| Some(*index) != mine)
        .fold(FieldSet::new(), |owned, (_, entry)| {
            owned.union(&entry.fields)
        });
    let kept = applied.union(&others);
    for path in last_applied.difference(&kept).paths() {
        if !kept.has_members_below(path.elements()) {
            remove_path(&mut merged, path.elements(), semantics);
        }
    }

    let changes = compare(&live_view, &merged, semantics);
    let mut conflicts = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        if Some(index) == mine {
            continue;
        }
        for path in entry.fields.intersection(&changes.changed).paths() {
            conflicts.push(ApplyConflict {
                manager: entry.manager.clone(),
                operation: entry.operation,
                api_version: entry.api_version.clone(),
                subresource: entry.subresource.clone(),
                field: path.to_string(),
            });
        }
    }
    if !force && !conflicts.is_empty() {
        return Err(ApplyError::Conflicts(ApplyConflicts(conflicts)));
    }
    let taken = changes.changed.union(&changes.removed);
    for (index, entry) in entries.iter_mut().enumerate() {
        if Some(index) != mine {
            entry.fields = entry.fields.difference(&taken);
        }
    }

    for (path, value) in &config_members {
        if value.is_some_and(Value::is_null) {
            remove_path(&mut merged, path, semantics);
        }
    }
    let object_changed = merged != live_view;
    splice(&mut object, merged, subresource);

    match mine {
        Some(index) => {
            let entry = &mut entries[index];
            if object_changed || entry.fields != applied {
                entry.time = Some(now.to_owned());
            }
            entry.fields = applied;
            entry.api_version = api_version.to_owned();
        }
        None => entries.push(ManagedFieldsEntry {
            manager: manager.to_owned(),
            operation: Operation::Apply,
            api_version: api_version.to_owned(),
            time: Some(now.to_owned()),
            subresource: subresource.map(str::to_owned),
            fields: applied,
        }),
    }
    write_managed_fields(&mut object, entries);
    Ok(object)
}

/// The object an apply creates before merging: kind and identity from the configuration.
fn skeleton(config: &Value) -> Value {
    let mut object = Map::new();
    for name in ["apiVersion", "kind"] {
        if let Some(value) = config.get(name) {
            object.insert(name.to_owned(), value.clone());
        }
    }
    let metadata: Map<String, Value> = config
        .get("metadata")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(name, _)| IDENTITY_METADATA.contains(&name.as_str()))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    object.insert("metadata".to_owned(), Value::Object(metadata));
    Value::Object(object)
}
