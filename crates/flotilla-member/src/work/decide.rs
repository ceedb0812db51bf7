//! What to do with one manifest, given the object on the member (if any) and the Work's apply
//! strategy: KubeFleet's `processOneManifest`, as one pure decision.
//!
//! The steps, in KubeFleet's order:
//!
//! 1. **No object on the member**: create it (ReportDiff instead reports the whole object as
//!    a difference, path `/`).
//! 2. **Takeover** of an object the Work's AppliedWork does not own, unless
//!    `whenToTakeOver: Never`: refused if it has other owners and `allowCoOwnership` is off, if
//!    another AppliedWork owns it (another placement placed it; one object cannot be placed
//!    twice), or with `IfNoDiff` if it differs from the manifest. Taking over only adds the
//!    AppliedWork owner reference; nothing else of the object changes.
//! 3. **ReportDiff** stops here and reports the differences, owned or not. As in KubeFleet, a
//!    takeover the strategy allows still happens first.
//! 4. An object still not owned (`Never`) is not applied: `NotTakenOver`.
//! 5. **Drift** (`whenToApply: IfNotDrifted`): when the object carries the spec hash of this
//!    very manifest (so any difference was made on the member, not by a new manifest), any
//!    difference is drift and the apply is skipped.
//! 6. **Owners** are checked once more (a co-owner added later while co-ownership is off, or a
//!    second AppliedWork, fails the apply), then the manifest is applied.
//!
//! The object written is the sanitized manifest plus the agent's spec hash annotation and
//! AppliedWork owner reference, plus, with client-side apply, the last-applied annotation (the
//! base of the next three-way merge), and with `IfNotDrifted`, the live `resourceVersion`, so
//! the write fails instead of overwriting a change made since it was read.

use flotilla_api::placement::status::PatchDetail;
use flotilla_api::placement::strategy::{
    ApplyStrategyType, ComparisonOption, WhenToApply, WhenToTakeOver,
};
use flotilla_apimachinery::patch::PatchStrategy;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use serde_json::Value;

use super::drift::differences;
use super::manifest::{
    FIELD_MANAGER, SPEC_HASH_ANNOTATION, annotation, record_last_applied, sanitized,
    set_annotation, spec_hash,
};
use super::outcome::{Outcome, ProcessingResult};
use super::ownership::{AppliedWorkOwner, Owners};
use super::strategy::Strategy;

/// Field manager Kubernetes records for fields set before the first server-side apply.
const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// Everything the decision about one manifest depends on.
#[derive(Clone, Copy)]
pub struct Input<'a> {
    /// The manifest as the hub wants it (overrides applied), with a valid identifier.
    pub manifest: &'a Value,
    /// The object on the member with the manifest's group, kind, namespace and name, if any.
    pub live: Option<&'a Value>,
    /// The Work's apply strategy.
    pub strategy: Strategy,
    /// The Work's AppliedWork on the member.
    pub owner: &'a AppliedWorkOwner,
    /// How the kind's lists merge (`BuiltinStrategy` for built-in kinds, the CRD's schema
    /// otherwise), for comparisons.
    pub lists: &'a (dyn PatchStrategy + Sync),
}

/// How an existing object is brought to the manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyMethod {
    /// Client-side apply: a three-way merge of the last-applied annotation, the written object
    /// and the live object (strategic merge for built-in kinds, JSON merge otherwise).
    ThreeWayMerge,
    /// Server-side apply as [`FIELD_MANAGER`]; `force` takes
    /// conflicting fields over. Forced when the strategy says so, and whenever only the agent
    /// (or Kubernetes' `before-first-apply`) manages the object, as KubeFleet does to avoid
    /// conflicts with its own earlier updates.
    ServerSideApply {
        /// Force through field-manager conflicts.
        force: bool,
    },
}

/// What to do with one manifest.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// The object does not exist: create `object` (with [`FIELD_MANAGER`] as field manager);
    /// then settle the outcome with [`applied`].
    Create {
        /// The object to create, AppliedWork owner reference included.
        object: Value,
        /// Create it with a server-side apply rather than a plain create, because later writes
        /// will be server-side applies: the agent's fields are then owned by its apply from
        /// the start, instead of by an earlier create that its applies would conflict with.
        server_side: bool,
    },
    /// Apply `object` over the existing object with `method`; then settle the outcome with
    /// [`applied`]. The AppliedWork owner reference in `object` is added to the object's
    /// owners (both methods merge owner references by UID).
    Apply {
        /// The object to apply, AppliedWork owner reference included.
        object: Value,
        /// How.
        method: ApplyMethod,
    },
    /// Do not apply, by policy: ReportDiff results, or drift under `IfNotDrifted`. When
    /// `take_over` is set, the object was just taken over: add that owner reference to it
    /// first (a failure to do so is a `FailedToTakeOver` outcome).
    Skip {
        /// The manifest's outcome.
        outcome: Outcome,
        /// The owner reference to add to the object, if it is being taken over.
        take_over: Option<OwnerReference>,
    },
    /// Cannot proceed (takeover refused, ownership conflict); nothing is written.
    Fail(Outcome),
}

