//! Rules of the `updates.flotilla.dev` kinds that their schemas cannot express. Each rule reads
//! the typed object; an object that does not even match its schema gets only the schema's
//! errors (it cannot be read, and the schema already names every bad field).

use std::collections::HashMap;

use flotilla_apimachinery::{FieldError, FieldErrorType};
use serde_json::Value;

use super::common::spec;
use super::path::Path;
use crate::updates::auto_upgrade::{AutoUpgradeProfileSpec, Channel};
use crate::updates::maintenance::{
    CONFIGURATION_NAMES, DEFAULT_SCHEDULE, MaintenanceConfigurationSpec, utc_offset_seconds,
};
use crate::updates::strategy::{
    GateConfiguration, GateType, MemberSelector, STAGE_CONCURRENCY_MAX, UpdateRunStrategy,
};
use crate::updates::update_run::{NodeImageSelectionType, UpdateRunSpec, UpgradeType};

/// Validates a `FleetUpdateStrategy`.
pub(crate) fn validate_strategy(new: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(strategy) = spec::<UpdateRunStrategy>(new) {
        strategy_rules(&strategy, &Path::new("spec"), &mut errors);
    }
    errors
}

/// Stage and group names unique (a group may appear once in the whole strategy), concurrency
/// within bounds, gates well formed, selectors equality-only.
fn strategy_rules(strategy: &UpdateRunStrategy, path: &Path, errors: &mut Vec<FieldError>) {
    let mut groups: HashMap<&str, &str> = HashMap::new();
    for (i, stage) in strategy.stages.iter().enumerate() {
        let path = path.child("stages").index(i);
        if strategy.stages[..i].iter().any(|s| s.name == stage.name) {
            errors.push(duplicate(
                path.child("name"),
                &stage.name,
                "stage names must be unique",
            ));
        }
        if stage.groups.is_empty() && stage.member_selector.is_none() {
            errors.push(FieldError::required(
                path.child("groups"),
                "a stage needs groups, or a memberSelector to form one implicit group",
            ));
        }
        let stage_limit = fixed(stage.max_concurrency.as_deref());
        if stage_limit.is_some_and(|n| n > STAGE_CONCURRENCY_MAX) {
            errors.push(FieldError::invalid(
                path.child("maxConcurrency"),
                Value::from(stage.max_concurrency.clone()),
                format!("must be at most {STAGE_CONCURRENCY_MAX}"),
            ));
        }
        selector(stage.member_selector.as_ref(), &path, errors);
        gates(
            &stage.before_gates,
            &path.child("beforeGates"),
            true,
            errors,
        );
        gates(&stage.after_gates, &path.child("afterGates"), false, errors);
        for (j, group) in stage.groups.iter().enumerate() {
            let path = path.child("groups").index(j);
            match groups.insert(&group.name, &stage.name) {
                Some(other) if other == stage.name => errors.push(duplicate(
                    path.child("name"),
                    &group.name,
                    "a group may appear only once",
                )),
                Some(other) => errors.push(duplicate(
                    path.child("name"),
                    &group.name,
                    &format!("a group may appear only once; it is already in stage {other:?}"),
                )),
                None => {}
            }
            if let (Some(group_limit), Some(stage_limit)) =
                (fixed(group.max_concurrency.as_deref()), stage_limit)
                && group_limit > stage_limit
            {
                errors.push(FieldError::invalid(
                    path.child("maxConcurrency"),
                    Value::from(group.max_concurrency.clone()),
                    format!("must not exceed the stage's maxConcurrency ({stage_limit})"),
                ));
            }
            selector(group.member_selector.as_ref(), &path, errors);
            gates(
                &group.before_gates,
                &path.child("beforeGates"),
                true,
                errors,
            );
            gates(&group.after_gates, &path.child("afterGates"), false, errors);
        }
    }
}

/// A fixed (non-percentage) count, when `value` is one.
fn fixed(value: Option<&str>) -> Option<u32> {
    value.and_then(|v| v.parse().ok())
}

/// `path: Duplicate value: "name": detail`.
fn duplicate(path: Path, name: &str, detail: &str) -> FieldError {
    FieldError::new(
        FieldErrorType::Duplicate,
        path,
        Some(Value::from(name)),
        detail,
    )
}

/// A `memberSelector.byLabel` is a selector AKS takes ([`MemberSelector::selector`]).
fn selector(selector: Option<&MemberSelector>, path: &Path, errors: &mut Vec<FieldError>) {
    if let Some(selector) = selector
        && let Err(problem) = selector.selector()
    {
        errors.push(FieldError::invalid(
            path.child("memberSelector").child("byLabel"),
            Value::from(selector.by_label.clone()),
            problem,
        ));
    }
}

