//! What processing one manifest came to, and the `Applied` / `DiffReported` condition
//! KubeFleet reports for it in the Work's `manifestConditions`.
//!
//! The result names are KubeFleet's (`ManifestProcessingApplyOrReportDiffResultType`); they are
//! the condition reasons, so the hub can tell a refused takeover from drift from an API error.

use flotilla_api::conditions::NewCondition;
use flotilla_api::placement::status::PatchDetail;

use super::identifier::{ManifestError, ManifestProblem};

/// Condition type: the manifest was applied.
pub const APPLIED: &str = "Applied";
/// Condition type: the applied object is available.
pub const AVAILABLE: &str = "Available";
/// Condition type: differences were reported (ReportDiff).
pub const DIFF_REPORTED: &str = "DiffReported";

/// Reason of a `DiffReported=False` condition.
const FAILED_TO_REPORT_DIFF: &str = "FailedToReportDiff";

/// How processing a manifest ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProcessingResult {
    /// Created or applied.
    Applied,
    /// The manifest is not a well-formed object ([`ManifestProblem`]).
    DecodingErred,
    /// The manifest uses `metadata.generateName`.
    FoundGenerateName,
    /// An earlier manifest places the same object.
    Duplicated,
    /// Reading the object from the member failed.
    FailedToFindObjInMemberCluster,
    /// The object exists, is not ours, and taking it over was refused or failed (co-ownership
    /// disallowed, placed by another placement, `IfNoDiff` with differences).
    FailedToTakeOver,
    /// The object exists, is not ours, and `whenToTakeOver: Never` forbids taking it over.
    NotTakenOver,
    /// `whenToApply: IfNotDrifted` and the object drifted from the manifest last applied.
    FoundDrifts,
    /// The create or apply request failed, or the owners forbid applying.
    FailedToApply,
    /// ReportDiff: the object differs from the manifest (or does not exist).
    FoundDiff,
    /// ReportDiff: the object matches the manifest.
    NoDiffFound,
}

impl ProcessingResult {
    /// The condition reason (KubeFleet's string).
    pub fn reason(self) -> &'static str {
        match self {
            ProcessingResult::Applied => "Applied",
            ProcessingResult::DecodingErred => "DecodingErred",
            ProcessingResult::FoundGenerateName => "FoundGenerateName",
            ProcessingResult::Duplicated => "Duplicated",
            ProcessingResult::FailedToFindObjInMemberCluster => "FailedToFindObjInMemberCluster",
            ProcessingResult::FailedToTakeOver => "FailedToTakeOver",
            ProcessingResult::NotTakenOver => "NotTakenOver",
            ProcessingResult::FoundDrifts => "FoundDrifts",
            ProcessingResult::FailedToApply => "ManifestApplyFailed",
            ProcessingResult::FoundDiff => "FoundDiff",
            ProcessingResult::NoDiffFound => "NoDiffFound",
        }
    }

    /// Whether the object on the member is now the manifest's (and worth an availability
    /// check).
    pub fn is_applied(self) -> bool {
        self == ProcessingResult::Applied
    }

    /// Whether differences were computed and reported (ReportDiff).
    pub fn is_diff_reported(self) -> bool {
        matches!(
            self,
            ProcessingResult::FoundDiff | ProcessingResult::NoDiffFound
        )
    }
}

/// What processing one manifest came to.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// How it ended.
    pub result: ProcessingResult,
    /// Human explanation (the error for failures).
    pub message: String,
    /// Drift of an object the fleet owns (for `driftDetails`).
    pub drifts: Vec<PatchDetail>,
    /// Differences from the manifest of an object not (yet) applied: ReportDiff, or a takeover
    /// refused for them (for `diffDetails`).
    pub diffs: Vec<PatchDetail>,
}

impl Outcome {
    /// An outcome without drifts or differences.
    pub fn new(result: ProcessingResult, message: impl Into<String>) -> Outcome {
        Outcome {
            result,
            message: message.into(),
            drifts: Vec::new(),
            diffs: Vec::new(),
        }
    }

