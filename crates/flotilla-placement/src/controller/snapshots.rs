//! Carries out the snapshot plans of [`crate::snapshot`] for one placement.

use std::collections::BTreeMap;

use flotilla_api::placement::snapshots::{IS_LATEST_SNAPSHOT_LABEL, PARENT_PLACEMENT_LABEL};
use flotilla_api::placement::{
    ClusterResourcePlacement, ClusterResourceSnapshot, ClusterSchedulingPolicySnapshot,
};
use futures::future::try_join_all;
use kube::api::{DynamicObject, ListParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::{Api, Client};
use serde_json::{Value, json};

use super::discovery::HubKinds;
use super::{ControllerError, writes};
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
    /// The placement's resource snapshots before this sync's writes.
    pub snapshots: Vec<ClusterResourceSnapshot>,
}

/// Lists the placement's objects of kind `K` (by the parent label).
pub(crate) async fn owned<K>(client: &Client, placement: &str) -> Result<Vec<K>, kube::Error>
where
    K: kube::Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let api: Api<K> = Api::all(client.clone());
    let params = ListParams::default().labels(&format!("{PARENT_PLACEMENT_LABEL}={placement}"));
    Ok(api.list(&params).await?.items)
}

/// Brings the policy snapshots up to date; returns the latest.
pub(crate) async fn sync_policy(
    client: &Client,
    crp: &ClusterResourcePlacement,
    owner: &Owner,
) -> Result<ClusterSchedulingPolicySnapshot, ControllerError> {
    let api: Api<ClusterSchedulingPolicySnapshot> = Api::all(client.clone());
    let existing = owned(client, &owner.name).await?;
    let plan = policy::plan(
        owner,
        &existing,
        crp.spec.policy.as_ref(),
        history_limit(crp),
    );
    if let Some(created) = &plan.create {
        writes::create(&api, created).await?;
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
    Ok(api.get(&plan.name).await?)
}

/// Selects the placement's resources and brings the resource snapshots up to date.
pub(crate) async fn sync_resources(
    client: &Client,
    kinds: &HubKinds,
    crp: &ClusterResourcePlacement,
    owner: &Owner,
) -> Result<LatestResources, ControllerError> {
    let selection = select(client, kinds, crp).await?;
    let api: Api<ClusterResourceSnapshot> = Api::all(client.clone());
    let existing: Vec<ClusterResourceSnapshot> = owned(client, &owner.name).await?;
    let plan = resource::plan(owner, &existing, &selection.manifests, history_limit(crp));
    for snapshot in &plan.create {
        writes::create(&api, snapshot).await?;
    }
    tidy(&api, &plan.housekeeping).await?;
    Ok(LatestResources {
        index: plan.index,
        name: plan.name,
        selection,
        snapshots: existing,
    })
}

/// Reads the objects the placement's selectors pick.
async fn select(
    client: &Client,
    kinds: &HubKinds,
    crp: &ClusterResourcePlacement,
) -> Result<Selection, ControllerError> {
    let terms = &crp.spec.resource_selectors;
    let mut served = kinds.get(false).await?;
    let (_, problems) = selection::kinds_to_list(terms, &served);
    if !problems.is_empty() {
        served = kinds.get(true).await?;
    }
    let (wanted, problems) = selection::kinds_to_list(terms, &served);
    let lists = wanted.iter().map(|kind| async move {
        let gvk = GroupVersionKind::gvk(&kind.group, &kind.version, &kind.kind);
        let api: Api<DynamicObject> = Api::all_with(
            client.clone(),
            &ApiResource::from_gvk_with_plural(&gvk, &kind.plural),
        );
        let objects = api.list(&ListParams::default()).await?.items;
        let objects = objects
            .into_iter()
            .map(|o| object_json(o, kind))
            .collect::<Result<Vec<Value>, _>>()?;
        Ok::<_, ControllerError>(((*kind).clone(), objects))
    });
    let hub = HubObjects {
        kinds: try_join_all(lists).await?,
    };
    let mut selection = selection::select(terms, &hub);
    selection.problems.splice(0..0, problems);
    Ok(selection)
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

/// The placement's `revisionHistoryLimit`, KubeFleet's 10 when unset.
fn history_limit(crp: &ClusterResourcePlacement) -> usize {
    crp.spec
        .revision_history_limit
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(crate::snapshot::DEFAULT_HISTORY_LIMIT)
}

/// The manifests of resource snapshot index `index` of `placement`, if complete.
pub(crate) async fn manifests(
    client: &Client,
    placement: &str,
    index: u64,
) -> Result<Option<Vec<Value>>, kube::Error> {
    let api: Api<ClusterResourceSnapshot> = Api::all(client.clone());
    let labels = BTreeMap::from([
        (PARENT_PLACEMENT_LABEL, placement.to_string()),
        (
            flotilla_api::placement::snapshots::RESOURCE_INDEX_LABEL,
            index.to_string(),
        ),
    ]);
    let selector: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let chunks = api
        .list(&ListParams::default().labels(&selector.join(",")))
        .await?
        .items;
    Ok(resource::manifests_of(&chunks, index))
}
