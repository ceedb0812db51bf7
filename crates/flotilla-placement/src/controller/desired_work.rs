//! The Work a bound binding should have: its resource snapshot's manifests (read once per
//! index, snapshots being immutable) as its cluster receives them, overrides applied, named,
//! labelled and owned as its placement family wants.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use flotilla_api::cluster::MemberCluster;
use flotilla_api::placement::work::{WorkSpec, WorkloadTemplate};
use flotilla_api::placement::{
    ClusterResourceOverrideSnapshot, ResourceBindingSpec, ResourceOverrideSnapshot, Work,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::core::object::HasSpec;
use kube::{Api, Client, Resource, ResourceExt};
use serde_json::Value;

use super::family::{PlacementFamily, owner_reference};
use super::naming::{
    PARENT_BINDING_LABEL, PARENT_NAMESPACE_LABEL, PARENT_PLACEMENT_LABEL, work_name,
};
use super::work_generator::RESOURCE_INDEX_OF_WORK_LABEL;
use super::{ControllerError, snapshots};
use crate::overrides::{ApplicableOverrides, ClusterView, Rendered, render};
use crate::placement_key::PlacementKey;
use crate::snapshot::resource::index_of;

/// A resource snapshot index of a placement: the placement's uid (which tells a recreated
/// placement's snapshots from its predecessor's) and the index.
type SnapshotIndex = (String, u64);

/// Manifests of resource snapshots by placement uid and index: snapshots are immutable, so
/// each index is read once.
#[derive(Default)]
pub(super) struct ManifestCache(Mutex<HashMap<SnapshotIndex, Arc<Vec<Value>>>>);

/// What the binding's Work should be.
pub(super) enum Desired {
    /// The resource snapshot is not complete yet.
    Incomplete,
    /// The cluster's overrides cannot be applied; why.
    OverrideFailed(String),
    /// The Work, and whether overrides apply to the cluster.
    Work(Box<Work>, bool),
}

/// The Work the binding should have: its resource snapshot's manifests as its cluster
/// receives them, overrides applied.
pub(super) async fn desired_work<F: PlacementFamily>(
    client: &Client,
    cache: &ManifestCache,
    binding: &F::Binding,
    namespace: &str,
) -> Result<Desired, ControllerError> {
    let spec = binding.spec();
    let placement = PlacementKey::of(
        binding.meta().namespace.as_deref(),
        binding
            .labels()
            .get(PARENT_PLACEMENT_LABEL)
            .map(String::as_str)
            .unwrap_or_default(),
    );
    // The placement's uid tells a recreated placement's snapshots from its predecessor's.
    let placement_uid = binding
        .owner_references()
        .first()
        .map(|o| o.uid.clone())
        .unwrap_or_default();
    let Some(index) = index_of(&placement.name, &spec.resource_snapshot_name) else {
        return Ok(Desired::Incomplete);
    };
    let Some(manifests) = manifests::<F>(client, cache, &placement_uid, &placement, index).await?
    else {
        return Ok(Desired::Incomplete);
    };
    let overridden = !spec.cluster_resource_override_snapshots.is_empty()
        || !spec.resource_override_snapshots.is_empty();
    let manifests = if overridden {
        match overridden_manifests(client, spec, &placement, &manifests).await? {
            Ok(manifests) => manifests,
            Err(message) => return Ok(Desired::OverrideFailed(message)),
        }
    } else {
        manifests.to_vec()
    };
    let mut labels = BTreeMap::from([
        (PARENT_PLACEMENT_LABEL.to_string(), placement.name.clone()),
        (PARENT_BINDING_LABEL.to_string(), binding.name_any()),
        (RESOURCE_INDEX_OF_WORK_LABEL.to_string(), index.to_string()),
    ]);
    if let Some(namespace) = placement.namespace() {
        labels.insert(PARENT_NAMESPACE_LABEL.to_string(), namespace.to_string());
    }
    let work = Work {
        metadata: ObjectMeta {
            name: Some(work_name(&placement)),
            namespace: Some(namespace.to_string()),
            labels: Some(labels),
            owner_references: work_owner::<F>(binding),
            ..ObjectMeta::default()
        },
        spec: WorkSpec {
            workload: WorkloadTemplate { manifests },
            apply_strategy: spec.apply_strategy.clone(),
            report_back_strategy: None,
        },
        status: None,
    };
    Ok(Desired::Work(Box::new(work), overridden))
}

/// The owner of a binding's Work: a `ClusterResourceBinding` (so the hub's garbage
/// collector backs the binding's finalizer up), and nothing for a `ResourceBinding`, whose
/// namespace is not the Work's (Kubernetes forbids owners in another namespace; KubeFleet
/// leaves such Works to the binding's finalizer alone).
fn work_owner<F: PlacementFamily>(binding: &F::Binding) -> Option<Vec<OwnerReference>> {
    binding
        .meta()
        .namespace
        .is_none()
        .then(|| vec![owner_reference(binding)])
}

/// The manifests with the binding's override snapshots applied for its cluster (a `Delete`
/// rule leaves a manifest out), or why they cannot be.
async fn overridden_manifests(
    client: &Client,
    spec: &ResourceBindingSpec,
    placement: &PlacementKey,
    manifests: &[Value],
) -> Result<Result<Vec<Value>, String>, ControllerError> {
    let mut cluster_snapshots = Vec::new();
    let cluster_api: Api<ClusterResourceOverrideSnapshot> = Api::all(client.clone());
    for name in &spec.cluster_resource_override_snapshots {
        match cluster_api.get_opt(name).await? {
            Some(snapshot) => cluster_snapshots.push(snapshot),
            None => {
                return Ok(Err(format!(
                    "ClusterResourceOverrideSnapshot {name} is gone"
                )));
            }
        }
    }
    let mut namespaced_snapshots = Vec::new();
    for reference in &spec.resource_override_snapshots {
        let api: Api<ResourceOverrideSnapshot> =
            Api::namespaced(client.clone(), &reference.namespace);
        match api.get_opt(&reference.name).await? {
            Some(snapshot) => namespaced_snapshots.push(snapshot),
            None => {
                return Ok(Err(format!(
                    "ResourceOverrideSnapshot {}/{} is gone",
                    reference.namespace, reference.name
                )));
            }
        }
    }
    let Some(cluster) = Api::<MemberCluster>::all(client.clone())
        .get_opt(&spec.target_cluster)
        .await?
    else {
        return Ok(Err(format!(
            "member cluster {} is gone",
            spec.target_cluster
        )));
    };
    let applicable = ApplicableOverrides::select(
        placement,
        manifests,
        &cluster_snapshots,
        &namespaced_snapshots,
    );
    let mut out = Vec::with_capacity(manifests.len());
    for manifest in manifests {
        match render(manifest, ClusterView::from(&cluster), &applicable) {
            Ok(Rendered::Manifest(rendered)) => out.push(rendered),
            Ok(Rendered::Deleted(_)) => {}
            Err(e) => return Ok(Err(e.to_string())),
        }
    }
    Ok(Ok(out))
}

/// The manifests of resource snapshot `index` of `placement` (whose uid is `placement_uid`),
/// from the cache or the hub.
async fn manifests<F: PlacementFamily>(
    client: &Client,
    cache: &ManifestCache,
    placement_uid: &str,
    placement: &PlacementKey,
    index: u64,
) -> Result<Option<Arc<Vec<Value>>>, kube::Error> {
    let key = (placement_uid.to_string(), index);
    if let Some(found) = cache.0.lock().expect("cache lock").get(&key) {
        return Ok(Some(found.clone()));
    }
    let Some(read) = snapshots::manifests::<F>(client, placement, index).await? else {
        return Ok(None);
    };
    let read = Arc::new(read);
    cache
        .0
        .lock()
        .expect("cache lock")
        .insert(key, read.clone());
    Ok(Some(read))
}
