//! The checks of overrides, staged update strategies and runs, evictions and disruption
//! budgets, as `validation::{overrides, staged_update, eviction}` apply them.

use serde_json::json;

use super::placement::label_selector_rules;
use super::{
    Placed, at, forbidden, immutable, invalid, longest, metadata_name, required, schema, unique_by,
    unique_items,
};

/// The checks of an override kind (`cluster`: a ClusterResourceOverride), as
/// `validation::overrides` applies them.
pub(super) fn override_rules(cluster: bool) -> Vec<Placed> {
    let delete = "(has(self.overrideType) && self.overrideType == 'Delete')";
    let patches = "(has(self.jsonPatchOverrides) && size(self.jsonPatchOverrides) > 0)";
    let rule = "spec.policy.overrideRules[]";
    let term = "spec.policy.overrideRules[].clusterSelector.clusterSelectorTerms[]";
    let mut rules = vec![
        at(
            rule,
            forbidden(
                &format!("!{delete} || !{patches}"),
                ".jsonPatchOverrides",
                "jsonPatchOverrides must be empty when overrideType is Delete",
            ),
        ),
        at(
            rule,
            required(
                &format!("{delete} || {patches}"),
                ".jsonPatchOverrides",
                "jsonPatchOverrides must not be empty when overrideType is JSONPatch",
            ),
        ),
        at("spec", immutable("placement")),
    ];
    for key in ["propertySelector", "propertySorter", "metricSorter"] {
        rules.push(at(
            term,
            forbidden(
                &format!("!has(self.{key})"),
                &format!(".{key}"),
                "only labelSelector is supported in override clusterSelector",
            ),
        ));
    }
    rules.push(at(
        term,
        required(
            "has(self.labelSelector)",
            ".labelSelector",
            "labelSelector is required in override clusterSelector terms",
        ),
    ));
    rules.extend(label_selector_rules(&format!("{term}.labelSelector")));
    rules.extend(json_patch_rules());
    if cluster {
        let selector = "spec.clusterResourceSelectors[]";
        rules.push(at(
            selector,
            forbidden(
                "!has(self.labelSelector)",
                ".labelSelector",
                "labelSelector is not supported for ClusterResourceOverride resource selection",
            ),
        ));
        rules.push(at(
            selector,
            required(
                "has(self.name) && self.name != ''",
                ".name",
                "resource name is required for ClusterResourceOverride resource selection",
            ),
        ));
        rules.push(at(
            "spec",
            invalid(
                "!has(self.placement) || !has(self.placement.scope) || self.placement.scope != 'Namespaced'",
                ".placement.scope",
                "clusterResourceOverride placement reference cannot be Namespaced scope",
            ),
        ));
        rules.extend(atomic_unique("spec.clusterResourceSelectors"));
    } else {
        rules.extend(atomic_unique("spec.resourceSelectors"));
    }
    rules
}

/// A list of objects unique as wholes: a kube-apiserver names the repeated item's index.
fn atomic_unique(list: &str) -> Vec<Placed> {
    vec![
        unique_items(list),
        schema(
            &format!("{list}[]"),
            json!({"x-kubernetes-map-type": "atomic"}),
        ),
    ]
}

/// The rules of a JSON patch, as `validation::overrides::json_patch` checks them.
fn json_patch_rules() -> Vec<Placed> {
    let patch = "spec.policy.overrideRules[].jsonPatchOverrides[]";
    let within =
        |prefix: &str| format!("(self.path == '{prefix}' || self.path.startsWith('{prefix}/'))");
    let problems = [
        (within("/kind"), "cannot override typeMeta field kind"),
        (
            within("/apiVersion"),
            "cannot override typeMeta field apiVersion",
        ),
        (within("/status"), "cannot override status fields"),
        (
            format!(
                "({} && !{} && !{})",
                within("/metadata"),
                within("/metadata/annotations"),
                within("/metadata/labels")
            ),
            "cannot override metadata fields except annotations and labels",
        ),
        (
            "self.path.contains('//')".to_string(),
            "path cannot contain empty segments",
        ),
        (
            "self.path.endsWith('/')".to_string(),
            "path cannot have a trailing slash",
        ),
    ];
    let rule = problems
        .iter()
        .map(|(test, _)| format!("!{test}"))
        .collect::<Vec<_>>()
        .join(" && ");
    let message = problems
        .iter()
        .rev()
        .fold("''".to_string(), |rest, (test, text)| {
            format!("{test} ? '{text}' : {rest}")
        });
    vec![
        longest(&format!("{patch}.path"), 4096),
        at(patch, invalid(&rule, ".path", "").computed(&message)),
    ]
}

