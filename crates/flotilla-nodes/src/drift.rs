//! Drift: a claim no longer matches what its pool and node class would launch today
//! (reference §5). Checked in Karpenter's order, the first hit wins:
//!
//! 1. **NodePoolDrifted** — the pool's template hash differs from the one the claim was
//!    launched with, when both carry the same hash version (a version bump re-stamps instead
//!    of drifting every node). Hashed: template labels, annotations, taints, startup taints,
//!    node class reference, lifetime and termination grace period; not requirements (a
//!    widened requirement must not replace nodes) and not behaviour fields (weight, limits,
//!    disruption). The lifetime hashed is the one in force, wherever the pool states it.
//! 2. **RequirementsDrifted** — the claim's labels no longer satisfy the pool's requirements
//!    (checked by the caller with the requirements algebra and passed in).
//! 3. **NodeClassDrifted** — the node class spec hash differs from the claim's (Azure's
//!    `aksnodeclass-hash`; tags excluded).
//! 4. **ImageDrifted** — the node runs another node image than the class resolves to: this
//!    is how a node image upgrade rolls through a pool.
//! 5. **K8sVersionDrifted** — the node's kubelet runs another Kubernetes version than the
//!    cluster's.
//!
//! A claim stamped under an older hash version is re-stamped ([`restamp`]) rather than
//! compared, as Karpenter's and the AKS provider's hash controllers do.

use flotilla_api::nodes::{AKSNodeClass, AKSNodeClassSpec, NodeClaim, NodePool, NodePoolSpec};
use flotilla_api::nodes::{
    NODECLASS_HASH_ANNOTATION, NODECLASS_HASH_VERSION_ANNOTATION, NODEPOOL_HASH_ANNOTATION,
    NODEPOOL_HASH_VERSION_ANNOTATION,
};
use flotilla_apimachinery::canonical::fnv_hash;
use serde_json::{Value, json};

use crate::expiration::expire_after;

/// Version of the pool template hash (bump when a hashed default changes or a set-valued
/// field is added or removed).
pub const TEMPLATE_HASH_VERSION: &str = "v3";
/// Version of the node class hash: v4 since the kubelet's settings are stored with their
/// defaults (a class written again by an older release hashes differently).
pub const NODE_CLASS_HASH_VERSION: &str = "v4";

/// Why a claim has drifted; the variant names are the `Drifted` condition's reasons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drift {
    /// The pool's template changed.
    NodePoolDrifted,
    /// The claim's labels no longer satisfy the pool's requirements.
    RequirementsDrifted {
        /// Which requirement fails, for people.
        detail: String,
    },
    /// The node class spec changed.
    NodeClassDrifted,
    /// The node runs another node image than the class resolves to.
    ImageDrifted {
        /// The image the node runs.
        running: String,
        /// The image the class wants.
        wanted: String,
    },
    /// The node's kubelet runs another Kubernetes version than the cluster.
    K8sVersionDrifted {
        /// The kubelet's version.
        running: String,
        /// The cluster's version.
        wanted: String,
    },
}

impl Drift {
    /// The `Drifted` condition's reason.
    pub fn reason(&self) -> &'static str {
        match self {
            Drift::NodePoolDrifted => "NodePoolDrifted",
            Drift::RequirementsDrifted { .. } => "RequirementsDrifted",
            Drift::NodeClassDrifted => "NodeClassDrifted",
            Drift::ImageDrifted { .. } => "ImageDrifted",
            Drift::K8sVersionDrifted { .. } => "K8sVersionDrifted",
        }
    }

    /// What changed, for people.
    pub fn message(&self) -> String {
        match self {
            Drift::NodePoolDrifted => {
                "the NodePool's template changed since the node was launched".into()
            }
            Drift::RequirementsDrifted { detail } => {
                format!("the node no longer satisfies the NodePool's requirements: {detail}")
            }
            Drift::NodeClassDrifted => {
                "the AKSNodeClass changed since the node was launched".into()
            }
            Drift::ImageDrifted { running, wanted } => {
                format!("the node runs image {running}; its AKSNodeClass wants {wanted}")
            }
            Drift::K8sVersionDrifted { running, wanted } => {
                format!("the node's kubelet runs {running}; the cluster runs {wanted}")
            }
        }
    }
}

/// Sorts a list of JSON values so it hashes as a set.
fn as_set(items: Value) -> Value {
    match items {
        Value::Array(mut items) => {
            items.sort_by_key(flotilla_apimachinery::canonical::to_string);
            Value::Array(items)
        }
        other => other,
    }
}

/// The hash of a pool's template, as stamped in `karpenter.sh/nodepool-hash`.
pub fn template_hash(pool: &NodePoolSpec) -> String {
    let template = &pool.template;
    let metadata = template.metadata.clone().unwrap_or_default();
    let spec = &template.spec;
    fnv_hash(&json!({
        "labels": metadata.labels,
        "annotations": metadata.annotations,
        "taints": as_set(json!(spec.taints)),
        "startupTaints": as_set(json!(spec.startup_taints)),
        "nodeClassRef": spec.node_class_ref,
        "expireAfter": expire_after(pool).text,
        "terminationGracePeriod": spec.termination_grace_period,
    }))
}

