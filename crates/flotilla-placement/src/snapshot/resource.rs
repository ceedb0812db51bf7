//! Resource snapshots: the selected manifests of one index, in chunks.
//!
//! Index `i` of placement `p` is `p-i-snapshot` (the first chunk, annotated with the number of
//! chunks and the hash of all manifests) followed by `p-i-0`, `p-i-1`, … for further chunks,
//! each annotated with its subindex. A chunk holds manifests up to [`CHUNK_BYTES`] of JSON
//! (always at least one), keeping every object well under the store's object size limit.

use std::collections::BTreeMap;

use flotilla_api::placement::ClusterResourceSnapshot;
use flotilla_api::placement::snapshots::{
    NUMBER_OF_RESOURCE_SNAPSHOTS_ANNOTATION, RESOURCE_GROUP_HASH_ANNOTATION, RESOURCE_INDEX_LABEL,
    ResourceSnapshotSpec, SUBINDEX_ANNOTATION,
};
use serde_json::Value;

use super::{Housekeeping, Indexed, Owner, hash, housekeeping, label_index, labelled_latest};

/// Most JSON bytes of manifests in one chunk (KubeFleet's 800 KB).
pub const CHUNK_BYTES: usize = 800 * 1000;

/// What to write so that the latest resource snapshot records `manifests`.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceSnapshotPlan {
    /// The latest index once the plan is carried out.
    pub index: u64,
    /// The name of the index's first chunk (what bindings point at).
    pub name: String,
    /// The hash of the manifests.
    pub hash: String,
    /// Chunks to create: further chunks first, the first chunk last, so a reader that finds
    /// the first chunk finds the whole index.
    pub create: Vec<ClusterResourceSnapshot>,
    /// Relabelling and pruning of older indices.
    pub housekeeping: Housekeeping,
}

/// The name of index `index`'s first chunk.
pub fn first_chunk_name(placement: &str, index: u64) -> String {
    format!("{placement}-{index}-snapshot")
}

/// The index named by a first chunk's name `<placement>-<index>-snapshot`.
pub fn index_of(placement: &str, first_chunk: &str) -> Option<u64> {
    first_chunk
        .strip_prefix(placement)?
        .strip_prefix('-')?
        .strip_suffix("-snapshot")?
        .parse()
        .ok()
}

/// The index of the latest resource snapshot among `existing` (the highest labelled latest).
pub fn latest_index(existing: &[ClusterResourceSnapshot]) -> Option<u64> {
    existing
        .iter()
        .filter(|s| labelled_latest(s.metadata.labels.as_ref()))
        .filter_map(|s| label_index(s.metadata.labels.as_ref(), RESOURCE_INDEX_LABEL))
        .max()
}

/// The manifests of index `index`, in order, if every chunk of it is among `existing`.
pub fn manifests_of(existing: &[ClusterResourceSnapshot], index: u64) -> Option<Vec<Value>> {
    let chunks: Vec<&ClusterResourceSnapshot> = existing
        .iter()
        .filter(|s| label_index(s.metadata.labels.as_ref(), RESOURCE_INDEX_LABEL) == Some(index))
        .collect();
    let first = chunks
        .iter()
        .find(|s| annotation(s, NUMBER_OF_RESOURCE_SNAPSHOTS_ANNOTATION).is_some())?;
    let count: usize = annotation(first, NUMBER_OF_RESOURCE_SNAPSHOTS_ANNOTATION)?
        .parse()
        .ok()?;
    let mut manifests = first.spec.selected_resources.clone();
    for sub in 0..count.saturating_sub(1) {
        let chunk = chunks
            .iter()
            .find(|s| annotation(s, SUBINDEX_ANNOTATION) == Some(&sub.to_string()))?;
        manifests.extend(chunk.spec.selected_resources.iter().cloned());
    }
    Some(manifests)
}

