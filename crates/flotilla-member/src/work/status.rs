//! The Work's status from the per-manifest results, as KubeFleet's `refreshWorkStatus` builds
//! it, and the AppliedWork's list of applied objects.
//!
//! - Each manifest gets a `manifestConditions` entry (in manifest order): `Applied` (or
//!   `DiffReported` under ReportDiff) from its [`Outcome`], `Available` once applied, and
//!   `driftDetails` / `diffDetails` when it has drifts or differences. An entry is matched to
//!   the previous status by group, version, kind, namespace and name (not ordinal, which moves
//!   when manifests are added or removed), so condition transition times and the first time
//!   drift or differences were observed carry over.
//! - The Work's `Applied` is True when every manifest is applied (`AllManifestsApplied`, else
//!   `SomeManifestsAreNotApplied`). `Available` is set only while `Applied` is True: True when
//!   every manifest is available (`AllManifestsAvailable`), True with `WorkNotTrackable` when
//!   some are only not trackable, else False (`SomeManifestsAreNotAvailable`). Under
//!   ReportDiff both are removed and `DiffReported` says whether every manifest reported its
//!   differences (`AllManifestsDiffReported` / `SomeManifestsHaveNotReportedDiff`).
//! - Conditions carry the generation they describe: the member object's for manifest
//!   conditions (absent when there is none), the Work's for Work conditions.

use flotilla_api::conditions::{NewCondition, set_condition};
use flotilla_api::placement::applied_work::AppliedResourceMeta;
use flotilla_api::placement::work::{
    DiffDetails, DriftDetails, ManifestCondition, WorkResourceIdentifier, WorkStatus,
};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use super::availability::Availability;
use super::identifier::{ManifestError, same_target};
use super::outcome::{APPLIED, AVAILABLE, DIFF_REPORTED, Outcome, condition};
use super::strategy::Strategy;

/// Everything the status needs about one manifest after processing it.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestResult {
    /// The manifest.
    pub identifier: WorkResourceIdentifier,
    /// How processing it ended.
    pub outcome: Outcome,
    /// The availability of the object read back after applying it; ignored unless the
    /// outcome is applied.
    pub availability: Option<Availability>,
    /// `metadata.generation` of the member object, if there is one.
    pub live_generation: Option<i64>,
    /// `metadata.uid` of the member object, if there is one.
    pub live_uid: Option<String>,
}

impl ManifestResult {
    /// The result of a manifest the plan rejected.
    pub fn rejected(error: &ManifestError) -> ManifestResult {
        ManifestResult {
            identifier: error.identifier.clone(),
            outcome: Outcome::rejected(error),
            availability: None,
            live_generation: None,
            live_uid: None,
        }
    }

    /// The availability that counts: only an applied object's.
    fn applied_availability(&self) -> Option<&Availability> {
        self.availability
            .as_ref()
            .filter(|_| self.outcome.result.is_applied())
    }
}

/// The Work's new status: `results` (one per manifest, any order) rolled up over `previous`
/// for a Work at `generation` applied with `strategy`, observed at `now`.
pub fn work_status(
    previous: &WorkStatus,
    generation: i64,
    strategy: Strategy,
    results: &[ManifestResult],
    now: Timestamp,
) -> WorkStatus {
    let report_diff = strategy.reports_diff_only();
    let mut ordered: Vec<&ManifestResult> = results.iter().collect();
    ordered.sort_by_key(|r| r.identifier.ordinal);
    let manifest_conditions = ordered
        .iter()
        .map(|result| manifest_condition(previous, result, report_diff, now))
        .collect();

    let total = results.len();
    let applied = results
        .iter()
        .filter(|r| r.outcome.result.is_applied())
        .count();
    let availabilities = || {
        results
            .iter()
            .filter_map(ManifestResult::applied_availability)
    };
    let available = availabilities()
        .filter(|a| matches!(a, Availability::Available | Availability::NotTrackable))
        .count();
    let untrackable = availabilities()
        .filter(|a| **a == Availability::NotTrackable)
        .count();
    let diff_reported = results
        .iter()
        .filter(|r| r.outcome.result.is_diff_reported())
        .count();

    let mut conditions = previous.conditions.clone();
    let mut set = |type_: &str, new: Option<NewCondition<'static>>| {
        put(&mut conditions, type_, new, Some(generation), now);
    };
    if report_diff {
        set(APPLIED, None);
        set(AVAILABLE, None);
        set(
            DIFF_REPORTED,
            Some(work_diff_reported(total, diff_reported)),
        );
    } else {
        set(DIFF_REPORTED, None);
        set(APPLIED, Some(work_applied(total, applied)));
        set(
            AVAILABLE,
            (applied == total).then(|| work_available(total, available, untrackable)),
        );
    }
    WorkStatus {
        conditions,
        manifest_conditions,
    }
}

