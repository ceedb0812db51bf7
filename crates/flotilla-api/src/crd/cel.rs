//! Flotilla's own rules of its kinds as the CEL rules (`x-kubernetes-validations`) a
//! kube-apiserver evaluates, for the CRDs `flotilla crds` prints: on a hub that is a plain
//! Kubernetes cluster the same bad objects are refused, naming the same field (`fieldPath`)
//! with the same reason and message as Flotilla's hub does (`crate::validation`).
//!
//! Flotilla's own engine runs the Rust rules and serves its CRDs without these. Each rule here
//! mirrors one rule of `validation::placement` and says which; the differential test
//! `crates/flotilla/tests/byo_hub.rs` sends the same bad objects to both hubs.
//!
//! So far the rules that forbid or require a field: of `ClusterResourcePlacement` and
//! `ResourcePlacement` (which fields each `placementType` requires and forbids, a resource
//! selector's name or labels, the strategy's), of the overrides (a ClusterResourceOverride's
//! selectors, each rule's patches and cluster selector terms) and of the staged update
//! strategies (a task's `waitTime`). Rules that quote the bad value (`FieldValueInvalid`) are
//! not exported: a kube-apiserver's CEL failure cannot quote it.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Value, json};

/// The kinds whose `spec.policy` carries the placement policy rules.
const PLACEMENTS: [&str; 2] = ["clusterresourceplacements", "resourceplacements"];
/// The override kinds.
const OVERRIDES: [&str; 2] = ["clusterresourceoverrides", "resourceoverrides"];
/// The staged update strategy kinds.
const STRATEGIES: [&str; 2] = ["clusterstagedupdatestrategies", "stagedupdatestrategies"];

/// A rule and the object of the schema it sits on: property names from `spec`, `[]` for a
/// list's items.
type Placed = (&'static [&'static str], Rule);

/// A rule failing with `FieldValueForbidden`.
fn forbidden(rule: &str, field: &str, message: &str) -> Rule {
    Rule {
        rule: rule.into(),
        field: field.into(),
        reason: "FieldValueForbidden",
        message: message.into(),
    }
}

/// A rule failing with `FieldValueRequired`.
fn required(rule: &str, field: &str, message: &str) -> Rule {
    Rule {
        rule: rule.into(),
        field: field.into(),
        reason: "FieldValueRequired",
        message: message.into(),
    }
}

/// The policy's placement type, PickAll when unset (the API's default).
const TYPE: &str = "(has(self.placementType) ? self.placementType : 'PickAll')";

/// One rule on an object of the schema: CEL `rule` over `self`, failing on `field` (relative,
/// `.numberOfClusters`) with `reason` and `message` (or `message_expression`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rule {
    /// The CEL expression; the object is valid when it is true.
    pub(crate) rule: String,
    /// The field the failure names, relative to the object (`fieldPath`).
    pub(crate) field: String,
    /// `FieldValueRequired`, `FieldValueForbidden` or `FieldValueInvalid`.
    pub(crate) reason: &'static str,
    /// The failure's message.
    pub(crate) message: String,
}

impl Rule {
    fn to_json(&self) -> Value {
        json!({
            "rule": self.rule,
            "fieldPath": self.field,
            "reason": self.reason,
            "message": self.message,
        })
    }
}

/// CEL: whether field `name` of the policy is set, as `validation::common::is_set` judges
/// (present, and for a list not empty).
fn set(name: &str) -> String {
    match name {
        "clusterNames" | "topologySpreadConstraints" | "tolerations" => {
            format!("(has(self.{name}) && size(self.{name}) > 0)")
        }
        _ => format!("has(self.{name})"),
    }
}

