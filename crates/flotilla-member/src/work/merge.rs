//! Client-side apply's three-way merge, as kubectl computes it (`CreateThreeWayMergePatch`):
//! the patch that brings a member object to a manifest, removing the fields the agent applied
//! last time and the manifest no longer has, and leaving alone the fields someone else set.
//!
//! The three sides are the configuration applied last time (the last-applied annotation), the
//! object to write now (the manifest, prepared by [`super::decide`]), and the live object. The
//! patch is the object to write plus a deletion for everything the last configuration had and
//! the new one lacks: `null` for a map key, `$patch: delete` for an element of a keyed list
//! (containers by name), `$deleteFromPrimitiveList` for a value of a set list (finalizers).
//! Fields only the live object has were never the agent's, so nothing touches them.
//!
//! Built-in kinds take the patch as a strategic merge patch, with Kubernetes' merge keys
//! ([`BuiltinStrategy`]). Custom resources only accept JSON merge patches, where every list is
//! replaced whole: their lists are atomic, except the two lists of `metadata` that hold other
//! parties' entries (owner references and finalizers), which are sent already merged with the
//! live object's, so co-owners and other finalizers survive.

use flotilla_apimachinery::patch::{
    BuiltinStrategy, ListStrategy, PatchError, PatchStrategy, merge_patch, strategic_merge_patch,
};
use serde_json::{Map, Value, json};

/// The API groups Kubernetes itself serves, whose kinds take strategic merge patches.
const BUILTIN_GROUPS: [&str; 23] = [
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "storagemigration.k8s.io",
];

/// How the kinds of an API group merge: decides both how lists are compared and which patch
/// format the member accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KindFamily {
    /// A kind Kubernetes serves itself: lists merge by Kubernetes' merge keys, and patches are
    /// strategic merge patches.
    Builtin,
    /// A custom resource: lists are atomic (apart from owner references and finalizers), and
    /// patches are JSON merge patches.
    Custom,
}

impl KindFamily {
    /// The family of the kinds in API group `group` (`""` for the core group).
    pub fn of(group: &str) -> KindFamily {
        if BUILTIN_GROUPS.contains(&group) {
            KindFamily::Builtin
        } else {
            KindFamily::Custom
        }
    }

    /// How the family's lists merge, for comparisons ([`super::decide::Input::lists`]) and
    /// patches.
    pub fn lists(self) -> &'static (dyn PatchStrategy + Sync) {
        match self {
            KindFamily::Builtin => &BuiltinStrategy,
            KindFamily::Custom => &CustomResourceLists,
        }
    }
}

/// The lists of a custom resource as JSON merge patch treats them: atomic, except
/// `metadata.ownerReferences` (merged by UID) and `metadata.finalizers` (a set). The CRD's
/// schema is not consulted, so `x-kubernetes-list-type: map` lists of custom resources are
/// compared and replaced whole, as kubectl's client-side apply does for them.
#[derive(Debug, Clone, Copy, Default)]
pub struct CustomResourceLists;

impl PatchStrategy for CustomResourceLists {
    fn list_strategy(&self, path: &[&str]) -> ListStrategy {
        match path {
            ["metadata", "ownerReferences"] => ListStrategy::MergeByKey("uid".to_owned()),
            ["metadata", "finalizers"] => ListStrategy::MergePrimitives,
            _ => ListStrategy::Atomic,
        }
    }
}

/// A patch for the member, in the format the kind accepts.
#[derive(Debug, Clone, PartialEq)]
pub enum MemberPatch {
    /// `application/strategic-merge-patch+json` (built-in kinds).
    Strategic(Value),
    /// `application/merge-patch+json` (custom resources).
    Merge(Value),
}

/// The patch that applies `desired` over `live` for a kind of `family`, given `last`, the
/// configuration applied last time (`None` when unknown: nothing is deleted then). Fails only
/// if `live` or the patch is not a JSON object, or a keyed list lacks its keys.
pub fn three_way_patch(
    last: Option<&Value>,
    desired: &Value,
    live: &Value,
    family: KindFamily,
) -> Result<MemberPatch, PatchError> {
    let lists = family.lists();
    let patch = with_deletions(last, desired, &mut Vec::new(), lists);
    match family {
        KindFamily::Builtin => Ok(MemberPatch::Strategic(patch)),
        KindFamily::Custom => {
            let merged = strategic_merge_patch(live, &patch, lists)?;
            Ok(MemberPatch::Merge(whole_lists(
                &patch,
                &merged,
                &mut Vec::new(),
                lists,
            )))
        }
    }
}

/// Whether applying `patch` to `live` would leave it exactly as it is, so the patch need not be
/// sent (kubectl's "unchanged"): the member would only parse, merge, validate and compare it
/// to write nothing. Anything the member would normalize differently (a quantity spelled
/// otherwise) counts as a change, and is sent.
pub fn changes_nothing(patch: &MemberPatch, live: &Value, family: KindFamily) -> bool {
    merged(live, patch, family).is_ok_and(|merged| merged == *live)
}

/// What a member object `live` of a kind of `family` becomes once its API server applies
/// `patch` to it.
pub fn merged(live: &Value, patch: &MemberPatch, family: KindFamily) -> Result<Value, PatchError> {
    match patch {
        MemberPatch::Strategic(patch) => strategic_merge_patch(live, patch, family.lists()),
        MemberPatch::Merge(patch) => Ok(merge_patch(live, patch)),
    }
}