/// The Work's status when the applier could not even record the Work on the member (its
/// AppliedWork could not be read or created): nothing was applied, so the manifest entries
/// go, and `Applied` (or `DiffReported` under ReportDiff) is False with reason
/// [`NOT_RECORDED`] and `message`, which says why and what to do.
pub fn unrecorded(
    previous: &WorkStatus,
    generation: i64,
    strategy: Strategy,
    message: String,
    now: Timestamp,
) -> WorkStatus {
    let failed = if strategy.reports_diff_only() {
        DIFF_REPORTED
    } else {
        APPLIED
    };
    let mut conditions = previous.conditions.clone();
    for type_ in [APPLIED, AVAILABLE, DIFF_REPORTED]
        .into_iter()
        .filter(|t| *t != failed)
    {
        put(&mut conditions, type_, None, None, now);
    }
    put(
        &mut conditions,
        failed,
        Some(condition(failed, "False", NOT_RECORDED, message)),
        Some(generation),
        now,
    );
    WorkStatus {
        conditions,
        manifest_conditions: Vec::new(),
    }
}

/// Reason of a Work's failed condition when its AppliedWork could not be recorded.
pub const NOT_RECORDED: &str = "AppliedWorkNotRecorded";

/// What the AppliedWork records now: every applied manifest's identifier and object UID, and
/// for a manifest not applied this time (drift, a refused apply, an API error), the object
/// `previous` (the last record) had for it, so that the object is still found and removed
/// when the manifest leaves the Work.
pub fn applied_resources(
    previous: &[AppliedResourceMeta],
    results: &[ManifestResult],
) -> Vec<AppliedResourceMeta> {
    let mut ordered: Vec<&ManifestResult> = results.iter().collect();
    ordered.sort_by_key(|r| r.identifier.ordinal);
    ordered
        .into_iter()
        .filter_map(|r| {
            let uid = if r.outcome.result.is_applied() {
                r.live_uid.clone().unwrap_or_default()
            } else {
                previous
                    .iter()
                    .find(|p| same_target(&p.identifier, &r.identifier))?
                    .uid
                    .clone()
            };
            Some(AppliedResourceMeta {
                identifier: r.identifier.clone(),
                uid,
            })
        })
        .collect()
}

