//! Carries out the snapshot plans of [`crate::snapshot`] for one placement of either family:
//! the plans are made over the working (cluster-scoped) form of the records, which are written
//! as the family's kind in the placement's scope.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_api::placement::snapshots::{IS_LATEST_SNAPSHOT_LABEL, PARENT_PLACEMENT_LABEL};
use flotilla_api::placement::{ClusterResourceSnapshot, ClusterSchedulingPolicySnapshot};
use futures::future::try_join_all;
use kube::api::{DynamicObject, ListParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::{Api, Client, ResourceExt};
use serde_json::{Value, json};

use super::discovery::HubKinds;
use super::family::{Object, Parent, PlacementFamily, Record, api};
use super::{ControllerError, writes};
use crate::placement_key::PlacementKey;
use crate::selection::{self, HubObjects, Selection};
use crate::snapshot::{Housekeeping, Owner, policy, resource};

/// The placement's latest resource snapshot after [`sync_resources`].
pub(crate) struct LatestResources {
    /// Its index.
    pub index: u64,
    /// The name of its first chunk.
    pub name: String,
    /// What the selectors picked.
    pub selection: Selection,
    /// The placement's resource snapshots before this sync's writes (working form).
    pub snapshots: Vec<ClusterResourceSnapshot>,
}

/// Lists the placement's objects of kind `K` (by the parent label, in its scope).
pub(crate) async fn owned<K: Object>(
    client: &Client,
    placement: &PlacementKey,
) -> Result<Vec<K>, kube::Error> {
    let params =
        ListParams::default().labels(&format!("{PARENT_PLACEMENT_LABEL}={}", placement.name));
    Ok(api::<K>(client, placement).list(&params).await?.items)
}

/// [`owned`] records of kind `K`, in their working form `W`.
async fn owned_as<K: Record<W>, W>(
    client: &Client,
    placement: &PlacementKey,
) -> Result<Vec<W>, kube::Error> {
    Ok(owned::<K>(client, placement)
        .await?
        .into_iter()
        .map(Into::into)
        .collect())
}

/// A new record planned in its working form `W`, as kind `K` in the placement's scope.
fn to_create<K: Record<W>, W: kube::Resource>(placement: &PlacementKey, mut working: W) -> K {
    working.meta_mut().namespace = placement.namespace.clone();
    K::from(working)
}

/// Brings the policy snapshots up to date; returns the latest (working form).
pub(crate) async fn sync_policy<F: PlacementFamily>(
    client: &Client,
    parent: &Parent<'_>,
    owner: &Owner,
) -> Result<ClusterSchedulingPolicySnapshot, ControllerError> {
    let api = api::<F::PolicySnapshot>(client, &parent.key);
    let existing = owned_as::<F::PolicySnapshot, _>(client, &parent.key).await?;
    let plan = policy::plan(
        owner,
        &existing,
        parent.spec.policy.as_ref(),
        history_limit(parent),
    );
    if let Some(created) = plan.create {
        writes::create(
            &api,
            &to_create::<F::PolicySnapshot, _>(&parent.key, created),
        )
        .await?;
    }
    if let Some(annotations) = &plan.annotate {
        writes::merge(
            &api,
            &plan.name,
            json!({"metadata": {"annotations": annotations}}),
        )
        .await?;
    }
    tidy(&api, &plan.housekeeping).await?;
    Ok(api.get(&plan.name).await?.into())
}

/// Selects the placement's resources and brings the resource snapshots up to date.
pub(crate) async fn sync_resources<F: PlacementFamily>(
    client: &Client,
    kinds: &HubKinds,
    parent: &Parent<'_>,
    owner: &Owner,
) -> Result<LatestResources, ControllerError> {
    let selection = select(client, kinds, parent).await?;
    let api = api::<F::ResourceSnapshot>(client, &parent.key);
    let existing = owned_as::<F::ResourceSnapshot, _>(client, &parent.key).await?;
    let plan = resource::plan(
        owner,
        &existing,
        &selection.manifests,
        history_limit(parent),
    );
    for snapshot in plan.create {
        writes::create(
            &api,
            &to_create::<F::ResourceSnapshot, _>(&parent.key, snapshot),
        )
        .await?;
    }
    tidy(&api, &plan.housekeeping).await?;
    Ok(LatestResources {
        index: plan.index,
        name: plan.name,
        selection,
        snapshots: existing,
    })
}

/// Reads the objects the placement's selectors pick: anywhere on the hub for a
/// ClusterResourcePlacement, in its namespace for a ResourcePlacement. A
/// ClusterResourcePlacement reads only what its terms can pick: cluster-scoped objects named
/// by every term of their kind are read by name, and namespaced kinds only in the namespaces
/// the terms pick (`selection::names_to_read`, `selection::namespaces_to_read`).
async fn select(
    client: &Client,
    kinds: &HubKinds,
    parent: &Parent<'_>,
) -> Result<Selection, ControllerError> {
    let terms = &parent.spec.resource_selectors;
    let mut served = kinds.get(false).await?;
    let (_, problems) = selection::kinds_to_list(terms, &served);
    if !problems.is_empty() {
        served = kinds.get(true).await?;
    }
    let (wanted, problems) = selection::kinds_to_list(terms, &served);
    let mut selection = match parent.key.namespace() {
        Some(namespace) => {
            let lists = wanted.into_iter().map(|kind| async move {
                // A ResourcePlacement places no cluster-scoped object: the kind goes unread,
                // and the selection says why its term picks nothing.
                let objects = if kind.namespaced {
                    read(client, kind, Reading::In(namespace)).await?
                } else {
                    Vec::new()
                };
                Ok::<_, ControllerError>((kind.clone(), objects))
            });
            let hub = HubObjects {
                kinds: try_join_all(lists).await?,
            };
            selection::select_in_namespace(namespace, terms, &hub)
        }
        None => {
            let cluster_scoped = wanted.iter().map(|&kind| async move {
                let objects = match (kind.namespaced, selection::names_to_read(terms, kind)) {
                    (true, _) => Vec::new(),
                    (false, None) => read(client, kind, Reading::All).await?,
                    (false, Some(names)) => read(client, kind, Reading::Named(&names)).await?,
                };
                Ok::<_, ControllerError>((kind.clone(), objects))
            });
            let mut hub = HubObjects {
                kinds: try_join_all(cluster_scoped).await?,
            };
            let namespaces = selection::namespaces_to_read(terms, &hub);
            let contents =
                hub.kinds
                    .iter_mut()
                    .filter(|(k, _)| k.namespaced)
                    .map(|(kind, objects)| {
                        let namespaces = &namespaces;
                        async move {
                            let reads = namespaces
                                .iter()
                                .map(|namespace| read(client, kind, Reading::In(namespace)));
                            *objects = try_join_all(reads).await?.concat();
                            Ok::<_, ControllerError>(())
                        }
                    });
            try_join_all(contents).await?;
            selection::select(terms, &hub)
        }
    };
    selection.problems.splice(0..0, problems);
    Ok(selection)
}

/// Which objects of a kind to read.
enum Reading<'a> {
    /// All of them, in every namespace.
    All,
    /// Those of one namespace.
    In(&'a str),
    /// The cluster-scoped objects of these names (those that exist).
    Named(&'a BTreeSet<String>),
}

/// Reads the objects of `kind` that `reading` says, as JSON with their apiVersion and kind.
async fn read(
    client: &Client,
    kind: &selection::KindInfo,
    reading: Reading<'_>,
) -> Result<Vec<Value>, ControllerError> {
    let gvk = GroupVersionKind::gvk(&kind.group, &kind.version, &kind.kind);
    let resource = ApiResource::from_gvk_with_plural(&gvk, &kind.plural);
    let objects = match reading {
        Reading::All => {
            let api = Api::<DynamicObject>::all_with(client.clone(), &resource);
            api.list(&ListParams::default()).await?.items
        }
        Reading::In(namespace) => {
            let api = Api::<DynamicObject>::namespaced_with(client.clone(), namespace, &resource);
            api.list(&ListParams::default()).await?.items
        }
        Reading::Named(names) => {
            let api = Api::<DynamicObject>::all_with(client.clone(), &resource);
            let gets = names.iter().map(|name| api.get_opt(name));
            try_join_all(gets).await?.into_iter().flatten().collect()
        }
    };
    objects
        .into_iter()
        .map(|o| object_json(o, kind).map_err(Into::into))
        .collect()
}

/// A listed object as JSON with its `apiVersion` and `kind` (lists leave them out per item).
fn object_json(
    object: DynamicObject,
    kind: &selection::KindInfo,
) -> Result<Value, serde_json::Error> {
    let mut value = serde_json::to_value(object)?;
    if let Some(fields) = value.as_object_mut() {
        fields.insert("apiVersion".into(), kind.api_version().into());
        fields.insert("kind".into(), kind.kind.clone().into());
    }
    Ok(value)
}

/// Relabels and prunes older snapshots.
async fn tidy<K>(api: &Api<K>, housekeeping: &Housekeeping) -> Result<(), kube::Error>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    for name in &housekeeping.no_longer_latest {
        writes::label(api, name, IS_LATEST_SNAPSHOT_LABEL, "false").await?;
    }
    for name in &housekeeping.delete {
        writes::delete(api, name).await?;
    }
    Ok(())
}

/// Deletes every policy and resource snapshot of the placement being deleted, as KubeFleet
/// does before it lets a placement go: left to the garbage collector, a snapshot could
/// outlive its placement long enough for a new placement of the same name to take it for its
/// own (the snapshots are found by the parent label, and named after the placement).
pub(crate) async fn delete_all<F: PlacementFamily>(
    client: &Client,
    placement: &PlacementKey,
) -> Result<(), kube::Error> {
    let policies = api::<F::PolicySnapshot>(client, placement);
    for snapshot in owned::<F::PolicySnapshot>(client, placement).await? {
        writes::delete(&policies, &snapshot.name_any()).await?;
    }
    let resources = api::<F::ResourceSnapshot>(client, placement);
    for snapshot in owned::<F::ResourceSnapshot>(client, placement).await? {
        writes::delete(&resources, &snapshot.name_any()).await?;
    }
    Ok(())
}

/// The placement's `revisionHistoryLimit`, KubeFleet's 10 when unset.
fn history_limit(parent: &Parent<'_>) -> usize {
    parent
        .spec
        .revision_history_limit
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(crate::snapshot::DEFAULT_HISTORY_LIMIT)
}

/// The manifests of resource snapshot index `index` of `placement`, if complete.
pub(crate) async fn manifests<F: PlacementFamily>(
    client: &Client,
    placement: &PlacementKey,
    index: u64,
) -> Result<Option<Vec<Value>>, kube::Error> {
    let labels = BTreeMap::from([
        (PARENT_PLACEMENT_LABEL, placement.name.clone()),
        (
            flotilla_api::placement::snapshots::RESOURCE_INDEX_LABEL,
            index.to_string(),
        ),
    ]);
    let selector: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let chunks: Vec<ClusterResourceSnapshot> = api::<F::ResourceSnapshot>(client, placement)
        .list(&ListParams::default().labels(&selector.join(",")))
        .await?
        .items
        .into_iter()
        .map(Into::into)
        .collect();
    Ok(resource::manifests_of(&chunks, index))
}