/// The rules of a placement's `spec.policy`, as `validation::placement::placement_policy`
/// checks them.
pub(crate) fn placement_policy_rules() -> Vec<Rule> {
    let mut rules = vec![Rule {
        rule: format!("{TYPE} != 'PickFixed' || {}", set("clusterNames")),
        field: ".clusterNames".into(),
        reason: "FieldValueRequired",
        message: "must be set when placementType is PickFixed".into(),
    }];
    for (name, types) in [
        ("numberOfClusters", "PickN"),
        ("affinity", "PickAll and PickN"),
        ("topologySpreadConstraints", "PickN"),
        ("tolerations", "PickAll and PickN"),
    ] {
        rules.push(Rule {
            rule: format!("{TYPE} != 'PickFixed' || !{}", set(name)),
            field: format!(".{name}"),
            reason: "FieldValueForbidden",
            message: format!("only valid for placementType {types}, not PickFixed"),
        });
    }
    for kind in ["PickAll", "PickN"] {
        rules.push(Rule {
            rule: format!("{TYPE} != '{kind}' || !{}", set("clusterNames")),
            field: ".clusterNames".into(),
            reason: "FieldValueForbidden",
            message: format!("only valid for placementType PickFixed, not {kind}"),
        });
    }
    for name in ["numberOfClusters", "topologySpreadConstraints"] {
        rules.push(Rule {
            rule: format!("{TYPE} != 'PickAll' || !{}", set(name)),
            field: format!(".{name}"),
            reason: "FieldValueForbidden",
            message: "only valid for placementType PickN, not PickAll".into(),
        });
    }
    rules.push(Rule {
        rule: format!("{TYPE} != 'PickN' || has(self.numberOfClusters)"),
        field: ".numberOfClusters".into(),
        reason: "FieldValueRequired",
        message: "must be set when placementType is PickN".into(),
    });
    let preferred = "preferredDuringSchedulingIgnoredDuringExecution";
    rules.push(Rule {
        rule: format!(
            "{TYPE} != 'PickAll' || !has(self.affinity) || !has(self.affinity.clusterAffinity) \
             || !has(self.affinity.clusterAffinity.{preferred}) \
             || size(self.affinity.clusterAffinity.{preferred}) == 0"
        ),
        field: format!(".affinity.clusterAffinity.{preferred}"),
        reason: "FieldValueForbidden",
        message: "only valid for placementType PickN: PickAll picks every matching cluster regardless of score".into(),
    });
    rules
}

/// The rules of a placement's strategy and its resource selectors, as
/// `validation::placement::{strategy, resource_selectors}` check them.
pub(crate) fn placement_spec_rules() -> Vec<Placed> {
    let external = "has(self.type) && self.type == 'External'";
    vec![
        (
            &["resourceSelectors", "[]"],
            forbidden(
                "!has(self.labelSelector) || !has(self.name)",
                ".labelSelector",
                "may not be set together with name: a selector picks one resource by name or many by labels",
            ),
        ),
        (
            &["strategy"],
            forbidden(
                &format!("!({external}) || !has(self.rollingUpdate)"),
                ".rollingUpdate",
                "only valid for type RollingUpdate",
            ),
        ),
        (
            &["strategy", "applyStrategy"],
            forbidden(
                "!has(self.serverSideApplyConfig) || (has(self.type) && self.type == 'ServerSideApply')",
                ".serverSideApplyConfig",
                "only valid for type ServerSideApply",
            ),
        ),
        (
            &["strategy", "reportBackStrategy"],
            required(
                "!has(self.type) || self.type != 'Mirror' || has(self.destination)",
                ".destination",
                "must be set when type is Mirror",
            ),
        ),
    ]
}

/// The rules of an override's rules (both kinds) and of a ClusterResourceOverride's selectors
/// (`cluster`), as `validation::overrides` checks them.
pub(crate) fn override_rules(cluster: bool) -> Vec<Placed> {
    let delete = "(has(self.overrideType) && self.overrideType == 'Delete')";
    let patches = "(has(self.jsonPatchOverrides) && size(self.jsonPatchOverrides) > 0)";
    let rule: &[&str] = &["policy", "overrideRules", "[]"];
    let term: &[&str] = &[
        "policy",
        "overrideRules",
        "[]",
        "clusterSelector",
        "clusterSelectorTerms",
        "[]",
    ];
    let mut rules = vec![
        (
            rule,
            forbidden(
                &format!("!{delete} || !{patches}"),
                ".jsonPatchOverrides",
                "jsonPatchOverrides must be empty when overrideType is Delete",
            ),
        ),
        (
            rule,
            required(
                &format!("{delete} || {patches}"),
                ".jsonPatchOverrides",
                "jsonPatchOverrides must not be empty when overrideType is JSONPatch",
            ),
        ),
    ];
    for key in ["propertySelector", "propertySorter", "metricSorter"] {
        rules.push((
            term,
            forbidden(
                &format!("!has(self.{key})"),
                &format!(".{key}"),
                "only labelSelector is supported in override clusterSelector",
            ),
        ));
    }
    rules.push((
        term,
        required(
            "has(self.labelSelector)",
            ".labelSelector",
            "labelSelector is required in override clusterSelector terms",
        ),
    ));
    if cluster {
        rules.push((
            &["clusterResourceSelectors", "[]"],
            forbidden(
                "!has(self.labelSelector)",
                ".labelSelector",
                "labelSelector is not supported for ClusterResourceOverride resource selection",
            ),
        ));
        rules.push((
            &["clusterResourceSelectors", "[]"],
            required(
                "has(self.name) && self.name != ''",
                ".name",
                "resource name is required for ClusterResourceOverride resource selection",
            ),
        ));
    }
    rules
}

