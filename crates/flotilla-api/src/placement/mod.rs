//! The `placement.kubernetes-fleet.io` API group: placements, overrides, evictions and staged
//! updates.

pub mod applied_work;
pub mod approval_request;
pub mod binding;
pub mod cluster_resource_placement;
pub mod disruption_budget;
pub mod eviction;
pub mod override_snapshots;
pub mod overrides;
pub mod policy;
pub mod resource_placement;
pub mod selector;
pub mod snapshots;
pub mod staged_update_run;
pub mod staged_update_strategy;
pub mod status;
pub mod strategy;
pub mod work;

pub use applied_work::AppliedWork;
pub use approval_request::{
    ApprovalRequest, ApprovalRequestSpec, ApprovalRequestStatus, ClusterApprovalRequest,
};
pub use binding::{BindingState, ClusterResourceBinding, ResourceBinding, ResourceBindingSpec};
pub use cluster_resource_placement::{
    ClusterResourcePlacement, PlacementSpec, StatusReportingScope,
};
pub use disruption_budget::{
    ClusterResourcePlacementDisruptionBudget, PlacementDisruptionBudgetSpec,
};
pub use eviction::{
    ClusterResourcePlacementEviction, PlacementEvictionSpec, PlacementEvictionStatus,
};
pub use override_snapshots::{ClusterResourceOverrideSnapshot, ResourceOverrideSnapshot};
pub use overrides::{ClusterResourceOverride, ResourceOverride};
pub use resource_placement::ResourcePlacement;
pub use snapshots::{
    ClusterResourceSnapshot, ClusterSchedulingPolicySnapshot, ResourceSnapshot,
    SchedulingPolicySnapshot,
};
pub use staged_update_run::{
    ClusterStagedUpdateRun, StagedUpdateRun, UpdateRunSpec, UpdateRunState, UpdateRunStatus,
};
pub use staged_update_strategy::{
    ClusterStagedUpdateStrategy, StagedUpdateStrategy, UpdateStrategySpec,
};
pub use status::PlacementStatus;
pub use work::Work;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

use crate::crd::{finished, served_versions};

/// The placement kinds a member cluster serves (the agent's record of applied Work).
pub fn member_crds() -> Vec<CustomResourceDefinition> {
    vec![served_versions(AppliedWork::crd())]
}

/// The group's kinds as CRDs: v1beta1 (storage) and v1 served with one schema, except the
/// namespaced snapshots and bindings, which KubeFleet serves at v1beta1 only.
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        served_versions(ClusterResourcePlacement::crd()),
        served_versions(ResourcePlacement::crd()),
        served_versions(ClusterSchedulingPolicySnapshot::crd()),
        finished(SchedulingPolicySnapshot::crd()),
        served_versions(ClusterResourceSnapshot::crd()),
        finished(ResourceSnapshot::crd()),
        served_versions(ClusterResourceBinding::crd()),
        finished(ResourceBinding::crd()),
        served_versions(Work::crd()),
        served_versions(ClusterResourceOverride::crd()),
        served_versions(ResourceOverride::crd()),
        served_versions(ClusterResourceOverrideSnapshot::crd()),
        served_versions(ResourceOverrideSnapshot::crd()),
        served_versions(ClusterStagedUpdateStrategy::crd()),
        served_versions(StagedUpdateStrategy::crd()),
        served_versions(ClusterStagedUpdateRun::crd()),
        served_versions(StagedUpdateRun::crd()),
        served_versions(ClusterApprovalRequest::crd()),
        served_versions(ApprovalRequest::crd()),
        served_versions(ClusterResourcePlacementEviction::crd()),
        served_versions(ClusterResourcePlacementDisruptionBudget::crd()),
    ]
}