/// One manifest's status entry.
fn manifest_condition(
    previous: &WorkStatus,
    result: &ManifestResult,
    report_diff: bool,
    now: Timestamp,
) -> ManifestCondition {
    let before = previous
        .manifest_conditions
        .iter()
        .find(|entry| same_object(&entry.identifier, &result.identifier));
    let mut conditions = before.map(|b| b.conditions.clone()).unwrap_or_default();
    let generation = result.live_generation.filter(|g| *g != 0);
    let outcome = &result.outcome;
    put(
        &mut conditions,
        APPLIED,
        (!report_diff).then(|| outcome.applied_condition()),
        generation,
        now,
    );
    put(
        &mut conditions,
        AVAILABLE,
        result.applied_availability().map(Availability::condition),
        generation,
        now,
    );
    put(
        &mut conditions,
        DIFF_REPORTED,
        report_diff.then(|| outcome.diff_reported_condition()),
        generation,
        now,
    );
    let observed = Some(Time(now));
    let drift_details = (!outcome.drifts.is_empty()).then(|| DriftDetails {
        observation_time: observed.clone(),
        observed_in_member_cluster_generation: result.live_generation.unwrap_or(0),
        first_drifted_observed_time: before
            .and_then(|b| b.drift_details.as_ref())
            .and_then(|d| d.first_drifted_observed_time.clone())
            .or_else(|| observed.clone()),
        observed_drifts: outcome.drifts.clone(),
    });
    let diff_details = (!outcome.diffs.is_empty()).then(|| DiffDetails {
        observation_time: observed.clone(),
        observed_in_member_cluster_generation: result.live_generation,
        first_diffed_observed_time: before
            .and_then(|b| b.diff_details.as_ref())
            .and_then(|d| d.first_diffed_observed_time.clone())
            .or_else(|| observed.clone()),
        observed_diffs: outcome.diffs.clone(),
    });
    ManifestCondition {
        identifier: result.identifier.clone(),
        conditions,
        drift_details,
        diff_details,
    }
}

/// Whether two identifiers name the same object of the same version (ordinals aside); an
/// identifier without a version names no object (the manifest was not decodable).
fn same_object(a: &WorkResourceIdentifier, b: &WorkResourceIdentifier) -> bool {
    !a.version.is_empty()
        && (&a.group, &a.version, &a.kind, &a.namespace, &a.name)
            == (&b.group, &b.version, &b.kind, &b.namespace, &b.name)
}

/// Sets the condition `type_` to `new` with `generation` (keeping its transition time if its
/// status is unchanged), or removes it.
fn put(
    conditions: &mut Vec<Condition>,
    type_: &str,
    new: Option<NewCondition<'static>>,
    generation: Option<i64>,
    now: Timestamp,
) {
    match new {
        Some(new) => {
            set_condition(
                conditions,
                NewCondition {
                    observed_generation: generation,
                    ..new
                },
                now,
            );
        }
        None => conditions.retain(|c| c.type_ != type_),
    }
}

fn work_applied(total: usize, applied: usize) -> NewCondition<'static> {
    if applied == total {
        condition(
            APPLIED,
            "True",
            "AllManifestsApplied",
            "All the specified manifests have been applied".to_owned(),
        )
    } else {
        condition(
            APPLIED,
            "False",
            "SomeManifestsAreNotApplied",
            format!("Failed to apply all manifests ({applied} of {total} manifests are applied)"),
        )
    }
}

fn work_available(total: usize, available: usize, untrackable: usize) -> NewCondition<'static> {
    if available < total {
        condition(
            AVAILABLE,
            "False",
            "SomeManifestsAreNotAvailable",
            format!(
                "Some manifests are not available ({available} of {total} manifests are available)"
            ),
        )
    } else if untrackable > 0 {
        condition(
            AVAILABLE,
            "True",
            "WorkNotTrackable",
            "Some of the applied manifests cannot be tracked for availability".to_owned(),
        )
    } else {
        condition(
            AVAILABLE,
            "True",
            "AllManifestsAvailable",
            "All of the applied manifests are available".to_owned(),
        )
    }
}

fn work_diff_reported(total: usize, reported: usize) -> NewCondition<'static> {
    if reported == total {
        condition(
            DIFF_REPORTED,
            "True",
            "AllManifestsDiffReported",
            "All the specified manifests have reported diff".to_owned(),
        )
    } else {
        condition(
            DIFF_REPORTED,
            "False",
            "SomeManifestsHaveNotReportedDiff",
            format!(
                "Failed to report diff on all manifests ({reported} of {total} manifests have \
                 reported diff)"
            ),
        )
    }
}

#[cfg(test)]
mod tests;
