//! The checks of the `updates.flotilla.dev` kinds, as `validation::updates` applies them.

use serde_json::json;

use super::{
    Placed, at, forbidden, immutable, invalid, longest, metadata_name, required, schema, unique_by,
};
use crate::updates::maintenance::{CONFIGURATION_NAMES, DEFAULT_SCHEDULE, MAX_UTC_OFFSET_SECONDS};
use crate::updates::strategy::STAGE_CONCURRENCY_MAX;

/// CEL: the fixed count of string `s` (`"5"`), when it is one (not a percentage).
fn fixed(s: &str) -> String {
    format!("{s}.matches(r'^[0-9]+$')")
}

/// The rule on `utcOffset` of the object at `path`: within ±14:00 (the schema's pattern
/// already says `±HH:mm`).
fn utc_offset(path: &str) -> Placed {
    let offset = "self.utcOffset";
    at(
        path,
        invalid(
            &format!(
                "!has(self.utcOffset) || !{offset}.matches(r'^[+-][0-9][0-9]:[0-5][0-9]$') || \
                 int({offset}.substring(1, 3)) * 3600 + int({offset}.substring(4, 6)) * 60 <= {MAX_UTC_OFFSET_SECONDS}"
            ),
            ".utcOffset",
            "must be ±HH:mm within ±14:00",
        ),
    )
}

/// The checks of a fleet update strategy whose `stages` are at `base` (`spec` of a
/// FleetUpdateStrategy, `spec.strategy` of an UpdateRun), as
/// `validation::updates::strategy_rules` applies them (`memberSelector.byLabel` excepted).
pub(super) fn strategy_rules(base: &str) -> Vec<Placed> {
    let stage = format!("{base}.stages[]");
    let limit = fixed("self.maxConcurrency");
    let mut rules = vec![
        unique_by(&format!("{base}.stages"), &["name"]),
        unique_by(&format!("{stage}.groups"), &["name"]),
        longest(&format!("{stage}.maxConcurrency"), 8),
        longest(&format!("{stage}.groups[].maxConcurrency"), 8),
        at(
            &stage,
            required(
                "(has(self.groups) && size(self.groups) > 0) || has(self.memberSelector)",
                ".groups",
                "a stage needs groups, or a memberSelector to form one implicit group",
            ),
        ),
        at(
            &stage,
            invalid(
                &format!(
                    "!has(self.maxConcurrency) || !{limit} || int(self.maxConcurrency) <= {STAGE_CONCURRENCY_MAX}"
                ),
                ".maxConcurrency",
                &format!("must be at most {STAGE_CONCURRENCY_MAX}"),
            ),
        ),
        at(
            &stage,
            invalid(
                &format!(
                    "!has(self.maxConcurrency) || !{limit} || !has(self.groups) || self.groups.all(g, \
                     !has(g.maxConcurrency) || !{} || int(g.maxConcurrency) <= int(self.maxConcurrency))",
                    fixed("g.maxConcurrency")
                ),
                ".groups",
                "",
            )
            .computed("'must not exceed the stage\\'s maxConcurrency (' + self.maxConcurrency + ')'"),
        ),
    ];
    for owner in [stage.clone(), format!("{stage}.groups[]")] {
        for gates in ["beforeGates", "afterGates"] {
            let gate = format!("{owner}.{gates}[]");
            let scheduled = "self.type == 'ScheduledStart'";
            let config = "has(self.scheduledStartConfiguration)";
            if gates == "afterGates" {
                rules.push(at(
                    &gate,
                    forbidden(
                        &format!("!({scheduled})"),
                        ".type",
                        "ScheduledStart gates may only be before-gates",
                    ),
                ));
            } else {
                rules.push(at(
                    &gate,
                    required(
                        &format!("!({scheduled}) || {config}"),
                        ".scheduledStartConfiguration",
                        "required for a ScheduledStart gate",
                    ),
                ));
            }
            rules.push(at(
                &gate,
                forbidden(
                    &format!("self.type != 'Approval' || !{config}"),
                    ".scheduledStartConfiguration",
                    "only a ScheduledStart gate has one",
                ),
            ));
            rules.push(utc_offset(&format!("{gate}.scheduledStartConfiguration")));
            rules.push(longest(
                &format!("{gate}.scheduledStartConfiguration.utcOffset"),
                6,
            ));
        }
    }
    rules
}

/// The checks of an UpdateRun, as `validation::updates::validate_run` applies them.
pub(super) fn run_rules() -> Vec<Placed> {
    let upgrade = "spec.managedClusterUpdate.upgrade";
    let selection = "spec.managedClusterUpdate.nodeImageSelection";
    let custom = "(has(self.customNodeImageVersions) && size(self.customNodeImageVersions) > 0)";
    let named = |v: &str| format!("{v}.lastIndexOf('-') > 0");
    let started =
        "has(oldSelf.status) && has(oldSelf.status.state) && oldSelf.status.state != 'NotStarted'";
    let mut rules = strategy_rules("spec.strategy");
    rules.extend([
        at(
            "spec",
            forbidden(
                "!has(self.updateStrategyName) || !has(self.strategy)",
                ".strategy",
                "may not be set together with spec.updateStrategyName",
            ),
        ),
        at(
            upgrade,
            forbidden(
                "self.type != 'NodeImageOnly' || !has(self.kubernetesVersion)",
                ".kubernetesVersion",
                "may not be set when type is NodeImageOnly",
            ),
        ),
        at(
            upgrade,
            required(
                "self.type == 'NodeImageOnly' || has(self.kubernetesVersion)",
                ".kubernetesVersion",
                "required when type is Full or ControlPlaneOnly",
            ),
        ),
        at(
            selection,
            required(
                &format!("self.type != 'Custom' || {custom}"),
                ".customNodeImageVersions",
                "required when type is Custom",
            ),
        ),
        at(
            selection,
            forbidden(
                &format!("self.type == 'Custom' || !{custom}"),
                ".customNodeImageVersions",
                "may only be set when type is Custom",
            ),
        ),
        at(
            &format!("{selection}.customNodeImageVersions[]"),
            invalid(
                &named("self.version"),
                ".version",
                "must be a full node image name, <family>-<version>",
            ),
        ),
        at(
            "spec",
            invalid(
                "(has(self.attempt) ? self.attempt : 0) >= (has(oldSelf.attempt) ? oldSelf.attempt : 0)",
                ".attempt",
                "may not decrease",
            ),
        ),
    ]);
    for field in ["managedClusterUpdate", "strategy", "updateStrategyName"] {
        rules.push(at(
            "",
            invalid(
                &format!(
                    "!({started}) || {}",
                    super::unchanged("self.spec", "oldSelf.spec", field)
                ),
                &format!(".spec.{field}"),
                "may not change once the run has started",
            ),
        ));
    }
    rules
}