/// ScheduledStart gates are before-gates only and need their configuration; Approval gates
/// take none; offsets stay within ±14:00.
fn gates(gates: &[GateConfiguration], path: &Path, before: bool, errors: &mut Vec<FieldError>) {
    for (i, gate) in gates.iter().enumerate() {
        let path = path.index(i);
        let config = gate.scheduled_start_configuration.as_ref();
        match (gate.gate_type, config) {
            (GateType::ScheduledStart, _) if !before => errors.push(FieldError::forbidden(
                path.child("type"),
                "ScheduledStart gates may only be before-gates",
            )),
            (GateType::ScheduledStart, None) => errors.push(FieldError::required(
                path.child("scheduledStartConfiguration"),
                "required for a ScheduledStart gate",
            )),
            (GateType::Approval, Some(_)) => errors.push(FieldError::forbidden(
                path.child("scheduledStartConfiguration"),
                "only a ScheduledStart gate has one",
            )),
            _ => {}
        }
        if let Some(offset) = config.and_then(|c| c.utc_offset.as_deref()) {
            utc_offset(offset, &path.child("scheduledStartConfiguration"), errors);
        }
    }
}

/// A `utcOffset` within ±14:00.
fn utc_offset(offset: &str, path: &Path, errors: &mut Vec<FieldError>) {
    if utc_offset_seconds(offset).is_none() {
        errors.push(FieldError::invalid(
            path.child("utcOffset"),
            Value::from(offset),
            "must be ±HH:mm within ±14:00",
        ));
    }
}

/// Validates an `UpdateRun`: one strategy source at most, the version exactly where the
/// upgrade type needs it, a well-formed node image selection, and no change to what or how
/// once the run has started.
pub(crate) fn validate_run(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(run) = spec::<UpdateRunSpec>(new) else {
        return errors;
    };
    let path = Path::new("spec");
    if run.update_strategy_name.is_some() && run.strategy.is_some() {
        errors.push(FieldError::forbidden(
            path.child("strategy"),
            "may not be set together with spec.updateStrategyName",
        ));
    }
    if let Some(strategy) = &run.strategy {
        strategy_rules(strategy, &path.child("strategy"), &mut errors);
    }
    let update = &run.managed_cluster_update;
    let upgrade = path.child("managedClusterUpdate").child("upgrade");
    match (
        update.upgrade.upgrade_type,
        &update.upgrade.kubernetes_version,
    ) {
        (UpgradeType::NodeImageOnly, Some(_)) => errors.push(FieldError::forbidden(
            upgrade.child("kubernetesVersion"),
            "may not be set when type is NodeImageOnly",
        )),
        (UpgradeType::Full | UpgradeType::ControlPlaneOnly, None) => {
            errors.push(FieldError::required(
                upgrade.child("kubernetesVersion"),
                "required when type is Full or ControlPlaneOnly",
            ))
        }
        _ => {}
    }
    if let Some(selection) = &update.node_image_selection {
        let path = path
            .child("managedClusterUpdate")
            .child("nodeImageSelection")
            .child("customNodeImageVersions");
        let custom = &selection.custom_node_image_versions;
        match selection.selection_type {
            NodeImageSelectionType::Custom if custom.is_empty() => {
                errors.push(FieldError::required(path, "required when type is Custom"))
            }
            NodeImageSelectionType::Custom => {
                let mut families = HashMap::new();
                for (i, image) in custom.iter().enumerate() {
                    match image.version.rsplit_once('-') {
                        Some((family, _)) if !family.is_empty() => {
                            if let Some(first) = families.insert(family, i) {
                                errors.push(duplicate(
                                    path.index(i).child("version"),
                                    &image.version,
                                    &format!(
                                        "at most one version per image family; {family} is already at [{first}]"
                                    ),
                                ));
                            }
                        }
                        _ => errors.push(FieldError::invalid(
                            path.index(i).child("version"),
                            Value::from(image.version.clone()),
                            "must be a full node image name, <family>-<version>",
                        )),
                    }
                }
            }
            _ if !custom.is_empty() => errors.push(FieldError::forbidden(
                path,
                "may only be set when type is Custom",
            )),
            _ => {}
        }
    }
    if let Some(old) = old {
        run_changes(new, old, &run, &mut errors);
    }
    errors
}

/// Once a run has started, what it upgrades and how are fixed; `attempt` only grows.
fn run_changes(new: &Value, old: &Value, run: &UpdateRunSpec, errors: &mut Vec<FieldError>) {
    let started = old
        .pointer("/status/state")
        .and_then(Value::as_str)
        .is_some_and(|state| state != "NotStarted");
    if started {
        for field in ["managedClusterUpdate", "strategy", "updateStrategyName"] {
            let pointer = format!("/spec/{field}");
            if new.pointer(&pointer) != old.pointer(&pointer) {
                errors.push(FieldError::invalid(
                    Path::new("spec").child(field),
                    new.pointer(&pointer).cloned().unwrap_or(Value::Null),
                    "may not change once the run has started",
                ));
            }
        }
    }
    let old_attempt = old
        .pointer("/spec/attempt")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    if u64::from(run.attempt.unwrap_or(0)) < old_attempt {
        errors.push(FieldError::invalid(
            Path::new("spec").child("attempt"),
            Value::from(run.attempt),
            "may not decrease",
        ));
    }
}

