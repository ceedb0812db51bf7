//! Strategic merge patch (`application/strategic-merge-patch+json`), the subset kubectl sends
//! for built-in kinds.
//!
//! The algorithm follows `k8s.io/apimachinery/pkg/util/strategicpatch` (`mergeMap`,
//! `mergeSlice`, `mergePatchIntoOriginal`, `normalizeElementOrder`) with its apiserver options
//! (parallel lists merged, unmatched nulls ignored). Because objects here stay untyped JSON,
//! values copied from the patch are cleaned of directives and nulls the way decoding into a Go
//! struct would drop them.

use serde_json::{Map, Value};

use super::PatchError;
use super::strategy::{ListStrategy, PatchStrategy};

const PATCH_DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

/// Applies a strategic merge patch to `target` and returns the result; `target` is untouched.
///
/// Maps merge recursively and `null` deletes a key. Lists are replaced unless `strategy` gives
/// them a merge strategy: lists of objects merge by their merge key, lists of scalars merge as a
/// set union. Supported directives: `$patch: replace | delete | merge` on maps and on elements
/// of keyed lists, `$setElementOrder/<field>`, `$deleteFromPrimitiveList/<field>` and
/// `$retainKeys`. Both `target` and `patch` must be JSON objects.
pub fn strategic_merge_patch(
    target: &Value,
    patch: &Value,
    strategy: &dyn PatchStrategy,
) -> Result<Value, PatchError> {
    let Value::Object(target) = target else {
        return Err(PatchError::NotAnObject("the patched object"));
    };
    let Value::Object(patch) = patch else {
        return Err(PatchError::NotAnObject("a strategic merge patch"));
    };
    Merger { strategy }
        .merge_map(target.clone(), patch, &mut Vec::new())
        .map(Value::Object)
}

/// How list elements are identified while merging and ordering.
#[derive(Debug, Clone, Copy)]
enum Kind<'k> {
    /// Scalars identify themselves.
    Scalar,
    /// Objects are identified by the value of their merge key.
    Keyed(&'k str),
}

impl Kind<'_> {
    fn identity(self, item: &Value) -> Option<&Value> {
        match self {
            Kind::Scalar => Some(item),
            Kind::Keyed(key) => item.get(key),
        }
    }

    /// The index in `list` of the element with the same identity as `item`.
    fn position(self, list: &[&Value], item: &Value) -> Option<usize> {
        let id = self.identity(item)?;
        list.iter()
            .position(|candidate| self.identity(candidate) == Some(id))
    }
}

struct Merger<'s> {
    strategy: &'s dyn PatchStrategy,
}

