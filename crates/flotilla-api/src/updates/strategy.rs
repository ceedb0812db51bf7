//! `FleetUpdateStrategy` (`fus`): a reusable order for cluster update runs — stages run one
//! after another, the groups of a stage in parallel, the members of a group one at a time (or
//! `maxConcurrency` at a time), with gates and waits between them. Update runs copy it when they
//! are created, so later edits never reach a run already made.

use flotilla_apimachinery::selector::{LabelSelector, Operator as SelectorOperator};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Pattern of a stage, group or run name (AKS's rule, 1–50 characters).
pub const UPDATE_NAME_PATTERN: &str = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
/// Pattern of a `maxConcurrency` or `maxAllowedFailures` value: `N` or `P%`.
pub const COUNT_OR_PERCENT_PATTERN: &str = r"^(?:([1-9]\d*)|([1-9]\d?|100)%)$";
/// Pattern of a `maxAllowedFailures` value: `N` (0 allowed) or `P%`.
pub const FAILURES_PATTERN: &str = r"^(?:(0|[1-9]\d*)|([0-9]\d?|100)%)$";
/// The most groups a stage may have.
pub const MAX_GROUPS_PER_STAGE: usize = 50;
/// The stage-level `maxConcurrency` default and hard maximum.
pub const STAGE_CONCURRENCY_MAX: u32 = 50;

/// A reusable update strategy.
// Clippy reads repeated keys inside distinct `printcolumn(...)` entries as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "updates.flotilla.dev",
    version = "v1beta1",
    kind = "FleetUpdateStrategy",
    plural = "fleetupdatestrategies",
    singular = "fleetupdatestrategy",
    shortname = "fus",
    category = "fleet",
    category = "fleet-updates",
    derive = "PartialEq",
    doc = "FleetUpdateStrategy is a reusable order for cluster update runs: stages, groups, gates and waits.",
    printcolumn(name = "Stages", type_ = "string", json_path = ".spec.stages[*].name"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct UpdateRunStrategy {
    /// The stages, run in order.
    #[schemars(length(min = 1, max = 50))]
    pub stages: Vec<UpdateStage>,
}

/// One stage: its groups update in parallel.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStage {
    /// Stage name, unique in the strategy.
    #[schemars(length(min = 1, max = 50), regex(pattern = UPDATE_NAME_PATTERN))]
    pub name: String,
    /// The groups (at most 50). Without groups, a `memberSelector` makes one implicit group.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50))]
    pub groups: Vec<UpdateGroup>,
    /// Seconds to wait after the stage before the next one starts (0 to 3600·24·30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 2592000))]
    pub after_stage_wait_in_seconds: Option<u32>,
    /// Gates to pass before the stage starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before_gates: Vec<GateConfiguration>,
    /// Gates to pass after the stage, alongside its wait.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after_gates: Vec<GateConfiguration>,
    /// Most members updating at once across the stage's groups: `N` or `P%` (of the stage's
    /// members, rounded down, at least 1). Default and maximum 50.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = COUNT_OR_PERCENT_PATTERN))]
    pub max_concurrency: Option<String>,
    /// Failures the stage tolerates: `N` or `P%` (rounded down). Unset or 0: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = FAILURES_PATTERN))]
    pub max_allowed_failures: Option<String>,
    /// Pre-filters the stage's members by label (equality only, e.g. `env=prod`); on a stage
    /// without groups, its members form one implicit group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_selector: Option<MemberSelector>,
}

/// One group of a stage: its members update in order, `maxConcurrency` at a time.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateGroup {
    /// Group name; members whose `updates.flotilla.dev/group` label equals it belong to it,
    /// unless `memberSelector` is set.
    #[schemars(length(min = 1, max = 50), regex(pattern = UPDATE_NAME_PATTERN))]
    pub name: String,
    /// Gates to pass before the group starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before_gates: Vec<GateConfiguration>,
    /// Gates to pass after the group.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after_gates: Vec<GateConfiguration>,
    /// Members updating at once: `N` or `P%` of the group (rounded down, at least 1); at most
    /// the stage's value and the group's size. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = COUNT_OR_PERCENT_PATTERN))]
    pub max_concurrency: Option<String>,
    /// Failures the group tolerates: `N` or `P%` (rounded down). Unset or 0: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = FAILURES_PATTERN))]
    pub max_allowed_failures: Option<String>,
    /// Selects the group's members by label instead of by group name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_selector: Option<MemberSelector>,
}

/// A label selector of members, as AKS takes it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberSelector {
    /// Comma-separated requirements, each key at most once, at most 512 characters:
    /// `key=value`, `key!=value`, `key in (a,b)`, `key notin (a,b)`, `key` (it exists) or
    /// `!key` (it does not).
    #[schemars(length(max = 512))]
    pub by_label: String,
}

/// A gate on a stage or group.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GateConfiguration {
    /// What the gate shows people (1–100 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub display_name: Option<String>,
    /// `Approval` (a person completes it) or `ScheduledStart` (before-gates only: it completes
    /// at the next occurrence of a day and time).
    #[serde(rename = "type")]
    pub gate_type: GateType,
    /// When a `ScheduledStart` gate completes; required for that type only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_start_configuration: Option<ScheduledStartConfiguration>,
}

/// The kind of a gate.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[allow(missing_docs)]
pub enum GateType {
    #[default]
    Approval,
    ScheduledStart,
}

/// The day and time a `ScheduledStart` gate opens: its next occurrence once the gate is reached.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduledStartConfiguration {
    /// The weekday.
    pub start_day: super::maintenance::Weekday,
    /// `HH:mm`, local to `utcOffset`.
    #[schemars(regex(pattern = super::maintenance::TIME_OF_DAY_PATTERN))]
    pub start_time: String,
    /// `±HH:mm` within ±14:00; default `+00:00`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "+00:00", "pattern" = super::maintenance::UTC_OFFSET_PATTERN))]
    pub utc_offset: Option<String>,
}

impl MemberSelector {
    /// The selector `byLabel` states, or what is wrong with it: Kubernetes' selector syntax
    /// (its parser's messages), the operators AKS takes (`=`, `!=`, `in`, `notin`, exists and
    /// does-not-exist; not `>` or `<`), each key once.
    pub fn selector(&self) -> Result<LabelSelector, String> {
        if self.by_label.trim().is_empty() {
            return Err("the selector is empty".into());
        }
        let selector = LabelSelector::parse(&self.by_label)?;
        let mut keys = std::collections::BTreeSet::new();
        for requirement in selector.requirements() {
            let key = requirement.key();
            if matches!(
                requirement.operator(),
                SelectorOperator::GreaterThan | SelectorOperator::LessThan
            ) {
                return Err(format!(
                    "{key:?}: only =, !=, in, notin, exists (key) and does-not-exist (!key) are supported"
                ));
            }
            if !keys.insert(key) {
                return Err(format!("label key {key:?} appears more than once"));
            }
        }
        Ok(selector)
    }

    /// Whether `labels` satisfy every requirement (an invalid selector matches nothing).
    pub fn matches(&self, labels: &std::collections::BTreeMap<String, String>) -> bool {
        self.selector().is_ok_and(|selector| {
            let labels = labels
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::from(v.as_str())))
                .collect();
            selector.matches(&labels)
        })
    }
}