/// CEL: whether string `s` (already `YYYY-MM-DD`) is a real calendar date.
fn calendar_date(s: &str) -> String {
    let (year, month, day) = (
        format!("int({s}.substring(0, 4))"),
        format!("int({s}.substring(5, 7))"),
        format!("int({s}.substring(8, 10))"),
    );
    let leap = format!("({year} % 4 == 0 && ({year} % 100 != 0 || {year} % 400 == 0))");
    format!(
        "({s}.matches(r'^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}$') && {month} >= 1 && {month} <= 12 && {day} >= 1 && \
         {day} <= ({month} == 2 ? ({leap} ? 29 : 28) : ({month} in [4, 6, 9, 11] ? 30 : 31)))"
    )
}

/// The checks of a MaintenanceConfiguration, as `validation::updates::validate_maintenance`
/// applies them.
pub(super) fn maintenance_rules() -> Vec<Placed> {
    let window = "spec.maintenanceWindow";
    let kinds = "[has(self.schedule.daily), has(self.schedule.weekly), has(self.schedule.absoluteMonthly), \
                 has(self.schedule.relativeMonthly)].filter(k, k).size()";
    let date_message = "must be a calendar date, YYYY-MM-DD";
    vec![
        metadata_name(json!({"enum": CONFIGURATION_NAMES})),
        at(
            window,
            invalid(
                &format!("{kinds} == 1"),
                ".schedule",
                "exactly one of daily, weekly, absoluteMonthly or relativeMonthly must be set",
            ),
        ),
        at(
            "",
            invalid(
                &format!(
                    "self.metadata.name != '{DEFAULT_SCHEDULE}' || {} != 1 || has(self.spec.maintenanceWindow.schedule.weekly)",
                    kinds.replace("self.schedule", "self.spec.maintenanceWindow.schedule")
                ),
                ".spec.maintenanceWindow.schedule",
                "the default configuration supports a weekly schedule only",
            ),
        ),
        utc_offset(window),
        longest(&format!("{window}.utcOffset"), 6),
        longest(&format!("{window}.startDate"), 10),
        longest(&format!("{window}.notAllowedDates[].start"), 10),
        longest(&format!("{window}.notAllowedDates[].end"), 10),
        at(
            window,
            invalid(
                &format!(
                    "!has(self.startDate) || {}",
                    calendar_date("self.startDate")
                ),
                ".startDate",
                date_message,
            ),
        ),
        at(
            &format!("{window}.notAllowedDates[]"),
            invalid(&calendar_date("self.start"), ".start", date_message),
        ),
        at(
            &format!("{window}.notAllowedDates[]"),
            invalid(&calendar_date("self.end"), ".end", date_message),
        ),
        at(
            &format!("{window}.notAllowedDates[]"),
            invalid(
                &format!(
                    "!{} || !{} || self.end >= self.start",
                    calendar_date("self.start"),
                    calendar_date("self.end")
                ),
                ".end",
                "must not be before start",
            ),
        ),
    ]
}

/// The checks of an AutoUpgradeProfile, as `validation::updates::validate_profile` applies
/// them.
pub(super) fn profile_rules() -> Vec<Placed> {
    let pinned = "self.channel == 'TargetKubernetesVersion'";
    let only_pinned = "may only be set when channel is TargetKubernetesVersion";
    vec![
        at(
            "spec",
            required(
                &format!("!({pinned}) || has(self.targetKubernetesVersion)"),
                ".targetKubernetesVersion",
                "required when channel is TargetKubernetesVersion",
            ),
        ),
        at(
            "spec",
            forbidden(
                &format!("{pinned} || !has(self.targetKubernetesVersion)"),
                ".targetKubernetesVersion",
                only_pinned,
            ),
        ),
        at(
            "spec",
            forbidden(
                &format!("{pinned} || !has(self.longTermSupport)"),
                ".longTermSupport",
                only_pinned,
            ),
        ),
        schema(
            "spec.nodeImageSelection",
            json!({"enum": ["Consistent", "Latest"]}),
        ),
        at(
            "spec",
            forbidden(
                "self.channel != 'NodeImage' || !has(self.nodeImageSelection) || self.nodeImageSelection == 'Custom'",
                ".nodeImageSelection",
                "the NodeImage channel always uses the latest images",
            ),
        ),
        at("spec", {
            let mut rule = immutable("updateStrategyName");
            rule.message = "field is immutable (set only at creation)".into();
            rule
        }),
    ]
}
