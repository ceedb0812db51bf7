//! Writes a placement's status: the roll-up of [`crate::status::placement_status`] plus one
//! condition of Flotilla's own, `ClusterResourcePlacementResourcesSelected` (or
//! `ResourcePlacementResourcesSelected`), that says when
//! the selectors cannot select anything as written or select nothing at all, so a placement
//! that places nothing explains itself.

use flotilla_api::conditions::{NewCondition, set_condition};
use flotilla_api::placement::status::ResourceIdentifier;
use flotilla_api::placement::{
    ClusterResourceBinding, ClusterResourceSnapshot, ClusterSchedulingPolicySnapshot,
};
use flotilla_apiserver::recorder::{EventRecorder, reference};
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use std::sync::Arc;

use super::family::{Parent, PlacementFamily, api};
use super::snapshots::LatestResources as Latest;
use super::writes;
use crate::selection;
use crate::snapshot::resource::{index_of, manifests_of};
use crate::status::events;
use crate::status::{
    LatestResources, PlacementBinding, PlacementInput, PlacementKind, PolicySnapshotView,
    placement_status,
};

/// The type of Flotilla's selection condition on a placement of `kind`, e.g.
/// `ClusterResourcePlacementResourcesSelected`.
pub fn resources_selected(kind: PlacementKind) -> String {
    format!("{}ResourcesSelected", kind.prefix())
}

/// Everything the status is computed from (records in their working form).
pub(crate) struct StatusInput<'a> {
    pub parent: &'a Parent<'a>,
    pub resources: &'a Latest,
    pub snapshots: &'a [ClusterResourceSnapshot],
    pub policy_snapshot: &'a ClusterSchedulingPolicySnapshot,
    pub bindings: &'a [Arc<ClusterResourceBinding>],
    pub now: Timestamp,
}

/// Computes the status and writes it if it changed.
/// Computes the status, writes it if it changed, and records the events the change is worth
/// ([`crate::status::events`]) once it is stored.
pub(crate) async fn write<F: PlacementFamily>(
    client: &Client,
    input: &StatusInput<'_>,
    recorder: &EventRecorder,
) -> Result<(), kube::Error> {
    let parent = input.parent;
    let placement = &parent.key.name;
    let generation = parent.generation();
    let selected: Vec<ResourceIdentifier> = input
        .resources
        .selection
        .manifests
        .iter()
        .map(selection::identifier)
        .collect();
    let index = input.resources.index.to_string();
    let binding_indices: Vec<Option<String>> = input
        .bindings
        .iter()
        .map(|b| index_of(placement, &b.spec.resource_snapshot_name).map(|i| i.to_string()))
        .collect();
    let views: Vec<PlacementBinding> = input
        .bindings
        .iter()
        .zip(&binding_indices)
        .map(|(b, i)| PlacementBinding::of(b, i.as_deref()))
        .collect();
    let resources_at = |index: &str| -> Vec<ResourceIdentifier> {
        index
            .parse()
            .ok()
            .and_then(|i| manifests_of(input.snapshots, i))
            .map(|m| m.iter().map(selection::identifier).collect())
            .unwrap_or_default()
    };
    let previous = parent.status.cloned().unwrap_or_default();
    let mut status = placement_status(&PlacementInput {
        kind: F::KIND,
        generation,
        policy: parent.spec.policy.as_ref(),
        strategy: parent.spec.strategy.as_ref(),
        latest: LatestResources {
            snapshot: &input.resources.name,
            index: &index,
            selected: &selected,
        },
        resources_at: &resources_at,
        policy_snapshot: Some(PolicySnapshotView::of(input.policy_snapshot)),
        bindings: &views,
        previous: &previous,
        now: input.now,
    });
    let mut conditions = status.conditions.take().unwrap_or_default();
    let selected_type = resources_selected(F::KIND);
    set_condition(
        &mut conditions,
        selection_condition(&selected_type, &input.resources.selection, generation),
        input.now,
    );
    status.conditions = Some(conditions);
    if status == previous {
        return Ok(());
    }
    // Only the changes: a PickAll placement's status lists every cluster, megabytes at
    // 10,000, of which a round changes a few.
    let read = parent.status.map(serde_json::to_value).and_then(Result::ok);
    writes::status_changes(
        &api::<F::Placement>(client, &parent.key),
        parent.meta,
        read.as_ref(),
        &serde_json::to_value(&status).unwrap_or_default(),
    )
    .await?;
    let regarding = reference::<F::Placement>(parent.meta);
    for event in events::transitions(F::KIND, &previous, &status, generation) {
        recorder
            .record(
                &regarding,
                event.warning,
                event.reason,
                &event.note,
                "Reconcile",
            )
            .await;
    }
    Ok(())
}

/// Whether the selectors selected something, and if not, why (as condition `type_`).
fn selection_condition<'a>(
    type_: &'a str,
    selection: &selection::Selection,
    generation: i64,
) -> NewCondition<'a> {
    let (status, reason, message) = if !selection.problems.is_empty() {
        (
            "False",
            "InvalidResourceSelectors",
            selection.problems.join("; "),
        )
    } else if selection.manifests.is_empty() {
        (
            "False",
            "NoResourcesSelected",
            "the resource selectors match no object on the hub; the placement places nothing until one appears".to_string(),
        )
    } else {
        (
            "True",
            "ResourcesSelected",
            format!("{} resources selected", selection.manifests.len()),
        )
    };
    NewCondition {
        type_,
        status,
        reason,
        message,
        observed_generation: Some(generation),
    }
}