    /// The outcome of a manifest the plan rejected.
    pub fn rejected(error: &ManifestError) -> Outcome {
        let result = match error.problem {
            ManifestProblem::NotAnObject
            | ManifestProblem::Missing(_)
            | ManifestProblem::InvalidApiVersion(_) => ProcessingResult::DecodingErred,
            ManifestProblem::GenerateName(_) => ProcessingResult::FoundGenerateName,
            ManifestProblem::Duplicate(_) => ProcessingResult::Duplicated,
        };
        Outcome::new(result, error.problem.to_string())
    }

    /// The manifest's `Applied` condition (for apply strategies other than ReportDiff).
    pub fn applied_condition(&self) -> NewCondition<'static> {
        if self.result.is_applied() {
            condition(
                APPLIED,
                "True",
                self.result.reason(),
                "Manifest has been applied successfully".to_owned(),
            )
        } else {
            condition(
                APPLIED,
                "False",
                self.result.reason(),
                format!("Failed to apply the manifest (error: {})", self.message),
            )
        }
    }

    /// The manifest's `DiffReported` condition (for ReportDiff).
    pub fn diff_reported_condition(&self) -> NewCondition<'static> {
        match self.result {
            ProcessingResult::FoundDiff => condition(
                DIFF_REPORTED,
                "True",
                self.result.reason(),
                "Diff has been found between the hub cluster and the member cluster".to_owned(),
            ),
            ProcessingResult::NoDiffFound => condition(
                DIFF_REPORTED,
                "True",
                self.result.reason(),
                "No diff has been found between the hub cluster and the member cluster".to_owned(),
            ),
            other => condition(
                DIFF_REPORTED,
                "False",
                FAILED_TO_REPORT_DIFF,
                format!(
                    "An error blocks the diff reporting process ({}, error: {})",
                    other.reason(),
                    self.message
                ),
            ),
        }
    }
}

/// A condition without an observed generation (the status roll-up sets it).
pub(crate) fn condition(
    type_: &'static str,
    status: &'static str,
    reason: &'static str,
    message: String,
) -> NewCondition<'static> {
    NewCondition {
        type_,
        status,
        reason,
        message,
        observed_generation: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::work::identifier::identify;
    use serde_json::json;

    #[test]
    fn rejected_manifests_get_kubefleet_reasons() {
        let cases = [
            (json!(1), "DecodingErred"),
            (json!({"kind": "Pod"}), "DecodingErred"),
            (
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "p-"}}),
                "FoundGenerateName",
            ),
        ];
        for (manifest, reason) in cases {
            let error = identify(0, &manifest).unwrap_err();
            let outcome = Outcome::rejected(&error);
            assert_eq!(outcome.result.reason(), reason);
            assert_eq!(outcome.message, error.problem.to_string());
            let applied = outcome.applied_condition();
            assert_eq!((applied.status, applied.reason), ("False", reason));
        }
    }

    #[test]
    fn applied_conditions() {
        let applied = Outcome::new(ProcessingResult::Applied, "").applied_condition();
        assert_eq!(
            (applied.type_, applied.status, applied.reason),
            ("Applied", "True", "Applied")
        );
        let failed =
            Outcome::new(ProcessingResult::FailedToApply, "409 Conflict").applied_condition();
        assert_eq!(
            (failed.status, failed.reason, failed.message.as_str()),
            (
                "False",
                "ManifestApplyFailed",
                "Failed to apply the manifest (error: 409 Conflict)"
            )
        );
    }

    #[test]
    fn diff_reported_conditions() {
        let found = Outcome::new(ProcessingResult::FoundDiff, "").diff_reported_condition();
        assert_eq!(
            (found.type_, found.status, found.reason),
            ("DiffReported", "True", "FoundDiff")
        );
        let none = Outcome::new(ProcessingResult::NoDiffFound, "").diff_reported_condition();
        assert_eq!((none.status, none.reason), ("True", "NoDiffFound"));
        let blocked = Outcome::new(ProcessingResult::FailedToTakeOver, "owned by x")
            .diff_reported_condition();
        assert_eq!(
            (blocked.status, blocked.reason, blocked.message.as_str()),
            (
                "False",
                "FailedToReportDiff",
                "An error blocks the diff reporting process (FailedToTakeOver, error: owned by x)"
            )
        );
        assert!(ProcessingResult::FoundDiff.is_diff_reported());
        assert!(!ProcessingResult::FailedToTakeOver.is_diff_reported());
    }
}