/// Decides what to do with one manifest (see the module docs).
pub fn decide(input: &Input<'_>) -> Decision {
    let strategy = input.strategy;
    let Some(live) = input.live else {
        if strategy.reports_diff_only() {
            return Decision::Skip {
                outcome: Outcome {
                    diffs: vec![PatchDetail {
                        path: "/".to_owned(),
                        value_in_member: None,
                        value_in_hub: Some("(the whole object)".to_owned()),
                    }],
                    ..Outcome::new(
                        ProcessingResult::FoundDiff,
                        "the object does not exist on the member",
                    )
                },
                take_over: None,
            };
        }
        let (object, method) = prepare(input, None);
        return Decision::Create {
            object,
            server_side: matches!(method, ApplyMethod::ServerSideApply { .. }),
        };
    };
    let owners = Owners::of(live, input.owner);
    let compare = || differences(strategy.comparison, input.manifest, live, input.lists);

    let mut take_over = None;
    if !owners.ours && strategy.when_to_take_over != WhenToTakeOver::Never {
        if owners.others > 0 && !strategy.allow_co_ownership {
            return fail(
                ProcessingResult::FailedToTakeOver,
                "the object already has other owners and co-ownership is not allowed",
            );
        }
        if let Some(other) = &owners.other_applied_work {
            return fail(
                ProcessingResult::FailedToTakeOver,
                format!(
                    "the object is already placed through AppliedWork {other:?} (another \
                     placement); an object cannot be placed twice"
                ),
            );
        }
        if strategy.when_to_take_over == WhenToTakeOver::IfNoDiff {
            let diffs = compare();
            if !diffs.is_empty() {
                return Decision::Fail(Outcome {
                    diffs,
                    ..Outcome::new(
                        ProcessingResult::FailedToTakeOver,
                        "the object differs from the manifest, and whenToTakeOver is IfNoDiff",
                    )
                });
            }
        }
        take_over = Some(input.owner.owner_reference());
    }

    if strategy.reports_diff_only() {
        let diffs = compare();
        let outcome = if diffs.is_empty() {
            Outcome::new(
                ProcessingResult::NoDiffFound,
                "the object matches the manifest",
            )
        } else {
            Outcome {
                message: format!("{} fields differ from the manifest", diffs.len()),
                result: ProcessingResult::FoundDiff,
                drifts: Vec::new(),
                diffs,
            }
        };
        return Decision::Skip { outcome, take_over };
    }

    if !owners.ours && take_over.is_none() {
        return fail(
            ProcessingResult::NotTakenOver,
            "the object exists on the member and is not the fleet's, and whenToTakeOver is Never",
        );
    }

    if strategy.when_to_apply == WhenToApply::IfNotDrifted
        && annotation(live, SPEC_HASH_ANNOTATION) == Some(spec_hash(input.manifest).as_str())
    {
        let drifts = compare();
        if !drifts.is_empty() {
            return Decision::Skip {
                outcome: Outcome {
                    drifts,
                    ..Outcome::new(
                        ProcessingResult::FoundDrifts,
                        "the object drifted from the manifest, and whenToApply is IfNotDrifted",
                    )
                },
                take_over,
            };
        }
    }

    if owners.others > 0 && !strategy.allow_co_ownership {
        return fail(
            ProcessingResult::FailedToApply,
            "the object has other owners besides the fleet, and co-ownership is not allowed",
        );
    }
    if let Some(other) = &owners.other_applied_work {
        return fail(
            ProcessingResult::FailedToApply,
            format!("the object is also placed through AppliedWork {other:?} (another placement)"),
        );
    }
    let (object, method) = prepare(input, Some(live));
    Decision::Apply { object, method }
}

/// The outcome of a successful create or apply, `written` being the object the member
/// returned. With FullComparison, what the apply could not bring in line (fields the manifest
/// leaves out) is reported as drift, as KubeFleet's post-apply drift detection does; a partial
/// comparison has nothing left to find.
pub fn applied(input: &Input<'_>, written: &Value) -> Outcome {
    let mut outcome = Outcome::new(ProcessingResult::Applied, "the manifest is applied");
    if input.strategy.comparison == ComparisonOption::FullComparison {
        outcome.drifts = differences(
            input.strategy.comparison,
            input.manifest,
            written,
            input.lists,
        );
    }
    outcome
}

/// A failed outcome without details.
fn fail(result: ProcessingResult, message: impl Into<String>) -> Decision {
    Decision::Fail(Outcome::new(result, message))
}

/// The object to write for `input`, and how to apply it over `live`.
fn prepare(input: &Input<'_>, live: Option<&Value>) -> (Value, ApplyMethod) {
    let strategy = input.strategy;
    let mut object = sanitized(input.manifest);
    set_annotation(&mut object, SPEC_HASH_ANNOTATION, spec_hash(input.manifest));
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        let reference = input.owner.owner_reference_json();
        metadata.insert("ownerReferences".to_owned(), Value::Array(vec![reference]));
    }
    let mut method = match strategy.type_ {
        ApplyStrategyType::ServerSideApply => ApplyMethod::ServerSideApply {
            force: strategy.force_conflicts,
        },
        // ReportDiff never writes a manifest.
        ApplyStrategyType::ClientSideApply | ApplyStrategyType::ReportDiff => {
            ApplyMethod::ThreeWayMerge
        }
    };
    if method == ApplyMethod::ThreeWayMerge && !record_last_applied(&mut object) {
        method = ApplyMethod::ServerSideApply {
            force: strategy.force_conflicts,
        };
    }
    if let Some(live) = live {
        if let ApplyMethod::ServerSideApply { force } = &mut method {
            *force |= managed_only_by_the_agent(live);
        }
        if strategy.when_to_apply == WhenToApply::IfNotDrifted
            && let Some(version) = live.pointer("/metadata/resourceVersion").cloned()
            && let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut)
        {
            metadata.insert("resourceVersion".to_owned(), version);
        }
    }
    (object, method)
}

/// Whether every field manager of `live` is the agent or `before-first-apply`.
fn managed_only_by_the_agent(live: &Value) -> bool {
    live.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .all(|entry| {
            matches!(
                entry.get("manager").and_then(Value::as_str),
                Some(FIELD_MANAGER | BEFORE_FIRST_APPLY)
            )
        })
}

#[cfg(test)]
mod tests;