/// The hash of a node class spec, as stamped in `karpenter.azure.com/aksnodeclass-hash`
/// (tags excluded: retagging changes no node).
pub fn node_class_hash(class: &AKSNodeClassSpec) -> String {
    let mut spec = class.clone();
    spec.tags.clear();
    // The image version rolls nodes through image drift (with the image as the reason), not
    // as a node class change.
    spec.image_version = None;
    fnv_hash(&json!(spec))
}

/// What drift detection reads besides the claim.
#[derive(Debug, Clone, Copy, Default)]
pub struct DriftContext<'a> {
    /// The claim's node class, if it exists.
    pub node_class: Option<&'a AKSNodeClass>,
    /// The failing pool requirement, when the claim's labels no longer satisfy the pool's
    /// requirements (the caller checks with the requirements algebra).
    pub requirement_mismatch: Option<&'a str>,
    /// The kubelet version of the claim's node, once it registered.
    pub kubelet_version: Option<&'a str>,
}

/// The annotation `key` of a Kubernetes object's metadata.
fn annotation<'a>(
    meta: &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    key: &str,
) -> Option<&'a str> {
    meta.annotations.as_ref()?.get(key).map(String::as_str)
}

/// Why `claim` has drifted from `pool` and its node class, if it has. Only launched claims
/// drift (the caller checks).
pub fn drifted(claim: &NodeClaim, pool: &NodePool, context: DriftContext<'_>) -> Option<Drift> {
    let stamped = |key_hash: &str, key_version: &str, version: &str| {
        let claim_hash = annotation(&claim.metadata, key_hash)?;
        (annotation(&claim.metadata, key_version) == Some(version)).then_some(claim_hash)
    };
    if let Some(claim_hash) = stamped(
        NODEPOOL_HASH_ANNOTATION,
        NODEPOOL_HASH_VERSION_ANNOTATION,
        TEMPLATE_HASH_VERSION,
    ) && claim_hash != template_hash(&pool.spec)
    {
        return Some(Drift::NodePoolDrifted);
    }
    if let Some(detail) = context.requirement_mismatch {
        return Some(Drift::RequirementsDrifted {
            detail: detail.to_string(),
        });
    }
    let class = context.node_class?;
    if let Some(claim_hash) = stamped(
        NODECLASS_HASH_ANNOTATION,
        NODECLASS_HASH_VERSION_ANNOTATION,
        NODE_CLASS_HASH_VERSION,
    ) && claim_hash != node_class_hash(&class.spec)
    {
        return Some(Drift::NodeClassDrifted);
    }
    let status = class.status.as_ref()?;
    if let (Some(running), Some(wanted)) = (
        claim.status.as_ref().and_then(|s| s.image_id.as_deref()),
        status.image_version.as_deref(),
    ) && running != wanted
    {
        return Some(Drift::ImageDrifted {
            running: running.to_string(),
            wanted: wanted.to_string(),
        });
    }
    if let (Some(running), Some(wanted)) = (
        context.kubelet_version,
        status.kubernetes_version.as_deref(),
    ) && running.trim_start_matches('v') != wanted.trim_start_matches('v')
    {
        return Some(Drift::K8sVersionDrifted {
            running: running.to_string(),
            wanted: wanted.to_string(),
        });
    }
    None
}

/// Hash annotations for a claim launched from `pool` and `class` now, and for the pool and
/// class themselves: `(key, value)` pairs.
pub fn launch_annotations(pool: &NodePoolSpec, class: &AKSNodeClassSpec) -> [(String, String); 4] {
    [
        (NODEPOOL_HASH_ANNOTATION.into(), template_hash(pool)),
        (
            NODEPOOL_HASH_VERSION_ANNOTATION.into(),
            TEMPLATE_HASH_VERSION.into(),
        ),
        (NODECLASS_HASH_ANNOTATION.into(), node_class_hash(class)),
        (
            NODECLASS_HASH_VERSION_ANNOTATION.into(),
            NODE_CLASS_HASH_VERSION.into(),
        ),
    ]
}

/// The hash annotations to write on a claim stamped under an older version of the pool's or
/// the class's hash: the current version, and the current hash unless the claim has drifted
/// (a drifted claim keeps the hash it drifted from). `None` when both versions are current.
pub fn restamp(
    claim: &NodeClaim,
    pool: &NodePoolSpec,
    class: Option<&AKSNodeClassSpec>,
) -> Option<Vec<(String, String)>> {
    let drifted = claim.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == "Drifted" && c.status == "True")
    });
    let mut writes = Vec::new();
    let mut check =
        |hash_key: &str, version_key: &str, version: &str, hash: &dyn Fn() -> String| {
            if annotation(&claim.metadata, version_key) == Some(version) {
                return;
            }
            writes.push((version_key.to_string(), version.to_string()));
            if !drifted {
                writes.push((hash_key.to_string(), hash()));
            }
        };
    check(
        NODEPOOL_HASH_ANNOTATION,
        NODEPOOL_HASH_VERSION_ANNOTATION,
        TEMPLATE_HASH_VERSION,
        &|| template_hash(pool),
    );
    if let Some(class) = class {
        check(
            NODECLASS_HASH_ANNOTATION,
            NODECLASS_HASH_VERSION_ANNOTATION,
            NODE_CLASS_HASH_VERSION,
            &|| node_class_hash(class),
        );
    }
    (!writes.is_empty()).then_some(writes)
}

#[cfg(test)]
mod tests;