/// The configuration recorded in a live object's last-applied annotation, if it holds one.
pub fn last_applied(live: &Value) -> Option<Value> {
    let text = super::manifest::annotation(live, super::manifest::LAST_APPLIED_ANNOTATION)?;
    serde_json::from_str(text).ok().filter(Value::is_object)
}

/// `desired`, with a deletion for everything `last` has at `path` that `desired` lacks.
fn with_deletions(
    last: Option<&Value>,
    desired: &Value,
    path: &mut Vec<String>,
    lists: &dyn PatchStrategy,
) -> Value {
    let (Some(Value::Object(last)), Value::Object(desired)) = (last, desired) else {
        return desired.clone();
    };
    let mut patch = Map::new();
    let dropped = last.keys().filter(|key| !desired.contains_key(*key));
    for key in desired.keys().chain(dropped) {
        path.push(key.clone());
        patch_field(
            &mut patch,
            key,
            last.get(key),
            desired.get(key),
            path,
            lists,
        );
        path.pop();
    }
    Value::Object(patch)
}

/// Writes into `patch` the field `key` (at `path`) going from `before` to `desired`. A merged
/// list the manifest dropped loses only the elements applied before, not the field: its other
/// elements (others' finalizers, a sidecar) stay.
fn patch_field(
    patch: &mut Map<String, Value>,
    key: &str,
    before: Option<&Value>,
    desired: Option<&Value>,
    path: &mut Vec<String>,
    lists: &dyn PatchStrategy,
) {
    let list = match desired {
        Some(Value::Array(items)) => Some(items.as_slice()),
        None if before.is_some_and(Value::is_array) => Some(&[][..]),
        _ => None,
    };
    match (list, list_strategy(lists, path)) {
        (Some(items), ListStrategy::MergeByKey(merge_key)) => {
            let value = keyed_list(before, items, &merge_key, path, lists);
            patch.insert(key.to_owned(), value);
        }
        (Some(items), ListStrategy::MergePrimitives) => {
            if desired.is_some() {
                patch.insert(key.to_owned(), Value::Array(items.to_vec()));
            }
            let removed: Vec<Value> = elements(before)
                .iter()
                .filter(|old| !items.contains(old))
                .cloned()
                .collect();
            if !removed.is_empty() {
                patch.insert(
                    format!("$deleteFromPrimitiveList/{key}"),
                    Value::Array(removed),
                );
            }
        }
        _ => {
            let value = desired.map_or(Value::Null, |v| with_deletions(before, v, path, lists));
            patch.insert(key.to_owned(), value);
        }
    }
}

/// A keyed list of the patch: the desired elements (with deletions inside the ones `before`
/// had too), then a `$patch: delete` for each element `before` had and the desired list lacks.
fn keyed_list(
    before: Option<&Value>,
    items: &[Value],
    merge_key: &str,
    path: &mut Vec<String>,
    lists: &dyn PatchStrategy,
) -> Value {
    let before = elements(before);
    let same_key = |a: &Value, b: &Value| {
        a.get(merge_key)
            .is_some_and(|k| b.get(merge_key) == Some(k))
    };
    let mut patch: Vec<Value> = items
        .iter()
        .map(|item| {
            let old = before.iter().find(|old| same_key(old, item));
            with_deletions(old, item, path, lists)
        })
        .collect();
    for old in before {
        if let Some(key) = old.get(merge_key)
            && !items.iter().any(|item| same_key(item, old))
        {
            patch.push(json!({merge_key: key, "$patch": "delete"}));
        }
    }
    Value::Array(patch)
}

/// `patch` as a JSON merge patch: every list the strategy merges, and every set list a
/// directive trims, is replaced by the whole list of `merged` (the live object with the patch
/// applied).
fn whole_lists(
    patch: &Value,
    merged: &Value,
    path: &mut Vec<String>,
    lists: &dyn PatchStrategy,
) -> Value {
    let Value::Object(fields) = patch else {
        return patch.clone();
    };
    let mut out = Map::new();
    for (key, value) in fields {
        if let Some(field) = key.strip_prefix("$deleteFromPrimitiveList/") {
            // The set list the directive trims, whole.
            let list = merged.get(field).cloned().unwrap_or(Value::Null);
            out.insert(field.to_owned(), list);
            continue;
        }
        path.push(key.clone());
        let result = merged.get(key).unwrap_or(&Value::Null);
        let value = match (value, list_strategy(lists, path)) {
            (Value::Array(_), ListStrategy::MergeByKey(_) | ListStrategy::MergePrimitives) => {
                result.clone()
            }
            (Value::Object(_), _) => whole_lists(value, result, path, lists),
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
        path.pop();
    }
    Value::Object(out)
}

/// The strategy of the list at `path`.
fn list_strategy(lists: &dyn PatchStrategy, path: &[String]) -> ListStrategy {
    let path: Vec<&str> = path.iter().map(String::as_str).collect();
    lists.list_strategy(&path)
}

/// The elements of a list value (none if it is absent or not a list).
fn elements(list: Option<&Value>) -> &[Value] {
    list.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests;
