//! The failed, drifted and diffed resources of a binding, read from its Works' manifest
//! conditions (KubeFleet's `extract*ResourcePlacementsFromWork`), and how a resource is named
//! in messages.

use flotilla_api::conditions::find;
use flotilla_api::placement::status::{
    DiffedResourcePlacement, DriftedResourcePlacement, FailedResourcePlacement, ResourceIdentifier,
};
use flotilla_api::placement::work::WorkResourceIdentifier;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::ConditionType;
use super::binding::WorkView;

/// The most failed, drifted or diffed resources a status lists (the CRD's `maxItems`).
pub const PLACEMENT_LIST_LIMIT: usize = 100;

/// The placement identifier of a Work manifest, inside `envelope` if the Work carries one.
fn identifier(id: &WorkResourceIdentifier, work: &WorkView<'_>) -> ResourceIdentifier {
    let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_string());
    ResourceIdentifier {
        group: non_empty(&id.group),
        version: id.version.clone(),
        kind: id.kind.clone(),
        name: id.name.clone(),
        namespace: non_empty(&id.namespace),
        envelope: work.envelope.cloned(),
    }
}

/// `Kind namespace/name` (or `Kind name` when cluster-scoped), as messages name a resource.
pub(crate) fn describe(resource: &ResourceIdentifier) -> String {
    named(
        &resource.kind,
        resource.namespace.as_deref().unwrap_or_default(),
        &resource.name,
    )
}

/// A Work manifest, named as [`describe`] names a resource.
pub(crate) fn describe_manifest(id: &WorkResourceIdentifier) -> String {
    named(&id.kind, &id.namespace, &id.name)
}

/// `kind namespace/name`, or `kind name` when `namespace` is empty.
fn named(kind: &str, namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        format!("{kind} {name}")
    } else {
        format!("{kind} {namespace}/{name}")
    }
}

/// The manifests of `work` that failed to apply or are not available, with the failing
/// condition; none unless the Work itself reports Applied or Available False for its
/// generation.
pub(crate) fn failed(work: &WorkView<'_>) -> Vec<FailedResourcePlacement> {
    let is_false = |type_: ConditionType| {
        find(&work.status.conditions, type_.as_str())
            .is_some_and(|c| c.status == "False" && c.observed_generation == Some(work.generation))
    };
    if !is_false(ConditionType::Applied) && !is_false(ConditionType::Available) {
        return Vec::new();
    }
    work.status
        .manifest_conditions
        .iter()
        .filter_map(|manifest| {
            [ConditionType::Applied, ConditionType::Available]
                .iter()
                .find_map(|t| {
                    find(&manifest.conditions, t.as_str()).filter(|c| c.status == "False")
                })
                .map(|condition| FailedResourcePlacement {
                    resource: identifier(&manifest.identifier, work),
                    condition: condition.clone(),
                })
        })
        .collect()
}

/// The manifests of `work` with drift; times the member did not report are `now`.
pub(crate) fn drifted(work: &WorkView<'_>, now: Timestamp) -> Vec<DriftedResourcePlacement> {
    work.status
        .manifest_conditions
        .iter()
        .filter_map(|manifest| {
            let details = manifest.drift_details.as_ref()?;
            let observed = details.observation_time.clone().unwrap_or(Time(now));
            Some(DriftedResourcePlacement {
                resource: identifier(&manifest.identifier, work),
                first_drifted_observed_time: details
                    .first_drifted_observed_time
                    .clone()
                    .unwrap_or_else(|| observed.clone()),
                observation_time: observed,
                target_cluster_observed_generation: details.observed_in_member_cluster_generation,
                observed_drifts: (!details.observed_drifts.is_empty())
                    .then(|| details.observed_drifts.clone()),
            })
        })
        .collect()
}

/// The manifests of `work` with differences from the hub; times the member did not report
/// are `now`.
pub(crate) fn diffed(work: &WorkView<'_>, now: Timestamp) -> Vec<DiffedResourcePlacement> {
    work.status
        .manifest_conditions
        .iter()
        .filter_map(|manifest| {
            let details = manifest.diff_details.as_ref()?;
            let observed = details.observation_time.clone().unwrap_or(Time(now));
            Some(DiffedResourcePlacement {
                resource: identifier(&manifest.identifier, work),
                first_diffed_observed_time: details
                    .first_diffed_observed_time
                    .clone()
                    .unwrap_or_else(|| observed.clone()),
                observation_time: observed,
                target_cluster_observed_generation: details.observed_in_member_cluster_generation,
                observed_diffs: (!details.observed_diffs.is_empty())
                    .then(|| details.observed_diffs.clone()),
            })
        })
        .collect()
}
