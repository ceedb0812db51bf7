//! Per-kind validation rules that a structural schema cannot express: KubeFleet's CEL rules
//! and webhooks, and apiextensions' rules for user CRDs. Every rule reads the object as JSON
//! (so a half-valid object still gets every error) and reports Kubernetes-style field errors.

mod common;
mod core;
mod crd;
mod eviction;
pub(crate) mod format;
mod member_cluster;
mod node_class;
mod nodes;
mod overrides;
pub(crate) mod path;
mod placement;
mod staged_update;
pub(crate) mod structural;
mod updates;

use flotilla_apimachinery::FieldError;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

use crate::placement::overrides::PlacementScope;

/// The API group of placements and staged updates.
const PLACEMENT_GROUP: &str = "placement.kubernetes-fleet.io";
/// The API group of member clusters.
const CLUSTER_GROUP: &str = "cluster.kubernetes-fleet.io";
/// Karpenter's API group.
const KARPENTER_GROUP: &str = crate::nodes::KARPENTER_GROUP;
/// The AKS provider's API group.
const AZURE_GROUP: &str = crate::nodes::AZURE_GROUP;
/// The API group of cluster update orchestration.
const UPDATES_GROUP: &str = crate::updates::GROUP;

/// What a rule may need to know about the kinds the hub serves: a `ResourcePlacement` may
/// select only namespaced kinds. The engine answers from its registry (built-in kinds and user
/// CRDs alike); a caller with no hub can answer from the definitions it has.
pub trait ServedKinds {
    /// Whether the kind `kind` of `group` is namespaced: `Some(true)` namespaced,
    /// `Some(false)` cluster-scoped, `None` when it is not served.
    fn namespaced(&self, group: &str, kind: &str) -> Option<bool>;
}

/// The kinds these definitions define.
impl ServedKinds for Vec<CustomResourceDefinition> {
    fn namespaced(&self, group: &str, kind: &str) -> Option<bool> {
        self.iter()
            .find(|crd| crd.spec.group == group && crd.spec.names.kind == kind)
            .map(|crd| crd.spec.scope == "Namespaced")
    }
}

/// Validates a write of `new` (replacing `old` on update) to a kind of `group`, on a hub
/// serving `served`. Returns every error found, empty when valid or when the kind has no rules
/// beyond its schema.
pub fn validate(
    group: &str,
    kind: &str,
    new: &Value,
    old: Option<&Value>,
    served: &dyn ServedKinds,
) -> Vec<FieldError> {
    match (group, kind) {
        (PLACEMENT_GROUP, "ClusterResourcePlacement") => {
            placement::validate(PlacementScope::Cluster, new, old, served)
        }
        (PLACEMENT_GROUP, "ResourcePlacement") => {
            placement::validate(PlacementScope::Namespaced, new, old, served)
        }
        (PLACEMENT_GROUP, "ClusterStagedUpdateStrategy" | "StagedUpdateStrategy") => {
            staged_update::validate_strategy(new)
        }
        (PLACEMENT_GROUP, "ClusterStagedUpdateRun" | "StagedUpdateRun") => {
            staged_update::validate_run(new, old)
        }
        (PLACEMENT_GROUP, "ClusterApprovalRequest" | "ApprovalRequest") => {
            staged_update::validate_approval_request(new, old)
        }
        (CLUSTER_GROUP, "MemberCluster") => member_cluster::validate(new),
        (PLACEMENT_GROUP, "ClusterResourceOverride") => overrides::validate_cluster(new, old),
        (PLACEMENT_GROUP, "ResourceOverride") => overrides::validate_namespaced(new, old),
        (PLACEMENT_GROUP, "ClusterResourcePlacementEviction") => {
            eviction::validate_eviction(new, old)
        }
        (PLACEMENT_GROUP, "ClusterResourcePlacementDisruptionBudget") => {
            eviction::validate_budget(new)
        }
        (UPDATES_GROUP, "FleetUpdateStrategy") => updates::validate_strategy(new),
        (UPDATES_GROUP, "UpdateRun") => updates::validate_run(new, old),
        (UPDATES_GROUP, "MaintenanceConfiguration") => updates::validate_maintenance(new),
        (UPDATES_GROUP, "AutoUpgradeProfile") => updates::validate_profile(new, old),
        (UPDATES_GROUP, "Gate" | "MemberUpgrade") => updates::validate_immutable_spec(new, old),
        (KARPENTER_GROUP, "NodePool") => nodes::validate_node_pool(new, old),
        (KARPENTER_GROUP, "NodeClaim") => nodes::validate_node_claim(new, old),
        (KARPENTER_GROUP, "NodeOverlay") => nodes::validate_node_overlay(new),
        (AZURE_GROUP, "AKSNodeClass") => node_class::validate_node_class(new),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => crd::validate(new, old),
        ("", "ConfigMap") => core::validate_config_map(new),
        ("", "Secret") => core::validate_secret(new),
        ("", "ReplicationController") => core::validate_replication_controller(new),
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") => {
            core::validate_workload_selector(new)
        }
        _ => Vec::new(),
    }
}
