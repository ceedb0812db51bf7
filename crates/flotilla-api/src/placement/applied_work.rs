//! `AppliedWork`: lives in a member cluster, one per Work the member agent applied, and owns
//! every object applied from that Work, so deleting it (when the member leaves the fleet or
//! the Work goes away) removes exactly what the fleet placed there.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::work::WorkResourceIdentifier;

/// Which Work on the hub this AppliedWork records.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[kube(
    group = "placement.kubernetes-fleet.io",
    version = "v1beta1",
    kind = "AppliedWork",
    plural = "appliedworks",
    singular = "appliedwork",
    category = "fleet",
    category = "fleet-placement",
    status = "AppliedWorkStatus",
    derive = "PartialEq",
    doc = "AppliedWork records, in a member cluster, the objects applied from one Work on the hub and owns them."
)]
#[serde(rename_all = "camelCase")]
pub struct AppliedWorkSpec {
    /// Name of the Work on the hub.
    pub work_name: String,
    /// Namespace of the Work on the hub (`fleet-member-<name>`).
    pub work_namespace: String,
}

/// The objects applied from the Work.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppliedWorkStatus {
    /// Every object applied, identified as in the Work's manifests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_resources: Vec<AppliedResourceMeta>,
}

/// One object applied from a Work: the manifest's identifier and the object's UID.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppliedResourceMeta {
    /// Which manifest it came from.
    #[serde(flatten)]
    pub identifier: WorkResourceIdentifier,
    /// UID of the applied object.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
}