/// Plans the resource snapshots of `owner` for `manifests`, given its `existing` snapshots:
/// nothing new when the latest index already records them (missing chunks of it are
/// recreated), otherwise a new index one above the highest.
pub fn plan(
    owner: &Owner,
    existing: &[ClusterResourceSnapshot],
    manifests: &[Value],
    history_limit: usize,
) -> ResourceSnapshotPlan {
    let manifests_hash = hash(&Value::Array(manifests.to_vec()));
    let indexed: Vec<Indexed> = existing
        .iter()
        .filter_map(|s| {
            Some(Indexed {
                name: s.metadata.name.clone()?,
                index: label_index(s.metadata.labels.as_ref(), RESOURCE_INDEX_LABEL)?,
                latest: labelled_latest(s.metadata.labels.as_ref()),
            })
        })
        .collect();
    let current = latest_index(existing).filter(|&index| {
        existing.iter().any(|s| {
            label_index(s.metadata.labels.as_ref(), RESOURCE_INDEX_LABEL) == Some(index)
                && annotation(s, RESOURCE_GROUP_HASH_ANNOTATION) == Some(&manifests_hash)
        })
    });
    let index = current.unwrap_or_else(|| indexed.iter().map(|s| s.index + 1).max().unwrap_or(0));
    let exists = |name: &str| indexed.iter().any(|s| s.name == name);
    let create = chunks(owner, index, manifests, &manifests_hash)
        .into_iter()
        .filter(|s| !exists(s.metadata.name.as_deref().unwrap_or_default()))
        .collect();
    ResourceSnapshotPlan {
        index,
        name: first_chunk_name(&owner.name, index),
        hash: manifests_hash,
        create,
        housekeeping: housekeeping(&indexed, index, history_limit),
    }
}

/// Every chunk of index `index`, further chunks first.
fn chunks(
    owner: &Owner,
    index: u64,
    manifests: &[Value],
    group_hash: &str,
) -> Vec<ClusterResourceSnapshot> {
    let groups = split(manifests, CHUNK_BYTES);
    let count = groups.len();
    let mut snapshots: Vec<ClusterResourceSnapshot> = groups
        .iter()
        .enumerate()
        .skip(1)
        .map(|(position, group)| {
            let sub = position - 1;
            let annotations = BTreeMap::from([(SUBINDEX_ANNOTATION.to_string(), sub.to_string())]);
            snapshot(
                owner,
                format!("{}-{index}-{sub}", owner.name),
                index,
                annotations,
                group,
            )
        })
        .collect();
    let annotations = BTreeMap::from([
        (
            NUMBER_OF_RESOURCE_SNAPSHOTS_ANNOTATION.to_string(),
            count.to_string(),
        ),
        (
            RESOURCE_GROUP_HASH_ANNOTATION.to_string(),
            group_hash.to_string(),
        ),
    ]);
    snapshots.push(snapshot(
        owner,
        first_chunk_name(&owner.name, index),
        index,
        annotations,
        &groups[0],
    ));
    snapshots
}

fn snapshot(
    owner: &Owner,
    name: String,
    index: u64,
    annotations: BTreeMap<String, String>,
    manifests: &[Value],
) -> ClusterResourceSnapshot {
    ClusterResourceSnapshot {
        metadata: super::metadata(owner, name, (RESOURCE_INDEX_LABEL, index), annotations),
        spec: ResourceSnapshotSpec {
            selected_resources: manifests.to_vec(),
        },
        status: None,
    }
}

/// Splits `manifests` into consecutive groups of at most `limit` JSON bytes (a manifest larger
/// than `limit` gets a group of its own); always at least one group.
fn split(manifests: &[Value], limit: usize) -> Vec<Vec<Value>> {
    let mut groups: Vec<Vec<Value>> = vec![Vec::new()];
    let mut size = 0;
    for manifest in manifests {
        let bytes = manifest.to_string().len();
        let group = groups.last_mut().expect("at least one group");
        if !group.is_empty() && size + bytes > limit {
            groups.push(vec![manifest.clone()]);
            size = bytes;
        } else {
            group.push(manifest.clone());
            size += bytes;
        }
    }
    groups
}

fn annotation<'a>(snapshot: &'a ClusterResourceSnapshot, key: &str) -> Option<&'a String> {
    snapshot.metadata.annotations.as_ref()?.get(key)
}

#[cfg(test)]
mod tests {
    use flotilla_api::placement::snapshots::IS_LATEST_SNAPSHOT_LABEL;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn owner() -> Owner {
        Owner {
            name: "crp".into(),
            generation: 1,
            reference: OwnerReference {
                api_version: "placement.kubernetes-fleet.io/v1beta1".into(),
                kind: "ClusterResourcePlacement".into(),
                name: "crp".into(),
                uid: "u".into(),
                ..OwnerReference::default()
            },
        }
    }