/// Validates a `MaintenanceConfiguration`: one of AKS's configuration names, exactly one
/// recurrence (weekly for `default`), a real offset and real dates.
pub(crate) fn validate_maintenance(new: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = new.pointer("/metadata/name").and_then(Value::as_str);
    if let Some(name) = name
        && !CONFIGURATION_NAMES.contains(&name)
    {
        errors.push(FieldError::not_supported(
            "metadata.name",
            Value::from(name),
            &CONFIGURATION_NAMES,
        ));
    }
    let Some(config) = spec::<MaintenanceConfigurationSpec>(new) else {
        return errors;
    };
    let window = &config.maintenance_window;
    let path = Path::new("spec").child("maintenanceWindow");
    let kinds = window.schedule.kinds();
    if kinds.len() != 1 {
        errors.push(FieldError::invalid(
            path.child("schedule"),
            Value::from(kinds.join(",")),
            "exactly one of daily, weekly, absoluteMonthly or relativeMonthly must be set",
        ));
    } else if name == Some(DEFAULT_SCHEDULE) && kinds != ["weekly"] {
        errors.push(FieldError::invalid(
            path.child("schedule"),
            Value::from(kinds[0]),
            "the default configuration supports a weekly schedule only",
        ));
    }
    if let Some(offset) = &window.utc_offset {
        utc_offset(offset, &path, &mut errors);
    }
    if let Some(start) = &window.start_date {
        date(start, &path.child("startDate"), &mut errors);
    }
    for (i, span) in window.not_allowed_dates.iter().enumerate() {
        let path = path.child("notAllowedDates").index(i);
        let start = date(&span.start, &path.child("start"), &mut errors);
        let end = date(&span.end, &path.child("end"), &mut errors);
        if let (Some(start), Some(end)) = (start, end)
            && end < start
        {
            errors.push(FieldError::invalid(
                path.child("end"),
                Value::from(span.end.clone()),
                "must not be before start",
            ));
        }
    }
    errors
}

/// A real calendar date, `YYYY-MM-DD`.
fn date(text: &str, path: &Path, errors: &mut Vec<FieldError>) -> Option<jiff::civil::Date> {
    let parsed = text
        .parse::<jiff::civil::Date>()
        .ok()
        .filter(|_| text.len() == 10);
    if parsed.is_none() {
        errors.push(FieldError::invalid(
            path,
            Value::from(text),
            "must be a calendar date, YYYY-MM-DD",
        ));
    }
    parsed
}

/// Validates an `AutoUpgradeProfile`: `targetKubernetesVersion` exactly with that channel,
/// `longTermSupport` only with it, a node image selection the channel can use, and the
/// strategy fixed at creation.
pub(crate) fn validate_profile(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(profile) = spec::<AutoUpgradeProfileSpec>(new) else {
        return errors;
    };
    let path = Path::new("spec");
    let pinned = profile.channel == Channel::TargetKubernetesVersion;
    match (pinned, &profile.target_kubernetes_version) {
        (true, None) => errors.push(FieldError::required(
            path.child("targetKubernetesVersion"),
            "required when channel is TargetKubernetesVersion",
        )),
        (false, Some(_)) => errors.push(FieldError::forbidden(
            path.child("targetKubernetesVersion"),
            "may only be set when channel is TargetKubernetesVersion",
        )),
        _ => {}
    }
    if !pinned && profile.long_term_support.is_some() {
        errors.push(FieldError::forbidden(
            path.child("longTermSupport"),
            "may only be set when channel is TargetKubernetesVersion",
        ));
    }
    match (profile.channel, profile.node_image_selection) {
        (_, Some(NodeImageSelectionType::Custom)) => errors.push(FieldError::not_supported(
            path.child("nodeImageSelection"),
            Value::from("Custom"),
            &["Consistent", "Latest"],
        )),
        (Channel::NodeImage, Some(_)) => errors.push(FieldError::forbidden(
            path.child("nodeImageSelection"),
            "the NodeImage channel always uses the latest images",
        )),
        _ => {}
    }
    if let Some(old) = old
        && new.pointer("/spec/updateStrategyName") != old.pointer("/spec/updateStrategyName")
    {
        errors.push(FieldError::invalid(
            path.child("updateStrategyName"),
            new.pointer("/spec/updateStrategyName")
                .cloned()
                .unwrap_or(Value::Null),
            "field is immutable (set only at creation)",
        ));
    }
    errors
}

/// A `Gate`'s or `MemberUpgrade`'s spec is written once by its run.
pub(crate) fn validate_immutable_spec(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(old) = old {
        super::common::immutable(
            &Path::new("spec"),
            new.get("spec"),
            old.get("spec"),
            &mut errors,
        );
    }
    errors
}