impl Merger<'_> {
    fn merge_map<'p>(
        &self,
        mut original: Map<String, Value>,
        patch: &'p Map<String, Value>,
        path: &mut Vec<&'p str>,
    ) -> Result<Map<String, Value>, PatchError> {
        match patch.get(PATCH_DIRECTIVE).map(|d| (d, d.as_str())) {
            None | Some((_, Some("merge"))) => {}
            Some((_, Some("replace"))) => original = Map::new(),
            Some((_, Some("delete"))) => return Ok(Map::new()),
            Some((directive, _)) => {
                return Err(invalid(
                    path,
                    format!("unknown $patch directive {directive}"),
                ));
            }
        }
        if let Some(retain) = patch.get(RETAIN_KEYS) {
            apply_retain_keys(&mut original, patch, retain, path)?;
        }

        let mut ordered: Vec<&str> = Vec::new();
        for (key, order) in patch {
            let Some(field) = key.strip_prefix(SET_ELEMENT_ORDER) else {
                continue;
            };
            path.push(field);
            let merged = self.set_element_order(original.get(field), patch.get(field), order, path);
            path.pop();
            if let Some(list) = merged? {
                original.insert(field.to_owned(), Value::Array(list));
            }
            ordered.push(field);
        }

        for (key, value) in patch {
            if key == PATCH_DIRECTIVE
                || key == RETAIN_KEYS
                || key.starts_with(SET_ELEMENT_ORDER)
                || ordered.contains(&key.as_str())
            {
                continue;
            }
            if let Some(field) = key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
                let Value::Array(remove) = value else {
                    return Err(invalid(path, format!("{key} must be a list")));
                };
                if let Some(Value::Array(list)) = original.get_mut(field) {
                    list.retain(|item| !remove.contains(item));
                }
                continue;
            }
            if key.starts_with('$') {
                return Err(invalid(path, format!("unknown directive {key:?}")));
            }
            if value.is_null() {
                original.shift_remove(key);
                continue;
            }
            path.push(key);
            // Taken, not cloned: the slot keeps its position and is overwritten below.
            let merged = match (original.get_mut(key).map(Value::take), value) {
                (Some(Value::Object(live)), Value::Object(patch)) => {
                    self.merge_map(live, patch, path).map(Value::Object)
                }
                (Some(Value::Array(live)), Value::Array(patch)) => {
                    self.merge_list(&live, patch, path)
                }
                (_, value) => self.fresh(value, path),
            };
            path.pop();
            original.insert(key.clone(), merged?);
        }
        Ok(original)
    }

    /// A patch value that has nothing to merge with: merged into emptiness, which drops nulls
    /// and resolves directives.
    fn fresh<'p>(&self, value: &'p Value, path: &mut Vec<&'p str>) -> Result<Value, PatchError> {
        match value {
            Value::Object(patch) => self.merge_map(Map::new(), patch, path).map(Value::Object),
            Value::Array(patch) => self.merge_list(&[], patch, path),
            scalar => Ok(scalar.clone()),
        }
    }

    fn merge_list<'p>(
        &self,
        original: &[Value],
        patch: &'p [Value],
        path: &mut Vec<&'p str>,
    ) -> Result<Value, PatchError> {
        let merged = match self.strategy.list_strategy(path) {
            ListStrategy::Atomic => patch
                .iter()
                .map(|item| self.fresh(item, path))
                .collect::<Result<_, _>>()?,
            ListStrategy::MergeByKey(key) => self.merge_slice(original, patch, Some(&key), path)?,
            ListStrategy::MergePrimitives => self.merge_slice(original, patch, None, path)?,
        };
        Ok(Value::Array(merged))
    }

    /// Go's `mergeSlice`: union of scalars, or objects merged by key with `$patch` elements.
    fn merge_slice<'p>(
        &self,
        original: &[Value],
        patch: &'p [Value],
        merge_key: Option<&str>,
        path: &mut Vec<&'p str>,
    ) -> Result<Vec<Value>, PatchError> {
        if original.is_empty() && patch.is_empty() {
            return Ok(Vec::new());
        }
        match element_kind(&[original, patch], merge_key, path)? {
            Kind::Scalar => {
                let mut merged: Vec<Value> = Vec::new();
                for item in original.iter().chain(patch) {
                    if !merged.contains(item) {
                        merged.push(item.clone());
                    }
                }
                let patch_order: Vec<&Value> = patch.iter().collect();
                let server_order: Vec<&Value> = original.iter().collect();
                Ok(order_merged(
                    merged,
                    &patch_order,
                    &server_order,
                    Kind::Scalar,
                ))
            }
            Kind::Keyed(key) => {
                let kind = Kind::Keyed(key);
                let special = special_elements(original, patch, key, path)?;
                let mut merged = special.original.clone();
                for &(_, item) in &special.items {
                    let id = item
                        .get(key)
                        .ok_or_else(|| missing_merge_key(item, key, path))?;
                    match merged.iter().position(|live| live.get(key) == Some(id)) {
                        Some(index) => {
                            let live = merged[index]
                                .as_object_mut()
                                .map(std::mem::take)
                                .unwrap_or_default();
                            merged[index] = Value::Object(self.merge_map(live, item, path)?);
                        }
                        None => {
                            merged.push(Value::Object(self.merge_map(Map::new(), item, path)?))
                        }
                    }
                }
                let patch_order: Vec<&Value> =
                    special.items.iter().map(|(element, _)| *element).collect();
                let server_order: Vec<&Value> = special.original.iter().collect();
                Ok(order_merged(merged, &patch_order, &server_order, kind))
            }
        }
    }

    /// Go's `mergePatchIntoOriginal` for one `$setElementOrder/<field>` directive: merges the
    /// parallel list (if the patch has one) and orders the result. `None` when neither the
    /// object nor the patch has the list.
    fn set_element_order<'p>(
        &self,
        original: Option<&Value>,
        patch_list: Option<&'p Value>,
        order: &'p Value,
        path: &mut Vec<&'p str>,
    ) -> Result<Option<Vec<Value>>, PatchError> {
        let Value::Array(order) = order else {
            return Err(invalid(path, "$setElementOrder must be a list"));
        };
        let merge_key = match self.strategy.list_strategy(path) {
            ListStrategy::MergeByKey(key) => Some(key),
            ListStrategy::MergePrimitives => None,
            ListStrategy::Atomic => {
                return Err(invalid(
                    path,
                    "$setElementOrder is only allowed on lists with a merge strategy",
                ));
            }
        };
        let patch_list = match patch_list {
            None => None,
            Some(Value::Array(list)) => Some(list.as_slice()),
            Some(_) => {
                return Err(invalid(path, "a list with $setElementOrder must be a list"));
            }
        };
        let original_list = match original {
            Some(Value::Array(list)) => list.as_slice(),
            _ => &[],
        };
        if original.is_none() && patch_list.is_none() {
            return Ok(None);
        }
        let patch_items = patch_list.unwrap_or(&[]);
        let kind = element_kind(
            &[original_list, patch_items, order],
            merge_key.as_deref(),
            path,
        )?;
        validate_order(patch_items, order, kind, path)?;
        let merged = match patch_list {
            Some(patch_list) => {
                self.merge_slice(original_list, patch_list, merge_key.as_deref(), path)?
            }
            None => original_list.to_vec(),
        };
        let order: Vec<&Value> = order.iter().collect();
        let server_order: Vec<&Value> = original_list.iter().collect();
        Ok(Some(order_merged(merged, &order, &server_order, kind)))
    }
}

