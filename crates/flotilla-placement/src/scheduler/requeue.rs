//! IgnoredDuringExecution: which member-cluster changes send which placements back to the
//! scheduler (KubeFleet's `pkg/scheduler/watchers/membercluster`).
//!
//! A cluster that becomes unfit keeps its placements, so changes that can only make a cluster
//! less fit (a taint added, eligibility lost) requeue nothing. Changes that may make it fit
//! (labels, a taint removed or changed, property values, resource usage, managed namespaces,
//! becoming eligible) requeue the placements that could still pick it: PickAll ones, and PickN
//! or PickFixed ones not yet fully scheduled. A cluster that starts leaving requeues every
//! placement, since bindings on it must be unscheduled (and PickN ones replaced). Creation is
//! ignored: a new cluster is not eligible until its agent reports, which is an update.

use std::collections::BTreeMap;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::eligibility::{self, EligibilityWindows};
use flotilla_api::cluster::member_cluster::{MemberClusterStatus, Taint};
use flotilla_api::placement::policy::PlacementType;
use flotilla_apimachinery::quantity::parse_milli;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::jiff::Timestamp;

/// What changed about a member cluster, as far as scheduling cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterChange {
    /// The cluster is leaving the fleet (deletion started) or is gone.
    Leaving,
    /// Its labels changed.
    Labels,
    /// A taint was removed or changed.
    TaintRemoved,
    /// A property value changed, appeared or disappeared (observation times do not count).
    Properties,
    /// Its capacity, allocatable or available resources changed.
    ResourceUsage,
    /// The namespaces reported on it changed (what namespace-scoped placements look at).
    Namespaces,
    /// It was not eligible for placements and now is.
    BecameEligible,
    /// Nothing that could let a placement pick it.
    Irrelevant,
}

impl ClusterChange {
    /// Classifies an update from `old` to `new` (`None` when the cluster is gone), judging
    /// eligibility at `now`. The first applicable change, in the order of the variants, wins.
    pub fn between(
        old: &MemberCluster,
        new: Option<&MemberCluster>,
        now: Timestamp,
        windows: &EligibilityWindows,
    ) -> Self {
        let Some(new) = new else {
            return ClusterChange::Leaving;
        };
        if old.metadata.deletion_timestamp.is_none() && new.metadata.deletion_timestamp.is_some() {
            return ClusterChange::Leaving;
        }
        if labels(old) != labels(new) {
            return ClusterChange::Labels;
        }
        if taint_removed(taints(old), taints(new)) {
            return ClusterChange::TaintRemoved;
        }
        let (old_status, new_status) = (status(old), status(new));
        if property_values(old_status).ne(property_values(new_status)) {
            return ClusterChange::Properties;
        }
        let figures_changed = resource_figures(old_status)
            .into_iter()
            .zip(resource_figures(new_status))
            .any(|(old, new)| !same_figures(old, new));
        if figures_changed {
            return ClusterChange::ResourceUsage;
        }
        if namespaces(old_status).ne(namespaces(new_status)) {
            return ClusterChange::Namespaces;
        }
        let eligible = |c: &MemberCluster| eligibility::check(c, now, windows).is_ok();
        if !eligible(old) && eligible(new) {
            return ClusterChange::BecameEligible;
        }
        ClusterChange::Irrelevant
    }

    /// Whether this change should requeue a placement of `placement_type` whose `Scheduled`
    /// condition is currently True for its generation (`fully_scheduled`).
    pub fn requeues(self, placement_type: PlacementType, fully_scheduled: bool) -> bool {
        match self {
            ClusterChange::Irrelevant => false,
            ClusterChange::Leaving => true,
            _ => placement_type == PlacementType::PickAll || !fully_scheduled,
        }
    }
}

fn labels(cluster: &MemberCluster) -> Option<&BTreeMap<String, String>> {
    cluster.metadata.labels.as_ref().filter(|l| !l.is_empty())
}

fn taints(cluster: &MemberCluster) -> &[Taint] {
    cluster.spec.taints.as_deref().unwrap_or_default()
}

fn status(cluster: &MemberCluster) -> Option<&MemberClusterStatus> {
    cluster.status.as_ref()
}

/// Whether some old taint is not among the new ones (an added taint cannot make a cluster fit).
fn taint_removed(old: &[Taint], new: &[Taint]) -> bool {
    old.iter().any(|t| !new.contains(t))
}

/// Capacity, allocatable and available resources.
fn resource_figures(
    status: Option<&MemberClusterStatus>,
) -> [Option<&BTreeMap<String, Quantity>>; 3] {
    let usage = status.and_then(|s| s.resource_usage.as_ref());
    [
        usage.and_then(|u| u.capacity.as_ref()),
        usage.and_then(|u| u.allocatable.as_ref()),
        usage.and_then(|u| u.available.as_ref()),
    ]
}

/// Whether two resource figure maps hold the same quantities (`1` equals `1000m`), as
/// Kubernetes' semantic equality compares them.
fn same_figures(
    old: Option<&BTreeMap<String, Quantity>>,
    new: Option<&BTreeMap<String, Quantity>>,
) -> bool {
    let empty = BTreeMap::new();
    let (old, new) = (old.unwrap_or(&empty), new.unwrap_or(&empty));
    let value = |q: &Quantity| parse_milli(&q.0).ok_or_else(|| q.0.clone());
    old.len() == new.len()
        && old
            .iter()
            .zip(new)
            .all(|((ok, ov), (nk, nv))| ok == nk && value(ov) == value(nv))
}

