//! Merging an applied configuration into the live object (structured-merge-diff's `Merge`).

use serde_json::Value;

use super::object::{ListKind, list_kind};
use super::path::PathElement;
use crate::patch::PatchStrategy;

/// `config` merged over `live`: objects merge field by field (config wins on leaves),
/// associative lists merge by key, set lists take the union, everything else (atomic lists,
/// scalars, type changes) is replaced by the configuration. `null`s from the configuration are
/// kept; the caller removes them once conflicts are known.
pub(crate) fn merge(live: &Value, config: &Value, semantics: &dyn PatchStrategy) -> Value {
    merge_at(live, config, &mut Vec::new(), semantics)
}

fn merge_at<'v>(
    live: &'v Value,
    config: &'v Value,
    names: &mut Vec<&'v str>,
    semantics: &dyn PatchStrategy,
) -> Value {
    match (live, config) {
        (Value::Object(live), Value::Object(config)) => {
            let mut merged = live.clone();
            for (name, value) in config {
                let value = match live.get(name) {
                    Some(current) => {
                        names.push(name);
                        let value = merge_at(current, value, names, semantics);
                        names.pop();
                        value
                    }
                    None => value.clone(),
                };
                merged.insert(name.clone(), value);
            }
            Value::Object(merged)
        }
        (Value::Array(live_items), Value::Array(config_items)) => {
            match (
                list_kind(live_items, names, semantics),
                list_kind(config_items, names, semantics),
            ) {
                (ListKind::Map(live_keys), ListKind::Map(config_keys)) => {
                    Value::Array(merge_keyed(
                        live_items,
                        &live_keys,
                        config_items,
                        &config_keys,
                        &mut |live, config| merge_at(live, config, names, semantics),
                    ))
                }
                (ListKind::Set(live_keys), ListKind::Set(config_keys)) => {
                    Value::Array(merge_keyed(
                        live_items,
                        &live_keys,
                        config_items,
                        &config_keys,
                        &mut |_, config| config.clone(),
                    ))
                }
                _ => config.clone(),
            }
        }
        _ => config.clone(),
    }
}

/// Merges two keyed lists. Live-only elements keep their places; configured elements appear in
/// the configuration's order, each new one just before the next element the two lists share.
fn merge_keyed<'v>(
    live: &'v [Value],
    live_keys: &[PathElement],
    config: &'v [Value],
    config_keys: &[PathElement],
    merge_item: &mut dyn FnMut(&'v Value, &'v Value) -> Value,
) -> Vec<Value> {
    let mut merged = Vec::with_capacity(live.len() + config.len());
    let mut emit = |index: usize, merged: &mut Vec<Value>| {
        let value = match live_keys.iter().position(|key| *key == config_keys[index]) {
            Some(live_index) => merge_item(&live[live_index], &config[index]),
            None => config[index].clone(),
        };
        merged.push(value);
    };
    let mut next = 0;
    for (item, key) in live.iter().zip(live_keys) {
        match config_keys.iter().position(|candidate| candidate == key) {
            None => merged.push(item.clone()),
            Some(index) if index < next => {}
            Some(index) => {
                for config_index in next..=index {
                    emit(config_index, &mut merged);
                }
                next = index + 1;
            }
        }
    }
    for config_index in next..config.len() {
        emit(config_index, &mut merged);
    }
    merged
}