/// The result of removing `$patch` elements from a keyed patch list.
struct SpecialElements<'p> {
    /// The live list after `$patch: delete` elements (or empty after `$patch: replace`).
    original: Vec<Value>,
    /// The patch elements to merge, as values and as objects.
    items: Vec<(&'p Value, &'p Map<String, Value>)>,
}

/// Go's `mergeSliceWithSpecialElements`. A `{"$patch": "merge"}` element only restates the
/// default and is dropped (an element carrying data as well is merged normally).
fn special_elements<'p>(
    original: &[Value],
    patch: &'p [Value],
    key: &str,
    path: &[&str],
) -> Result<SpecialElements<'p>, PatchError> {
    let mut original = original.to_vec();
    let mut items = Vec::new();
    let mut replace = false;
    for element in patch {
        let Value::Object(item) = element else {
            return Err(invalid(path, "list elements have different types"));
        };
        match item.get(PATCH_DIRECTIVE).map(|d| (d, d.as_str())) {
            None => items.push((element, item)),
            Some((_, Some("delete"))) => {
                let id = item
                    .get(key)
                    .ok_or_else(|| missing_merge_key(item, key, path))?;
                original.retain(|live| live.get(key) != Some(id));
            }
            Some((_, Some("replace"))) => replace = true,
            Some((_, Some("merge"))) => {
                if item.contains_key(key) {
                    items.push((element, item));
                }
            }
            Some((directive, _)) => {
                return Err(invalid(
                    path,
                    format!("unknown $patch directive {directive}"),
                ));
            }
        }
    }
    if replace {
        original.clear();
    }
    Ok(SpecialElements { original, items })
}

