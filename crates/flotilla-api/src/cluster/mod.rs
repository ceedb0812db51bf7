//! The `cluster.kubernetes-fleet.io` API group: member clusters.

pub mod eligibility;
pub mod internal_member_cluster;
pub mod member_cluster;
pub mod properties;
pub mod versions;

pub use internal_member_cluster::{
    ClusterState, InternalMemberCluster, InternalMemberClusterSpec, InternalMemberClusterStatus,
};
pub use member_cluster::{MemberCluster, MemberClusterSpec, MemberClusterStatus};
pub use versions::{ClusterVersions, NodePoolVersion, UpgradeDurations};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

use crate::crd::served_versions;

/// The group's kinds as CRDs: v1beta1 (storage) and v1 served with one schema.
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        served_versions(MemberCluster::crd()),
        served_versions(InternalMemberCluster::crd()),
    ]
}
