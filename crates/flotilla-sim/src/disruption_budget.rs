//! The disruption controller of a simulated member: every PodDisruptionBudget's status
//! (`expectedPods`, `currentHealthy`, `desiredHealthy`, `disruptionsAllowed` and the
//! `DisruptionAllowed` condition), computed by `flotilla_nodes::pdb` as Kubernetes'
//! `disruption` controller computes it, and written only when it changes.

use flotilla_nodes::pdb::{NamespacedPods, status};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;

use crate::actions::{Action, Plan};

/// One pass over every budget of the member against all its `pods` at `now`.
pub fn reconcile(pdbs: &[PodDisruptionBudget], pods: &[Pod], now: Timestamp) -> Plan {
    let mut plan = Plan::default();
    let namespaced = NamespacedPods::new(pods);
    for pdb in pdbs {
        let new = status(pdb, &namespaced, now);
        if pdb.status.as_ref() != Some(&new) {
            plan.push(Action::write_status(pdb, &new));
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::fixtures::{running_pod, t0, written_status};
    use k8s_openapi::api::policy::v1::PodDisruptionBudgetStatus;
    use serde_json::json;

    fn pdb(min_available: i32) -> PodDisruptionBudget {
        serde_json::from_value(json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "default", "uid": "uid-web", "generation": 1},
            "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": "web"}}}
        }))
        .unwrap()
    }

    /// The status `plan` writes, read back as the API would store it.
    fn stored(plan: &Plan) -> Option<PodDisruptionBudgetStatus> {
        written_status(plan).map(|s| serde_json::from_value(s).unwrap())
    }

    #[test]
    fn writes_the_status_only_when_it_changes() {
        let pods = [
            running_pod("web-0", "n1", "2026-01-01T00:00:00Z"),
            running_pod("web-1", "n1", "2026-01-01T00:00:00Z"),
        ];
        let mut budget = pdb(1);
        let plan = reconcile(std::slice::from_ref(&budget), &pods, t0());
        assert_eq!(plan.actions.len(), 1);
        let first = stored(&plan).unwrap();
        assert_eq!(
            (
                first.expected_pods,
                first.current_healthy,
                first.desired_healthy,
                first.disruptions_allowed,
                first.observed_generation,
            ),
            (Some(2), Some(2), Some(1), Some(1), Some(1))
        );
        let condition = &first.conditions.as_ref().unwrap()[0];
        assert_eq!(
            (condition.type_.as_str(), condition.reason.as_str()),
            ("DisruptionAllowed", "SufficientPods")
        );

        // Stored: the next pass has nothing to write.
        budget.status = Some(first);
        let later = t0() + jiff::SignedDuration::from_mins(5);
        let same = reconcile(std::slice::from_ref(&budget), &pods, later);
        assert_eq!(same, Plan::default());

        // A pod goes: the budget has nothing to spare.
        let fewer = reconcile(std::slice::from_ref(&budget), &pods[..1], later);
        let changed = stored(&fewer).unwrap();
        assert_eq!(changed.disruptions_allowed, Some(0));
        assert_eq!(
            changed.conditions.as_ref().unwrap()[0].reason,
            "InsufficientPods"
        );
    }
}