/// The namespaces reported on the cluster, in name order.
fn namespaces(status: Option<&MemberClusterStatus>) -> impl Iterator<Item = &String> {
    status
        .and_then(|s| s.namespaces.as_ref())
        .into_iter()
        .flat_map(|n| n.keys())
}

/// Property names and values, in name order.
fn property_values(
    status: Option<&MemberClusterStatus>,
) -> impl Iterator<Item = (&String, &String)> {
    status
        .and_then(|s| s.properties.as_ref())
        .into_iter()
        .flatten()
        .map(|(name, v)| (name, &v.value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: &str = "2026-03-01T12:00:00Z";

    fn cluster(extra: serde_json::Value) -> MemberCluster {
        let mut base = json!({
            "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
            "kind": "MemberCluster",
            "metadata": {"name": "m1", "labels": {"region": "east"}},
            "spec": {
                "identity": {"kind": "ServiceAccount", "name": "a", "namespace": "n"},
                "taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]
            },
            "status": {
                "properties": {"kubernetes-fleet.io/node-count": {"value": "3", "observationTime": "2026-03-01T11:00:00Z"}},
                "resourceUsage": {"available": {"cpu": "4"}},
                "agentStatus": [{
                    "type": "MemberAgent",
                    "lastReceivedHeartbeat": NOW,
                    "conditions": [
                        {"type": "Joined", "status": "True", "reason": "Joined", "message": "", "lastTransitionTime": NOW},
                        {"type": "Healthy", "status": "True", "reason": "Healthy", "message": "", "lastTransitionTime": NOW}
                    ]
                }]
            }
        });
        merge(&mut base, extra);
        serde_json::from_value(base).unwrap()
    }

    fn merge(base: &mut serde_json::Value, patch: serde_json::Value) {
        match (base, patch) {
            (serde_json::Value::Object(b), serde_json::Value::Object(p)) => {
                for (k, v) in p {
                    merge(b.entry(k).or_insert(serde_json::Value::Null), v);
                }
            }
            (b, p) => *b = p,
        }
    }

    fn change(old: serde_json::Value, new: serde_json::Value) -> ClusterChange {
        ClusterChange::between(
            &cluster(old),
            Some(&cluster(new)),
            NOW.parse().unwrap(),
            &EligibilityWindows::default(),
        )
    }

    #[test]
    fn classifies_like_the_kubefleet_watcher() {
        let same = json!({});
        let cases = [
            ("nothing", json!({}), ClusterChange::Irrelevant),
            (
                "leaving",
                json!({"metadata": {"deletionTimestamp": NOW}}),
                ClusterChange::Leaving,
            ),
            (
                "relabelled",
                json!({"metadata": {"labels": {"region": "west"}}}),
                ClusterChange::Labels,
            ),
            (
                "taint removed",
                json!({"spec": {"taints": []}}),
                ClusterChange::TaintRemoved,
            ),
            (
                "taint added",
                json!({"spec": {"taints": [
                    {"key": "gpu", "value": "true", "effect": "NoSchedule"},
                    {"key": "maintenance", "effect": "NoSchedule"}
                ]}}),
                ClusterChange::Irrelevant,
            ),
            (
                "property value",
                json!({"status": {"properties": {"kubernetes-fleet.io/node-count": {"value": "5", "observationTime": "2026-03-01T11:00:00Z"}}}}),
                ClusterChange::Properties,
            ),
            (
                "observation time only",
                json!({"status": {"properties": {"kubernetes-fleet.io/node-count": {"value": "3", "observationTime": "2026-03-01T11:59:00Z"}}}}),
                ClusterChange::Irrelevant,
            ),
            (
                "resources",
                json!({"status": {"resourceUsage": {"available": {"cpu": "3"}}}}),
                ClusterChange::ResourceUsage,
            ),
            (
                "same resources, other spelling",
                json!({"status": {"resourceUsage": {"available": {"cpu": "4000m"}}}}),
                ClusterChange::Irrelevant,
            ),
            (
                "namespaces",
                json!({"status": {"namespaces": {"app": "work-1"}}}),
                ClusterChange::Namespaces,
            ),
            (
                "lost eligibility",
                json!({"status": {"agentStatus": [{"type": "MemberAgent", "lastReceivedHeartbeat": "2026-03-01T11:00:00Z", "conditions": []}]}}),
                ClusterChange::Irrelevant,
            ),
        ];
        for (name, new, want) in cases {
            assert_eq!(change(same.clone(), new), want, "{name}");
        }
        let stale = json!({"status": {"agentStatus": [{"type": "MemberAgent", "lastReceivedHeartbeat": "2026-03-01T11:00:00Z", "conditions": []}]}});
        assert_eq!(change(stale, json!({})), ClusterChange::BecameEligible);
        assert_eq!(
            ClusterChange::between(
                &cluster(json!({})),
                None,
                NOW.parse().unwrap(),
                &EligibilityWindows::default()
            ),
            ClusterChange::Leaving
        );
    }

    #[test]
    fn requeues_only_placements_that_could_pick_the_cluster() {
        use PlacementType::{PickAll, PickFixed, PickN};
        assert!(ClusterChange::Labels.requeues(PickAll, true));
        assert!(!ClusterChange::Labels.requeues(PickN, true));
        assert!(ClusterChange::Labels.requeues(PickN, false));
        assert!(ClusterChange::BecameEligible.requeues(PickFixed, false));
        assert!(!ClusterChange::BecameEligible.requeues(PickFixed, true));
        assert!(ClusterChange::Leaving.requeues(PickN, true));
        assert!(!ClusterChange::Irrelevant.requeues(PickAll, false));
    }
}