/// Go's `sliceElementType`: all objects (merged by key), or all scalars.
fn element_kind<'k>(
    lists: &[&[Value]],
    merge_key: Option<&'k str>,
    path: &[&str],
) -> Result<Kind<'k>, PatchError> {
    let items = || lists.iter().flat_map(|list| list.iter());
    if items().any(Value::is_array) {
        return Err(invalid(path, "lists of lists cannot be merged"));
    }
    let objects = items().filter(|item| item.is_object()).count();
    if objects == 0 {
        return Ok(Kind::Scalar);
    }
    if objects != items().count() {
        return Err(invalid(path, "list elements have different types"));
    }
    merge_key
        .map(Kind::Keyed)
        .ok_or_else(|| invalid(path, "cannot merge lists of objects without a merge key"))
}

/// Go's `validatePatchWithSetOrderList`: the patch list must follow `$setElementOrder`.
fn validate_order(
    patch: &[Value],
    order: &[Value],
    kind: Kind<'_>,
    path: &[&str],
) -> Result<(), PatchError> {
    let items: Vec<&Value> = patch
        .iter()
        .filter(|item| item.get(PATCH_DIRECTIVE).is_none())
        .collect();
    let mut next = 0;
    for entry in order {
        if next == items.len() {
            break;
        }
        if kind.identity(items[next]).is_some()
            && kind.identity(items[next]) == kind.identity(entry)
        {
            next += 1;
        }
    }
    if next < items.len() {
        return Err(invalid(
            path,
            "the order of the patch list does not match its $setElementOrder list",
        ));
    }
    Ok(())
}

/// Go's `normalizeElementOrder`: items named by `patch_order` follow it, the others keep the
/// live order, and the two sequences are interleaved by their live positions.
fn order_merged(
    merged: Vec<Value>,
    patch_order: &[&Value],
    server_order: &[&Value],
    kind: Kind<'_>,
) -> Vec<Value> {
    let (mut in_patch, mut server_only): (Vec<Value>, Vec<Value>) = merged
        .into_iter()
        .partition(|item| kind.position(patch_order, item).is_some());
    in_patch.sort_by_key(|item| kind.position(patch_order, item));
    server_only.sort_by_key(|item| kind.position(server_order, item).unwrap_or(usize::MAX));

    // Go's `mergeSortedSlice`: a server-only item goes first only when both it and the next
    // patch item have live positions and it comes earlier.
    let mut result = Vec::with_capacity(in_patch.len() + server_only.len());
    let mut left = server_only.into_iter().peekable();
    let mut right = in_patch.into_iter().peekable();
    while let (Some(l), Some(r)) = (left.peek(), right.peek()) {
        let left_first = matches!(
            (kind.position(server_order, l), kind.position(server_order, r)),
            (Some(a), Some(b)) if a < b
        );
        result.extend(if left_first {
            left.next()
        } else {
            right.next()
        });
    }
    result.extend(left);
    result.extend(right);
    result
}

/// Go's `applyRetainKeysDirective`: keep only the listed keys of the live map.
fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &Map<String, Value>,
    retain: &Value,
    path: &[&str],
) -> Result<(), PatchError> {
    let keys: Vec<&str> = retain
        .as_array()
        .and_then(|keys| keys.iter().map(Value::as_str).collect())
        .ok_or_else(|| invalid(path, "$retainKeys must be a list of strings"))?;
    if let Some((key, _)) = patch.iter().find(|(key, value)| {
        !value.is_null() && !key.starts_with('$') && !keys.contains(&key.as_str())
    }) {
        return Err(invalid(
            path,
            format!("field {key:?} is in the patch but not in $retainKeys"),
        ));
    }
    original.retain(|key, _| keys.contains(&key.as_str()));
    Ok(())
}

fn missing_merge_key(item: &Map<String, Value>, key: &str, path: &[&str]) -> PatchError {
    invalid(
        path,
        format!(
            "map: {} does not contain declared merge key: {key}",
            Value::Object(item.clone())
        ),
    )
}

fn invalid(path: &[&str], message: impl Into<String>) -> PatchError {
    PatchError::InvalidStrategicPatch {
        path: if path.is_empty() {
            ".".to_owned()
        } else {
            path.iter().map(|name| format!(".{name}")).collect()
        },
        message: message.into(),
    }
}