/// The rules of a staged update strategy's tasks, as `validation::staged_update` checks them.
pub(crate) fn strategy_rules() -> Vec<Placed> {
    let approval = forbidden(
        "!has(self.type) || self.type != 'Approval' || !has(self.waitTime)",
        ".waitTime",
        "may not be set when type is Approval",
    );
    vec![
        (
            &["stages", "[]", "afterStageTasks", "[]"],
            required(
                "!has(self.type) || self.type != 'TimedWait' || has(self.waitTime)",
                ".waitTime",
                "must be set when type is TimedWait",
            ),
        ),
        (&["stages", "[]", "afterStageTasks", "[]"], approval.clone()),
        (&["stages", "[]", "beforeStageTasks", "[]"], approval),
    ]
}

/// The rules of the kind with plural `plural`, each with where it sits.
fn rules_of(plural: &str) -> Vec<Placed> {
    if PLACEMENTS.contains(&plural) {
        let mut rules: Vec<Placed> = placement_policy_rules()
            .into_iter()
            .map(|rule| (&["policy"][..], rule))
            .collect();
        rules.extend(placement_spec_rules());
        rules
    } else if OVERRIDES.contains(&plural) {
        override_rules(plural == OVERRIDES[0])
    } else if STRATEGIES.contains(&plural) {
        strategy_rules()
    } else {
        Vec::new()
    }
}

/// `crd` with the CEL rules of its kind added to every served version's schema.
pub(crate) fn with_rules(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    let placed = rules_of(&crd.spec.names.plural);
    if placed.is_empty() {
        return crd;
    }
    for version in &mut crd.spec.versions {
        let Some(schema) = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
        else {
            continue;
        };
        let mut value = serde_json::to_value(&*schema).expect("a schema serializes");
        for (at, rule) in &placed {
            let mut node = &mut value["properties"]["spec"];
            for step in *at {
                node = match *step {
                    "[]" => &mut node["items"],
                    name => &mut node["properties"][name],
                };
            }
            assert!(node.is_object(), "the schema has spec.{}", at.join("."));
            let rules = &mut node["x-kubernetes-validations"];
            if !rules.is_array() {
                *rules = json!([]);
            }
            rules.as_array_mut().expect("an array").push(rule.to_json());
        }
        *schema = serde_json::from_value(value).expect("a schema with rules deserializes");
    }
    crd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_crds_carry_the_policy_rules_in_every_version() {
        let crds = crate::fleet_crds();
        for plural in PLACEMENTS {
            let crd = crds
                .iter()
                .find(|c| c.spec.names.plural == plural)
                .cloned()
                .map(with_rules)
                .unwrap();
            for version in &crd.spec.versions {
                let schema = serde_json::to_value(version.schema.as_ref().unwrap()).unwrap();
                let rules = &schema["openAPIV3Schema"]["properties"]["spec"]["properties"]["policy"]
                    ["x-kubernetes-validations"];
                assert_eq!(
                    rules.as_array().map(Vec::len),
                    Some(placement_policy_rules().len()),
                    "{plural} {}",
                    version.name
                );
                let strategy = &schema["openAPIV3Schema"]["properties"]["spec"]["properties"]["strategy"]
                    ["x-kubernetes-validations"];
                assert_eq!(strategy.as_array().map(Vec::len), Some(1), "{plural}");
            }
        }
        let other = crds
            .iter()
            .find(|c| c.spec.names.plural == "works")
            .cloned()
            .unwrap();
        assert_eq!(with_rules(other.clone()), other, "other kinds unchanged");
        // Every rule of every kind finds its place in the schema (with_rules asserts it).
        for crd in crds {
            with_rules(crd);
        }
    }

    #[test]
    fn every_rule_names_a_field_and_a_known_reason() {
        let placed = placement_spec_rules()
            .into_iter()
            .chain(override_rules(true))
            .chain(strategy_rules())
            .map(|(_, rule)| rule);
        for rule in placement_policy_rules().into_iter().chain(placed) {
            assert!(rule.field.starts_with('.'), "{rule:?}");
            assert!(
                [
                    "FieldValueRequired",
                    "FieldValueForbidden",
                    "FieldValueInvalid"
                ]
                .contains(&rule.reason),
                "{rule:?}"
            );
            assert!(rule.rule.contains("self."), "{rule:?}");
        }
    }
}
