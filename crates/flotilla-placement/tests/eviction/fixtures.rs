//! Placements, bindings and budgets for the eviction tests.

use flotilla_api::placement::{
    ClusterResourceBinding, ClusterResourcePlacement, PlacementDisruptionBudgetSpec,
};
use flotilla_placement::eviction::{EvictionInput, Verdict, evaluate};
use serde_json::{Value, json};

/// A ClusterResourcePlacement named `crp` with `policy` (JSON, or none).
pub fn placement(policy: Option<Value>) -> ClusterResourcePlacement {
    let mut crp = json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "crp"},
        "spec": {"resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "app"}]}
    });
    if let Some(policy) = policy {
        crp["spec"]["policy"] = policy;
    }
    serde_json::from_value(crp).expect("ClusterResourcePlacement")
}

/// A PickN placement of `n` clusters.
pub fn pick_n(n: i32) -> ClusterResourcePlacement {
    placement(Some(
        json!({"placementType": "PickN", "numberOfClusters": n}),
    ))
}

/// A PickAll placement.
pub fn pick_all() -> ClusterResourcePlacement {
    placement(None)
}

/// A binding of `crp` to `cluster`, built up field by field.
pub struct Binding(Value);

/// A `Bound` binding to `cluster`, available at generation 1.
pub fn binding(cluster: &str) -> Binding {
    Binding(json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourceBinding",
        "metadata": {"name": format!("crp-{cluster}"), "generation": 1, "labels": {"kubernetes-fleet.io/parent-CRP": "crp"}},
        "spec": {"state": "Bound", "targetCluster": cluster},
        "status": {"conditions": []}
    }))
    .condition("Applied", "True", "ApplySucceeded", 1)
    .condition("Available", "True", "ResourceAvailable", 1)
}

impl Binding {
    /// Sets the condition `type_` (replacing one of the same type).
    pub fn condition(mut self, type_: &str, status: &str, reason: &str, generation: i64) -> Self {
        let conditions = self.0["status"]["conditions"].as_array_mut().unwrap();
        conditions.retain(|c| c["type"] != type_);
        conditions.push(json!({
            "type": type_, "status": status, "reason": reason, "message": "",
            "observedGeneration": generation, "lastTransitionTime": "2026-03-01T12:00:00Z"
        }));
        self
    }

    /// Not available (Available=False, still in progress).
    pub fn unavailable(self) -> Self {
        self.condition("Available", "False", "ResourceNotAvailableYet", 1)
    }

    /// Sets the state.
    pub fn state(mut self, state: &str) -> Self {
        self.0["spec"]["state"] = json!(state);
        self
    }

    /// Records the state the binding had before it was unscheduled.
    pub fn previously(mut self, state: &str) -> Self {
        self.0["metadata"]["annotations"] =
            json!({"kubernetes-fleet.io/previous-binding-state": state});
        self
    }

    /// Marks the binding as being deleted.
    pub fn deleting(mut self) -> Self {
        self.0["metadata"]["deletionTimestamp"] = json!("2026-03-01T12:00:00Z");
        self.0["metadata"]["finalizers"] = json!(["kubernetes-fleet.io/work-cleanup"]);
        self
    }

    /// The binding.
    pub fn build(self) -> ClusterResourceBinding {
        serde_json::from_value(self.0).expect("ClusterResourceBinding")
    }
}

/// A budget spec from JSON.
pub fn budget(spec: Value) -> PlacementDisruptionBudgetSpec {
    serde_json::from_value(spec).expect("PlacementDisruptionBudgetSpec")
}

/// Evaluates the eviction of `crp` from `cluster`.
pub fn judge(
    cluster: &str,
    placement: Option<&ClusterResourcePlacement>,
    bindings: &[ClusterResourceBinding],
    budget: Option<&PlacementDisruptionBudgetSpec>,
) -> Verdict {
    evaluate(&EvictionInput {
        cluster,
        placement,
        bindings,
        budget,
    })
}
