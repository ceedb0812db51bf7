//! Scheduling policy snapshots: `p-<index>`, one per distinct policy of placement `p`.
//!
//! The hash covers the policy without `numberOfClusters`: changing only the number of clusters
//! of a PickN policy keeps the snapshot (and so every binding made under it) and updates its
//! `number-of-clusters` annotation, so scaling does not reschedule what is already placed.

use std::collections::BTreeMap;

use base64::Engine;
use flotilla_api::placement::ClusterSchedulingPolicySnapshot;
use flotilla_api::placement::policy::{PlacementPolicy, PlacementType};
use flotilla_api::placement::snapshots::{
    NUMBER_OF_CLUSTERS_ANNOTATION, POLICY_INDEX_LABEL, SchedulingPolicySnapshotSpec,
};
use serde_json::Value;

use super::{Housekeeping, Indexed, Owner, hash, housekeeping, label_index, labelled_latest};

/// Annotation with the generation of the placement the snapshot was last brought up to date
/// with (KubeFleet's).
pub const PLACEMENT_GENERATION_ANNOTATION: &str = "kubernetes-fleet.io/CRP-generation";

/// What to write so that the latest policy snapshot records the placement's policy.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicySnapshotPlan {
    /// The latest index once the plan is carried out.
    pub index: u64,
    /// The latest snapshot's name.
    pub name: String,
    /// A snapshot to create, when the policy changed.
    pub create: Option<ClusterSchedulingPolicySnapshot>,
    /// New annotations of the (existing) latest snapshot, when the number of clusters or the
    /// placement's generation changed.
    pub annotate: Option<BTreeMap<String, String>>,
    /// Relabelling and pruning of older indices.
    pub housekeeping: Housekeeping,
}

/// The `policyHash` of `policy`: the hex SHA-256 of the policy without `numberOfClusters`,
/// base64-encoded as Kubernetes encodes a `[]byte` field.
pub fn policy_hash(policy: Option<&PlacementPolicy>) -> String {
    let mut value = serde_json::to_value(policy).unwrap_or(Value::Null);
    if let Some(fields) = value.as_object_mut() {
        fields.remove("numberOfClusters");
    }
    base64::engine::general_purpose::STANDARD.encode(hash(&value))
}

/// The number of clusters recorded on a snapshot (PickN), if any.
pub fn number_of_clusters(snapshot: &ClusterSchedulingPolicySnapshot) -> Option<i32> {
    snapshot
        .metadata
        .annotations
        .as_ref()?
        .get(NUMBER_OF_CLUSTERS_ANNOTATION)?
        .parse()
        .ok()
}

/// The latest snapshot among `existing` (the highest index labelled latest).
pub fn latest(
    existing: &[ClusterSchedulingPolicySnapshot],
) -> Option<&ClusterSchedulingPolicySnapshot> {
    existing
        .iter()
        .filter(|s| labelled_latest(s.metadata.labels.as_ref()))
        .max_by_key(|s| label_index(s.metadata.labels.as_ref(), POLICY_INDEX_LABEL))
}

/// The policy the scheduler works with under `snapshot`: its policy with the number of
/// clusters from its annotation.
pub fn effective_policy(snapshot: &ClusterSchedulingPolicySnapshot) -> PlacementPolicy {
    let mut policy = snapshot.spec.policy.clone().unwrap_or_default();
    if policy.placement_type == Some(PlacementType::PickN) {
        policy.number_of_clusters = number_of_clusters(snapshot).or(policy.number_of_clusters);
    }
    policy
}

/// Plans the policy snapshots of `owner` for `policy`, given its `existing` snapshots.
pub fn plan(
    owner: &Owner,
    existing: &[ClusterSchedulingPolicySnapshot],
    policy: Option<&PlacementPolicy>,
    history_limit: usize,
) -> PolicySnapshotPlan {
    let policy_hash = policy_hash(policy);
    let annotations = annotations(owner, policy);
    let indexed: Vec<Indexed> = existing
        .iter()
        .filter_map(|s| {
            Some(Indexed {
                name: s.metadata.name.clone()?,
                index: label_index(s.metadata.labels.as_ref(), POLICY_INDEX_LABEL)?,
                latest: labelled_latest(s.metadata.labels.as_ref()),
            })
        })
        .collect();
    let current = latest(existing).filter(|s| s.spec.policy_hash == policy_hash);
    if let Some(current) = current {
        let index = label_index(current.metadata.labels.as_ref(), POLICY_INDEX_LABEL).unwrap_or(0);
        let recorded = current.metadata.annotations.clone().unwrap_or_default();
        let stale = annotations
            .iter()
            .any(|(key, value)| recorded.get(key) != Some(value));
        return PolicySnapshotPlan {
            index,
            name: current.metadata.name.clone().unwrap_or_default(),
            create: None,
            annotate: stale.then_some(annotations),
            housekeeping: housekeeping(&indexed, index, history_limit),
        };
    }
    let index = indexed.iter().map(|s| s.index + 1).max().unwrap_or(0);
    let name = format!("{}-{index}", owner.name);
    let snapshot = ClusterSchedulingPolicySnapshot {
        metadata: super::metadata(
            owner,
            name.clone(),
            (POLICY_INDEX_LABEL, index),
            annotations,
        ),
        spec: SchedulingPolicySnapshotSpec {
            policy: policy.cloned(),
            policy_hash,
        },
        status: None,
    };
    PolicySnapshotPlan {
        index,
        name,
        create: Some(snapshot),
        annotate: None,
        housekeeping: housekeeping(&indexed, index, history_limit),
    }
}

