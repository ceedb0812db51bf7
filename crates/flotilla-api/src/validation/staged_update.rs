//! Rules of staged updates that their schemas cannot express: stage names unique, task
//! shapes, `maxConcurrency` bounds, and what may change on a run or an approval request.

use flotilla_apimachinery::{FieldError, FieldErrorType};
use serde_json::{Value, json};

use super::common::{field, immutable, label_selector, list, name_at_most_63, string};
use super::path::Path;

const TIMED_WAIT: &str = "TimedWait";
const APPROVAL: &str = "Approval";

/// Validates a `ClusterStagedUpdateStrategy` or a `StagedUpdateStrategy`.
pub(crate) fn validate_strategy(new: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let path = Path::new("spec").child("stages");
    let stages = list(new.get("spec"), "stages");
    for (i, stage) in stages.iter().enumerate() {
        let path = path.index(i);
        let stage = Some(stage);
        if let Some(name) = field(stage, "name")
            && stages[..i].iter().any(|s| s.get("name") == Some(name))
        {
            errors.push(FieldError::new(
                FieldErrorType::Duplicate,
                path.child("name"),
                Some(name.clone()),
                "",
            ));
        }
        label_selector(
            field(stage, "labelSelector"),
            &path.child("labelSelector"),
            &mut errors,
        );
        if let Some(value) = field(stage, "maxConcurrency") {
            max_concurrency(value, &path.child("maxConcurrency"), &mut errors);
        }
        tasks(
            list(stage, "afterStageTasks"),
            &[TIMED_WAIT, APPROVAL],
            &path.child("afterStageTasks"),
            &mut errors,
        );
        tasks(
            list(stage, "beforeStageTasks"),
            &[APPROVAL],
            &path.child("beforeStageTasks"),
            &mut errors,
        );
    }
    errors
}

/// `maxConcurrency` is an integer of at least 1 or a percentage from 1% to 100%.
fn max_concurrency(value: &Value, path: &Path, errors: &mut Vec<FieldError>) {
    let valid = match value {
        Value::Number(n) => n.as_i64().is_some_and(|n| n >= 1),
        Value::String(s) => s
            .strip_suffix('%')
            .and_then(|p| p.parse::<u32>().ok())
            .is_some_and(|p| (1..=100).contains(&p) && !s.starts_with('0') && !s.starts_with('+')),
        _ => false,
    };
    if !valid {
        errors.push(FieldError::invalid(
            path,
            value.clone(),
            "must be an integer of at least 1 or a percentage between 1% and 100%",
        ));
    }
}

/// Each task has an allowed type, at most one task per type, and `waitTime` exactly when it
/// is a `TimedWait`.
fn tasks(tasks: &[Value], allowed: &[&str], path: &Path, errors: &mut Vec<FieldError>) {
    for (i, task) in tasks.iter().enumerate() {
        let path = path.index(i);
        let task = Some(task);
        let Some(kind) = string(task, "type") else {
            continue;
        };
        if !allowed.contains(&kind) {
            errors.push(FieldError::not_supported(
                path.child("type"),
                json!(kind),
                allowed,
            ));
            continue;
        }
        if tasks[..i]
            .iter()
            .any(|t| string(Some(t), "type") == Some(kind))
        {
            errors.push(FieldError::new(
                FieldErrorType::Duplicate,
                path.child("type"),
                Some(json!(kind)),
                "",
            ));
        }
        let has_wait = field(task, "waitTime").is_some();
        if kind == TIMED_WAIT && !has_wait {
            errors.push(FieldError::required(
                path.child("waitTime"),
                "must be set when type is TimedWait",
            ));
        }
        if kind == APPROVAL && has_wait {
            errors.push(FieldError::forbidden(
                path.child("waitTime"),
                "may not be set when type is Approval",
            ));
        }
    }
}

/// Validates a `ClusterStagedUpdateRun` or a `StagedUpdateRun`: on update only `spec.state`
/// may change, and never back to `Initialize` nor from `Initialize` straight to `Stop`.
pub(crate) fn validate_run(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    name_at_most_63(new, &mut errors);
    let spec = new.get("spec");
    let path = Path::new("spec");
    if let Some(index) = string(spec, "resourceSnapshotIndex")
        && index.parse::<u64>().is_err()
    {
        errors.push(FieldError::invalid(
            path.child("resourceSnapshotIndex"),
            json!(index),
            "must be a non-negative integer (a resource snapshot index)",
        ));
    }
    let Some(old) = old else { return errors };
    let old_spec = old.get("spec");
    for name in [
        "placementName",
        "resourceSnapshotIndex",
        "stagedRolloutStrategyName",
    ] {
        immutable(
            &path.child(name),
            field(spec, name),
            field(old_spec, name),
            &mut errors,
        );
    }
    let state = |spec| string(spec, "state").unwrap_or("Run");
    let (from, to) = (state(old_spec), state(spec));
    if matches!(
        (from, to),
        ("Initialize", "Stop") | ("Run" | "Stop", "Initialize")
    ) {
        errors.push(FieldError::invalid(
            path.child("state"),
            json!(to),
            format!("invalid state transition: cannot transition from {from} to {to}"),
        ));
    }
    errors
}

/// Validates a `ClusterApprovalRequest` or an `ApprovalRequest`: its spec is immutable.
pub(crate) fn validate_approval_request(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(old) = old {
        immutable(
            &Path::new("spec"),
            new.get("spec"),
            old.get("spec"),
            &mut errors,
        );
    }
    errors
}
