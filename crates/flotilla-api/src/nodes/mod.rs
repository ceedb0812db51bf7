//! The node auto-provisioning kinds a member cluster serves: Karpenter's `karpenter.sh/v1`
//! NodePool and NodeClaim and `karpenter.sh/v1alpha1` NodeOverlay, and the simulated Azure cloud's `karpenter.azure.com/v1beta1`
//! AKSNodeClass — field for field as Karpenter and AKS node auto-provisioning define them.

pub mod aks_node_class;
pub mod node_claim;
pub mod node_overlay;
pub mod node_pool;

pub use aks_node_class::{
    AKSNodeClass, AKSNodeClassSpec, AKSNodeClassStatus, ArtifactStreaming, Gpu, GpuMode,
    ImageFamily, LinuxOsConfig, LocalDns, LocalDnsMode, LocalDnsState, Security, Sysctls,
};
pub use node_claim::{
    NodeClaim, NodeClaimSpec, NodeClaimStatus, NodeClassReference,
    NodeSelectorRequirementWithMinValues, RequirementOperator,
};
pub use node_overlay::{NodeOverlay, NodeOverlaySpec, NodeOverlayStatus, OverlayRequirement};
pub use node_pool::{
    AllowedDisruptions, Budget, ConsolidationPolicy, Disruption, DisruptionReason, NodePool,
    NodePoolSpec, NodePoolStatus,
};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

use crate::crd::finished;

/// Karpenter's API group.
pub const KARPENTER_GROUP: &str = "karpenter.sh";
/// The Azure provider's API group.
pub const AZURE_GROUP: &str = "karpenter.azure.com";

/// Label naming a node's (and claim's) NodePool.
pub const NODEPOOL_LABEL: &str = "karpenter.sh/nodepool";
/// Label set once the node is initialized.
pub const INITIALIZED_LABEL: &str = "karpenter.sh/initialized";
/// Label set once the node registered.
pub const REGISTERED_LABEL: &str = "karpenter.sh/registered";
/// Label naming how the instance is bought (`on-demand` or `spot`).
pub const CAPACITY_TYPE_LABEL: &str = "karpenter.sh/capacity-type";
/// Annotation (on pods, nodes or a pool's template) that keeps Karpenter from disrupting.
pub const DO_NOT_DISRUPT_ANNOTATION: &str = "karpenter.sh/do-not-disrupt";
/// Annotation on pools and claims: the hash of the pool's template.
pub const NODEPOOL_HASH_ANNOTATION: &str = "karpenter.sh/nodepool-hash";
/// Annotation on pools and claims: the version of the template hash.
pub const NODEPOOL_HASH_VERSION_ANNOTATION: &str = "karpenter.sh/nodepool-hash-version";
/// Annotation on node classes and claims: the hash of the node class spec.
pub const NODECLASS_HASH_ANNOTATION: &str = "karpenter.azure.com/aksnodeclass-hash";
/// Annotation on node classes and claims: the version of the node class hash.
pub const NODECLASS_HASH_VERSION_ANNOTATION: &str = "karpenter.azure.com/aksnodeclass-hash-version";
/// Annotation on a deleting claim: when its pods are forcibly deleted (RFC 3339).
pub const TERMINATION_TIMESTAMP_ANNOTATION: &str = "karpenter.sh/nodeclaim-termination-timestamp";
/// Finalizer on claims and nodes: drain before the instance goes.
pub const TERMINATION_FINALIZER: &str = "karpenter.sh/termination";
/// Taint on nodes being disrupted or terminated.
pub const DISRUPTED_TAINT: &str = "karpenter.sh/disrupted";
/// Taint on nodes until they register.
pub const UNREGISTERED_TAINT: &str = "karpenter.sh/unregistered";
/// The node class a pool without `nodeClassRef` uses, as in AKS node auto-provisioning.
pub const DEFAULT_NODE_CLASS: &str = "default";

/// The kinds as CRDs: NodePool and NodeClaim at `v1`, NodeOverlay at `v1alpha1`; AKSNodeClass stored at `v1beta1` and
/// also served, deprecated, at `v1alpha2` as the AKS provider still serves it (the two
/// versions have the same fields, so objects convert by their `apiVersion` alone).
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        finished(NodePool::crd()),
        finished(NodeClaim::crd()),
        finished(NodeOverlay::crd()),
        with_deprecated_version(
            finished(AKSNodeClass::crd()),
            AKS_NODE_CLASS_OLD_VERSION,
            "use v1beta1.AKSNodeClass instead",
        ),
    ]
}

/// The AKSNodeClass version the AKS provider served before `v1beta1`.
pub const AKS_NODE_CLASS_OLD_VERSION: &str = "v1alpha2";

/// `crd` also served at `version` with its stored version's schema and columns, deprecated with
/// `warning`, neither stored nor listed first.
fn with_deprecated_version(
    mut crd: CustomResourceDefinition,
    version: &str,
    warning: &str,
) -> CustomResourceDefinition {
    let mut old = crd.spec.versions[0].clone();
    old.name = version.to_string();
    old.storage = false;
    old.deprecated = Some(true);
    old.deprecation_warning = Some(warning.to_string());
    crd.spec.versions.push(old);
    crd
}