/// The annotations a policy snapshot of `owner`'s current spec carries.
fn annotations(owner: &Owner, policy: Option<&PlacementPolicy>) -> BTreeMap<String, String> {
    let mut annotations = BTreeMap::from([(
        PLACEMENT_GENERATION_ANNOTATION.to_string(),
        owner.generation.to_string(),
    )]);
    if let Some(policy) = policy.filter(|p| p.placement_type == Some(PlacementType::PickN)) {
        annotations.insert(
            NUMBER_OF_CLUSTERS_ANNOTATION.to_string(),
            policy.number_of_clusters.unwrap_or(0).to_string(),
        );
    }
    annotations
}

#[cfg(test)]
mod tests {
    use flotilla_api::placement::snapshots::IS_LATEST_SNAPSHOT_LABEL;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    use serde_json::json;

    use super::*;

    fn owner(generation: i64) -> Owner {
        Owner {
            name: "crp".into(),
            generation,
            reference: OwnerReference::default(),
        }
    }

    fn pick_n(n: i32, region: &str) -> PlacementPolicy {
        serde_json::from_value(json!({
            "placementType": "PickN", "numberOfClusters": n,
            "affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "clusterSelectorTerms": [{"labelSelector": {"matchLabels": {"region": region}}}]}}}
        }))
        .unwrap()
    }

    fn carry_out(existing: &mut Vec<ClusterSchedulingPolicySnapshot>, plan: &PolicySnapshotPlan) {
        if let Some(created) = &plan.create {
            existing.push(created.clone());
        }
        for s in existing.iter_mut() {
            let name = s.metadata.name.clone().unwrap();
            if plan.housekeeping.no_longer_latest.contains(&name) {
                s.metadata
                    .labels
                    .as_mut()
                    .unwrap()
                    .insert(IS_LATEST_SNAPSHOT_LABEL.into(), "false".into());
            }
            if name == plan.name
                && let Some(annotations) = &plan.annotate
            {
                s.metadata.annotations = Some(annotations.clone());
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
    fn scaling_pick_n_keeps_the_snapshot_and_updates_its_annotation() {
        let mut existing = Vec::new();
        let first = plan(&owner(1), &existing, Some(&pick_n(2, "east")), 10);
        assert_eq!(first.name, "crp-0");
        let created = first.create.clone().unwrap();
        assert_eq!(
            created.metadata.labels.as_ref().unwrap()["kubernetes-fleet.io/policy-index"],
            "0"
        );
        assert_eq!(number_of_clusters(&created), Some(2));
        carry_out(&mut existing, &first);

        let scaled = plan(&owner(2), &existing, Some(&pick_n(5, "east")), 10);
        assert_eq!(
            (scaled.name.as_str(), scaled.create.is_none()),
            ("crp-0", true)
        );
        carry_out(&mut existing, &scaled);
        assert_eq!(number_of_clusters(&existing[0]), Some(5));
        assert_eq!(effective_policy(&existing[0]).number_of_clusters, Some(5));

        let unchanged = plan(&owner(2), &existing, Some(&pick_n(5, "east")), 10);
        assert_eq!((unchanged.create, unchanged.annotate), (None, None));
    }

    #[test]
    fn a_changed_policy_makes_a_new_latest_snapshot() {
        let mut existing = Vec::new();
        let first = plan(&owner(1), &existing, Some(&pick_n(2, "east")), 10);
        carry_out(&mut existing, &first);
        let changed = plan(&owner(2), &existing, Some(&pick_n(2, "west")), 10);
        assert_eq!(changed.name, "crp-1");
        assert_eq!(changed.housekeeping.no_longer_latest, ["crp-0"]);
        carry_out(&mut existing, &changed);
        assert_eq!(
            latest(&existing).unwrap().metadata.name.as_deref(),
            Some("crp-1")
        );
    }

    #[test]
    fn no_policy_is_pick_all_with_a_stable_hash() {
        assert_eq!(policy_hash(None), policy_hash(None));
        assert_ne!(policy_hash(None), policy_hash(Some(&pick_n(1, "east"))));
        assert_eq!(
            policy_hash(Some(&pick_n(1, "east"))),
            policy_hash(Some(&pick_n(9, "east")))
        );
        let p = plan(&owner(1), &[], None, 10);
        assert_eq!(p.create.unwrap().spec.policy, None);
    }
}
