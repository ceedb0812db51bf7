//! The override controller's immutable records: `ClusterResourceOverrideSnapshot` and
//! `ResourceOverrideSnapshot`, one per version of an override's spec, named
//! `<override>-<index>` (index from 0) and labelled as KubeFleet labels them:
//!
//! - [`OVERRIDE_TRACKING_LABEL`]: the override the snapshot belongs to;
//! - [`OVERRIDE_INDEX_LABEL`]: the snapshot's index;
//! - [`IS_LATEST_SNAPSHOT_LABEL`]: `"true"` on the one snapshot placements use.
//!
//! Placements read only the latest snapshots, so an override that changes mid-rollout changes
//! every Work at once, and bindings name the exact snapshots they were rendered with.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use super::snapshots::IS_LATEST_SNAPSHOT_LABEL;

use super::overrides::{ClusterResourceOverrideSpec, ResourceOverrideSpec};

/// Label naming the override (`ClusterResourceOverride` or `ResourceOverride`) a snapshot
/// records.
pub const OVERRIDE_TRACKING_LABEL: &str = "kubernetes-fleet.io/parent-resource-override";
/// Label with an override snapshot's index.
pub const OVERRIDE_INDEX_LABEL: &str = "kubernetes-fleet.io/override-index";

/// A `ClusterResourceOverride`'s spec at one index; immutable.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "placement.kubernetes-fleet.io",
    version = "v1beta1",
    kind = "ClusterResourceOverrideSnapshot",
    plural = "clusterresourceoverridesnapshots",
    singular = "clusterresourceoverridesnapshot",
    category = "fleet",
    category = "fleet-placement",
    derive = "PartialEq",
    doc = "ClusterResourceOverrideSnapshot records one version of a ClusterResourceOverride's spec.",
    printcolumn(
        name = "Index",
        type_ = "string",
        json_path = r".metadata.labels.kubernetes-fleet\.io/override-index"
    ),
    printcolumn(
        name = "Latest",
        type_ = "string",
        json_path = r".metadata.labels.kubernetes-fleet\.io/is-latest-snapshot"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceOverrideSnapshotSpec {
    /// The override's spec as it was.
    pub override_spec: ClusterResourceOverrideSpec,
    /// Hash of `overrideSpec` (base64 in JSON, as `[]byte`): a new snapshot is taken when the
    /// override's hash differs from the latest snapshot's.
    pub override_hash: String,
}

/// A `ResourceOverride`'s spec at one index, in the override's namespace; immutable.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "placement.kubernetes-fleet.io",
    version = "v1beta1",
    kind = "ResourceOverrideSnapshot",
    plural = "resourceoverridesnapshots",
    singular = "resourceoverridesnapshot",
    category = "fleet",
    category = "fleet-placement",
    namespaced,
    derive = "PartialEq",
    doc = "ResourceOverrideSnapshot records one version of a ResourceOverride's spec.",
    printcolumn(
        name = "Index",
        type_ = "string",
        json_path = r".metadata.labels.kubernetes-fleet\.io/override-index"
    ),
    printcolumn(
        name = "Latest",
        type_ = "string",
        json_path = r".metadata.labels.kubernetes-fleet\.io/is-latest-snapshot"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ResourceOverrideSnapshotSpec {
    /// The override's spec as it was.
    pub override_spec: ResourceOverrideSpec,
    /// Hash of `overrideSpec` (base64 in JSON, as `[]byte`).
    pub override_hash: String,
}
