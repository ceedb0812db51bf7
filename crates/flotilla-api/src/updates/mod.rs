//! The `updates.flotilla.dev` API group (v1beta1): cluster update orchestration — update runs,
//! strategies, gates, auto-upgrade profiles, maintenance windows, the release catalog, and the
//! per-member upgrades the member agents carry out.

pub mod auto_upgrade;
pub mod catalog;
pub mod gate;
pub mod maintenance;
pub mod member_upgrade;
pub mod strategy;
pub mod update_run;

pub use auto_upgrade::{
    AutoUpgradeProfile, AutoUpgradeProfileSpec, AutoUpgradeProfileStatus, Channel,
};
pub use catalog::{
    KubernetesVersion, KubernetesVersionSpec, NodeImageVersion, NodeImageVersionSpec,
};
pub use gate::{Gate, GateSpec, GateState};
pub use maintenance::{
    MaintenanceConfiguration, MaintenanceConfigurationStatus, MaintenanceWindow, WindowOccurrence,
};
pub use member_upgrade::{MemberUpgrade, MemberUpgradeSpec, MemberUpgradeStatus, UpgradePhase};
pub use strategy::{FleetUpdateStrategy, UpdateRunStrategy};
pub use update_run::{UpdateRun, UpdateRunSpec, UpdateRunStatus, UpdateState};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

use crate::crd::finished;

/// The API group.
pub const GROUP: &str = "updates.flotilla.dev";

/// Label on a MemberCluster naming its region (set from the member's cloud region).
pub const REGION_LABEL: &str = "topology.kubernetes.io/region";

/// Label on a MemberCluster saying it is under long-term support (`"true"`): only such
/// members take a Kubernetes version older than N−2.
pub const LONG_TERM_SUPPORT_LABEL: &str = "updates.flotilla.dev/long-term-support";

/// Label on a MemberCluster naming its update group.
pub const UPDATE_GROUP_LABEL: &str = "updates.flotilla.dev/group";

/// The group's kinds as CRDs, served and stored at v1beta1.
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        finished(FleetUpdateStrategy::crd()),
        finished(UpdateRun::crd()),
        finished(Gate::crd()),
        finished(AutoUpgradeProfile::crd()),
        finished(MaintenanceConfiguration::crd()),
        finished(KubernetesVersion::crd()),
        finished(NodeImageVersion::crd()),
        finished(MemberUpgrade::crd()),
    ]
}