    fn config_map(name: &str, bytes: usize) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "app"},
            "data": {"blob": "x".repeat(bytes)}})
    }

    /// Applies `plan` to `existing` as the controller would.
    fn carry_out(existing: &mut Vec<ClusterResourceSnapshot>, plan: &ResourceSnapshotPlan) {
        existing.extend(plan.create.iter().cloned());
        for s in existing.iter_mut() {
            let name = s.metadata.name.clone().unwrap();
            if plan.housekeeping.no_longer_latest.contains(&name) {
                s.metadata
                    .labels
                    .as_mut()
                    .unwrap()
                    .insert(IS_LATEST_SNAPSHOT_LABEL.into(), "false".into());
            }
        }
        existing.retain(|s| {
            !plan
                .housekeeping
                .delete
                .contains(s.metadata.name.as_ref().unwrap())
        });
    }

    #[test]
    fn first_snapshot_is_index_zero_and_unchanged_content_makes_no_new_one() {
        let manifests = vec![config_map("a", 10)];
        let mut existing = Vec::new();
        let first = plan(&owner(), &existing, &manifests, 10);
        assert_eq!((first.index, first.name.as_str()), (0, "crp-0-snapshot"));
        assert_eq!(index_of("crp", &first.name), Some(0));
        assert_eq!(index_of("crp", "crp-x-snapshot"), None);
        assert_eq!(index_of("cr", "crp-0-snapshot"), None);
        assert_eq!(first.create.len(), 1);
        let labels = first.create[0].metadata.labels.clone().unwrap();
        assert_eq!(labels["kubernetes-fleet.io/parent-CRP"], "crp");
        assert_eq!(labels["kubernetes-fleet.io/resource-index"], "0");
        assert_eq!(labels["kubernetes-fleet.io/is-latest-snapshot"], "true");
        carry_out(&mut existing, &first);
        let again = plan(&owner(), &existing, &manifests, 10);
        assert!(again.create.is_empty());
        assert_eq!(again.housekeeping, Housekeeping::default());
        assert_eq!(manifests_of(&existing, 0), Some(manifests));
    }

    #[test]
    fn changed_content_makes_the_next_index_latest_and_prunes_history() {
        let mut existing = Vec::new();
        for round in 0..4 {
            let plan = plan(
                &owner(),
                &existing,
                &[config_map(&format!("v{round}"), 10)],
                2,
            );
            assert_eq!(plan.index, round);
            carry_out(&mut existing, &plan);
        }
        let names: Vec<_> = existing
            .iter()
            .map(|s| s.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(names, ["crp-2-snapshot", "crp-3-snapshot"]);
        assert_eq!(latest_index(&existing), Some(3));
    }

    #[test]
    fn large_selections_are_chunked_and_read_back_in_order() {
        let manifests: Vec<Value> = (0..5)
            .map(|i| config_map(&format!("m{i}"), 300_000))
            .collect();
        let mut existing = Vec::new();
        let plan = plan(&owner(), &existing, &manifests, 10);
        let names: Vec<_> = plan
            .create
            .iter()
            .map(|s| s.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(names, ["crp-0-0", "crp-0-1", "crp-0-snapshot"]);
        let first = plan
            .create
            .last()
            .unwrap()
            .metadata
            .annotations
            .clone()
            .unwrap();
        assert_eq!(
            first["kubernetes-fleet.io/number-of-resource-snapshots"],
            "3"
        );
        carry_out(&mut existing, &plan);
        assert_eq!(manifests_of(&existing, 0), Some(manifests.clone()));
        existing.retain(|s| s.metadata.name.as_deref() != Some("crp-0-1"));
        assert_eq!(
            manifests_of(&existing, 0),
            None,
            "an incomplete index is not read"
        );
        let repair = super::plan(&owner(), &existing, &manifests, 10);
        let names: Vec<_> = repair
            .create
            .iter()
            .map(|s| s.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(names, ["crp-0-1"], "only the missing chunk is recreated");
    }

    #[test]
    fn an_empty_selection_is_still_a_snapshot() {
        let plan = plan(&owner(), &[], &[], 10);
        assert_eq!(plan.create.len(), 1);
        assert!(plan.create[0].spec.selected_resources.is_empty());
    }

    proptest! {
        #[test]
        fn chunks_keep_every_manifest_in_order_within_the_limit(sizes in proptest::collection::vec(0usize..2000, 0..40), limit in 500usize..5000) {
            let manifests: Vec<Value> = sizes.iter().enumerate().map(|(i, &n)| config_map(&format!("m{i}"), n)).collect();
            let groups = split(&manifests, limit);
            prop_assert!(!groups.is_empty());
            prop_assert_eq!(groups.concat(), manifests);
            for group in &groups {
                let bytes: usize = group.iter().map(|m| m.to_string().len()).sum();
                prop_assert!(group.len() <= 1 || bytes <= limit);
            }
        }
    }
}
