//! The release catalog: cluster-scoped `KubernetesVersion` (`kv`) and `NodeImageVersion`
//! (`niv`) resources, the fleet's equivalent of the AKS release tracker. Each release says
//! when it became available in each region; update runs and auto-upgrade profiles read them.
//! The simulated provider fills the catalog from a built-in list or the `--fleet` file.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Pattern of a `MAJOR.MINOR.PATCH` Kubernetes version.
pub const KUBERNETES_VERSION_PATTERN: &str = r"^[0-9]+\.[0-9]+\.[0-9]+$";

/// A Kubernetes release the provider offers.
// Clippy reads repeated keys inside distinct `printcolumn(...)` entries as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "updates.flotilla.dev",
    version = "v1beta1",
    kind = "KubernetesVersion",
    plural = "kubernetesversions",
    singular = "kubernetesversion",
    shortname = "kv",
    category = "fleet",
    category = "fleet-updates",
    derive = "PartialEq",
    doc = "KubernetesVersion is a Kubernetes release the provider offers, with when it reached each region.",
    printcolumn(name = "Version", type_ = "string", json_path = ".spec.version"),
    printcolumn(name = "Preview", type_ = "boolean", json_path = ".spec.preview"),
    printcolumn(name = "LTS", type_ = "boolean", json_path = ".spec.longTermSupport"),
    printcolumn(
        name = "Regions",
        type_ = "string",
        json_path = ".spec.availability[*].region"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct KubernetesVersionSpec {
    /// The version, `MAJOR.MINOR.PATCH`.
    #[schemars(regex(pattern = KUBERNETES_VERSION_PATTERN))]
    pub version: String,
    /// A preview release: never chosen by auto-upgrade channels.
    #[serde(default)]
    pub preview: bool,
    /// The minor has long-term support (a year beyond the community window).
    #[serde(default)]
    pub long_term_support: bool,
    /// When the release became available in each region; absent regions do not have it.
    #[serde(default)]
    pub availability: Vec<RegionAvailability>,
}

/// A node image release: one version of one image family.
// Clippy reads repeated keys inside distinct `printcolumn(...)` entries as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "updates.flotilla.dev",
    version = "v1beta1",
    kind = "NodeImageVersion",
    plural = "nodeimageversions",
    singular = "nodeimageversion",
    shortname = "niv",
    category = "fleet",
    category = "fleet-updates",
    derive = "PartialEq",
    doc = "NodeImageVersion is a node image release of one image family, with when it reached each region.",
    printcolumn(name = "Family", type_ = "string", json_path = ".spec.family"),
    printcolumn(name = "Version", type_ = "string", json_path = ".spec.version"),
    printcolumn(
        name = "Regions",
        type_ = "string",
        json_path = ".spec.availability[*].region"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct NodeImageVersionSpec {
    /// Image family, e.g. `AKSUbuntu-2204gen2containerd`.
    pub family: String,
    /// Version within the family, e.g. `202510.13.0`; versions compare numerically by part.
    pub version: String,
    /// When the image became available in each region; absent regions do not have it.
    #[serde(default)]
    pub availability: Vec<RegionAvailability>,
}

impl NodeImageVersionSpec {
    /// The image's full name as node pools report it: `<family>-<version>`.
    pub fn full_name(&self) -> String {
        format!("{}-{}", self.family, self.version)
    }
}

/// When a release reached a region.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegionAvailability {
    /// Region name, e.g. `eastus`.
    pub region: String,
    /// From when the release may be used there (RFC 3339).
    pub available_at: Time,
}
