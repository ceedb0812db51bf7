//! The placement's immutable records, named, labelled and pruned as KubeFleet does:
//! [`resource`] plans `ClusterResourceSnapshot`s (the selected manifests, hashed and chunked)
//! and [`policy`] plans `ClusterSchedulingPolicySnapshot`s (the policy and its hash). Both
//! create a new index only when the content changes, move `is-latest-snapshot` to it, and
//! keep `revisionHistoryLimit` indices.

pub mod policy;
pub mod resource;

use std::collections::BTreeMap;

use flotilla_api::placement::snapshots::{IS_LATEST_SNAPSHOT_LABEL, PARENT_PLACEMENT_LABEL};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use serde_json::Value;

/// KubeFleet's default `revisionHistoryLimit`.
pub const DEFAULT_HISTORY_LIMIT: usize = 10;

/// The placement the snapshots belong to.
#[derive(Clone, Debug)]
pub struct Owner {
    /// The placement's name.
    pub name: String,
    /// The placement's generation (recorded on policy snapshots).
    pub generation: i64,
    /// The owner reference every snapshot carries, so deleting the placement deletes them.
    pub reference: OwnerReference,
}

/// Hex SHA-256 of the canonical JSON text of `value` (key order does not matter).
pub fn hash(value: &Value) -> String {
    let text = flotilla_apimachinery::canonical::to_string(value);
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// The snapshots of one placement that lose `is-latest-snapshot` and the ones that are pruned,
/// given the index that is now the latest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Housekeeping {
    /// Snapshots labelled latest that are not of the latest index.
    pub no_longer_latest: Vec<String>,
    /// Snapshots of indices beyond the history limit (oldest first).
    pub delete: Vec<String>,
}

/// One existing snapshot: its name, index and whether it is labelled latest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Indexed {
    pub name: String,
    pub index: u64,
    pub latest: bool,
}

/// Which snapshots to relabel and prune once `latest` is the latest index, keeping `limit`
/// indices (at least 1).
pub(crate) fn housekeeping(existing: &[Indexed], latest: u64, limit: usize) -> Housekeeping {
    let no_longer_latest = existing
        .iter()
        .filter(|s| s.latest && s.index != latest)
        .map(|s| s.name.clone())
        .collect();
    let mut indices: Vec<u64> = existing.iter().map(|s| s.index).collect();
    indices.push(latest);
    indices.sort_unstable();
    indices.dedup();
    let keep_from = indices
        .len()
        .checked_sub(limit.max(1))
        .map(|cut| indices[cut])
        .unwrap_or(0);
    let mut old: Vec<&Indexed> = existing.iter().filter(|s| s.index < keep_from).collect();
    old.sort_by_key(|s| (s.index, s.name.clone()));
    Housekeeping {
        no_longer_latest,
        delete: old.into_iter().map(|s| s.name.clone()).collect(),
    }
}

/// The metadata of a new snapshot: name, labels (parent, index label, latest) and the owner.
pub(crate) fn metadata(
    owner: &Owner,
    name: String,
    index_label: (&str, u64),
    annotations: BTreeMap<String, String>,
) -> ObjectMeta {
    let labels = BTreeMap::from([
        (PARENT_PLACEMENT_LABEL.to_string(), owner.name.clone()),
        (index_label.0.to_string(), index_label.1.to_string()),
        (IS_LATEST_SNAPSHOT_LABEL.to_string(), "true".to_string()),
    ]);
    ObjectMeta {
        name: Some(name),
        labels: Some(labels),
        annotations: (!annotations.is_empty()).then_some(annotations),
        owner_references: Some(vec![owner.reference.clone()]),
        ..ObjectMeta::default()
    }
}

/// The index recorded in label `key` of `labels`, if it is a number.
pub(crate) fn label_index(labels: Option<&BTreeMap<String, String>>, key: &str) -> Option<u64> {
    labels?.get(key)?.parse().ok()
}

/// Whether `labels` mark the snapshot latest.
pub(crate) fn labelled_latest(labels: Option<&BTreeMap<String, String>>) -> bool {
    labels
        .and_then(|l| l.get(IS_LATEST_SNAPSHOT_LABEL))
        .is_some_and(|v| v == "true")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn indexed(name: &str, index: u64, latest: bool) -> Indexed {
        Indexed {
            name: name.into(),
            index,
            latest,
        }
    }

    #[test]
    fn hash_ignores_key_order() {
        assert_eq!(
            hash(&json!({"a": 1, "b": 2})),
            hash(&json!({"b": 2, "a": 1}))
        );
        assert_ne!(hash(&json!({"a": 1})), hash(&json!({"a": 2})));
        assert_eq!(hash(&json!({})).len(), 64);
    }

    #[test]
    fn housekeeping_moves_latest_and_keeps_the_newest_indices() {
        let existing = [
            indexed("p-0-snapshot", 0, false),
            indexed("p-1-snapshot", 1, false),
            indexed("p-1-0", 1, false),
            indexed("p-2-snapshot", 2, true),
        ];
        assert_eq!(
            housekeeping(&existing, 3, 2),
            Housekeeping {
                no_longer_latest: vec!["p-2-snapshot".into()],
                delete: vec!["p-0-snapshot".into(), "p-1-0".into(), "p-1-snapshot".into()],
            }
        );
        assert_eq!(
            housekeeping(&existing, 2, 10),
            Housekeeping::default(),
            "nothing to do when the latest stays and the history fits"
        );
        assert_eq!(
            housekeeping(&existing, 3, 0).delete.len(),
            4,
            "limit 0 keeps one"
        );
    }
}
