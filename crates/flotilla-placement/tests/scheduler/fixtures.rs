//! Fixtures shared by the scheduler tests: member clusters, bindings and policies.

use std::sync::Arc;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::eligibility::EligibilityWindows;
use flotilla_api::placement::policy::PlacementPolicy;
use flotilla_placement::scheduler::{
    BindingState, BindingView, ClusterDecision, ClusterScore, Decision, SchedulingInput, schedule,
};
use serde_json::{Value, json};

/// The time every test schedules at.
pub const NOW: &str = "2026-03-01T12:00:00Z";
/// The current policy snapshot.
pub const SNAPSHOT: &str = "crp-1";
/// An older policy snapshot.
pub const OLD_SNAPSHOT: &str = "crp-0";

/// A joined, healthy member cluster that heartbeated at [`NOW`], built up field by field.
pub struct Cluster(Value);

/// A cluster named `name`.
pub fn cluster(name: &str) -> Cluster {
    Cluster(json!({
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": {}},
        "spec": {"identity": {"kind": "ServiceAccount", "name": "fleet-member-agent", "namespace": "fleet-system"}},
        "status": {
            "properties": {},
            "resourceUsage": {"capacity": {}, "allocatable": {}, "available": {}},
            "agentStatus": [{
                "type": "MemberAgent",
                "lastReceivedHeartbeat": NOW,
                "conditions": [
                    {"type": "Joined", "status": "True", "reason": "Joined", "message": "", "lastTransitionTime": NOW},
                    {"type": "Healthy", "status": "True", "reason": "Healthy", "message": "", "lastTransitionTime": NOW}
                ]
            }]
        }
    }))
}

impl Cluster {
    /// Adds a label.
    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.0["metadata"]["labels"][key] = json!(value);
        self
    }

    /// Adds a property (`status.properties`).
    pub fn property(mut self, name: &str, value: &str) -> Self {
        self.0["status"]["properties"][name] = json!({"value": value, "observationTime": NOW});
        self
    }

    /// Adds a resource figure: `capacity`, `allocatable` or `available`.
    pub fn resource(mut self, figure: &str, resource: &str, value: &str) -> Self {
        self.0["status"]["resourceUsage"][figure][resource] = json!(value);
        self
    }

    /// Adds a `NoSchedule` taint.
    pub fn taint(mut self, key: &str, value: Option<&str>) -> Self {
        let taint = match value {
            Some(v) => json!({"key": key, "value": v, "effect": "NoSchedule"}),
            None => json!({"key": key, "effect": "NoSchedule"}),
        };
        let spec = &mut self.0["spec"];
        if spec.get("taints").is_none() {
            spec["taints"] = json!([]);
        }
        spec["taints"].as_array_mut().unwrap().push(taint);
        self
    }

    /// Makes the agent's last heartbeat ten minutes old.
    pub fn stale(mut self) -> Self {
        self.0["status"]["agentStatus"][0]["lastReceivedHeartbeat"] = json!("2026-03-01T11:50:00Z");
        self
    }

    /// Marks the cluster as leaving (deletion timestamp set).
    pub fn leaving(mut self) -> Self {
        self.0["metadata"]["deletionTimestamp"] = json!(NOW);
        self.0["metadata"]["finalizers"] = json!(["kubernetes-fleet.io/membercluster-finalizer"]);
        self
    }

    /// The MemberCluster.
    pub fn build(self) -> MemberCluster {
        serde_json::from_value(self.0).unwrap()
    }
}

/// A policy from its JSON form.
pub fn policy(json: Value) -> PlacementPolicy {
    serde_json::from_value(json).unwrap()
}

/// A binding of the placement.
pub fn binding(cluster: &str, state: BindingState, snapshot: &str) -> BindingView {
    BindingView {
        name: format!("crp-{cluster}-{}", snapshot.trim_start_matches("crp-")),
        cluster: cluster.into(),
        state,
        policy_snapshot: snapshot.into(),
        deleting: false,
        score: None,
        previous_state: None,
    }
}

/// A recorded score.
pub fn score(affinity: i32, topology: i32) -> ClusterScore {
    ClusterScore {
        affinity_score: Some(affinity),
        priority_score: Some(topology),
    }
}

/// A binding that recorded `score` when its cluster was picked.
pub fn scored(mut binding: BindingView, affinity: i32, topology: i32) -> BindingView {
    binding.score = Some(score(affinity, topology));
    binding
}

/// Runs one cycle under [`SNAPSHOT`] at [`NOW`], on a snapshot that recorded no verdicts yet.
pub fn run(
    policy: &PlacementPolicy,
    clusters: &[MemberCluster],
    bindings: &[BindingView],
) -> Decision {
    run_after(policy, clusters, bindings, &[])
}

/// Runs one cycle under [`SNAPSHOT`] at [`NOW`], on a snapshot whose status holds the
/// `previous` verdicts (e.g. the clusters of an earlier [`Decision`]).
pub fn run_after(
    policy: &PlacementPolicy,
    clusters: &[MemberCluster],
    bindings: &[BindingView],
    previous: &[ClusterDecision],
) -> Decision {
    let clusters: Vec<Arc<MemberCluster>> = clusters.iter().cloned().map(Arc::new).collect();
    schedule(&SchedulingInput {
        policy,
        policy_snapshot: SNAPSHOT,
        clusters: &clusters,
        bindings,
        now: NOW.parse().unwrap(),
        eligibility: EligibilityWindows::default(),
        previous,
    })
}

/// The selected cluster names, sorted.
pub fn selected(decision: &Decision) -> Vec<String> {
    let mut names: Vec<String> = decision.selected().map(String::from).collect();
    names.sort();
    names
}

/// The reason given for `cluster`.
pub fn reason<'a>(decision: &'a Decision, cluster: &str) -> &'a str {
    &decision
        .cluster(cluster)
        .unwrap_or_else(|| panic!("no decision for {cluster}"))
        .reason
}

/// The affinity score recorded for `cluster`.
pub fn affinity(decision: &Decision, cluster: &str) -> i32 {
    decision
        .cluster(cluster)
        .and_then(|d| d.cluster_score)
        .and_then(|s| s.affinity_score)
        .unwrap_or_else(|| panic!("no score for {cluster}"))
}