/// The `maxConcurrency` rule: an integer of at least 1 (the schema's pattern says which
/// percentages are valid).
fn max_concurrency() -> super::Rule {
    invalid(
        "!has(self.maxConcurrency) || type(self.maxConcurrency) != int || self.maxConcurrency >= 1",
        ".maxConcurrency",
        "must be an integer of at least 1 or a percentage between 1% and 100%",
    )
}

/// The checks of a staged update strategy, as `validation::staged_update::validate_strategy`
/// applies them.
pub(super) fn strategy_rules() -> Vec<Placed> {
    let mut rules = vec![
        unique_by("spec.stages", &["name"]),
        at("spec.stages[]", max_concurrency()),
        unique_by("spec.stages[].afterStageTasks", &["type"]),
        unique_by("spec.stages[].beforeStageTasks", &["type"]),
        schema(
            "spec.stages[].beforeStageTasks[].type",
            json!({"enum": ["Approval"]}),
        ),
        at(
            "spec.stages[].afterStageTasks[]",
            required(
                "!has(self.type) || self.type != 'TimedWait' || has(self.waitTime)",
                ".waitTime",
                "must be set when type is TimedWait",
            ),
        ),
    ];
    for tasks in ["afterStageTasks", "beforeStageTasks"] {
        rules.push(at(
            &format!("spec.stages[].{tasks}[]"),
            forbidden(
                "!has(self.type) || self.type != 'Approval' || !has(self.waitTime)",
                ".waitTime",
                "may not be set when type is Approval",
            ),
        ));
    }
    rules.extend(label_selector_rules("spec.stages[].labelSelector"));
    rules
}

/// The checks of a staged update run, as `validation::staged_update::validate_run` applies
/// them.
pub(super) fn run_rules() -> Vec<Placed> {
    let state = |o: &str| format!("(has({o}.state) ? {o}.state : 'Run')");
    let (from, to) = (state("oldSelf"), state("self"));
    let mut rules = vec![
        metadata_name(json!({"maxLength": 63})),
        at(
            "spec",
            invalid(
                "!has(self.resourceSnapshotIndex) || self.resourceSnapshotIndex.matches(r'^[0-9]+$')",
                ".resourceSnapshotIndex",
                "must be a non-negative integer (a resource snapshot index)",
            ),
        ),
        at(
            "spec",
            invalid(
                &format!(
                    "!({from} == 'Initialize' && {to} == 'Stop') && !({from} in ['Run', 'Stop'] && {to} == 'Initialize')"
                ),
                ".state",
                "",
            )
            .computed(&format!(
                "'invalid state transition: cannot transition from ' + {from} + ' to ' + {to}"
            )),
        ),
    ];
    for name in [
        "placementName",
        "resourceSnapshotIndex",
        "stagedRolloutStrategyName",
    ] {
        rules.push(at("spec", immutable(name)));
    }
    rules
}

/// The checks of an eviction: what it evicts never changes.
pub(super) fn eviction_rules() -> Vec<Placed> {
    vec![
        at("spec", immutable("placementName")),
        at("spec", immutable("clusterName")),
    ]
}

/// The checks of a disruption budget, as `validation::eviction::validate_budget` applies them.
pub(super) fn budget_rules() -> Vec<Placed> {
    let mut rules = Vec::new();
    for name in ["maxUnavailable", "minAvailable"] {
        rules.push(at(
            "spec",
            invalid(
                &format!("!has(self.{name}) || type(self.{name}) == string || self.{name} >= 0"),
                &format!(".{name}"),
                "must be greater than or equal to 0",
            ),
        ));
    }
    rules.push(at(
        "spec",
        forbidden(
            "!has(self.maxUnavailable) || !has(self.minAvailable)",
            ".minAvailable",
            "may not be set together with maxUnavailable",
        ),
    ));
    rules
}
