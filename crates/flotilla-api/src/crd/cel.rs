//! Flotilla's own rules of its kinds as the CEL rules (`x-kubernetes-validations`) a
//! kube-apiserver evaluates, for the CRDs `flotilla crds` prints: on a hub that is a plain
//! Kubernetes cluster the same bad objects are refused, naming the same field (`fieldPath`)
//! with the same reason and message as Flotilla's hub does (`crate::validation`).
//!
//! Flotilla's own engine runs the Rust rules and serves its CRDs without these. Each rule here
//! mirrors one rule of `validation::placement` and says which; the differential test
//! `crates/flotilla/tests/byo_hub.rs` sends the same bad objects to both hubs.
//!
//! So far, of `ClusterResourcePlacement` and `ResourcePlacement`: the policy's rules (which
//! fields each `placementType` requires and forbids), a resource selector's name-or-labels
//! rule, and the strategy's rules that forbid or require a field. Rules that quote the bad value
//! (`FieldValueInvalid`) are not exported: a kube-apiserver's CEL failure cannot quote it.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Value, json};

/// The kinds whose `spec.policy` carries the placement policy rules.
const PLACEMENTS: [&str; 2] = ["clusterresourceplacements", "resourceplacements"];

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

/// The rules of a placement's strategy and its resource selectors, each with the object of the
/// schema it sits on (property names from `spec`; `[]` for a list's items), as
/// `validation::placement::{strategy, resource_selectors}` check them.
pub(crate) fn placement_spec_rules() -> Vec<(&'static [&'static str], Rule)> {
    let forbidden = |rule: &str, field: &str, message: &str| Rule {
        rule: rule.into(),
        field: field.into(),
        reason: "FieldValueForbidden",
        message: message.into(),
    };
    let external = "has(self.type) && self.type == 'External'";
    vec![
        (
            &["resourceSelectors", "[]"][..],
            forbidden(
                "!has(self.labelSelector) || !has(self.name)",
                ".labelSelector",
                "may not be set together with name: a selector picks one resource by name or many by labels",
            ),
        ),
        (
            &["strategy"][..],
            forbidden(
                &format!("!({external}) || !has(self.rollingUpdate)"),
                ".rollingUpdate",
                "only valid for type RollingUpdate",
            ),
        ),
        (
            &["strategy", "applyStrategy"][..],
            forbidden(
                "!has(self.serverSideApplyConfig) || (has(self.type) && self.type == 'ServerSideApply')",
                ".serverSideApplyConfig",
                "only valid for type ServerSideApply",
            ),
        ),
        (
            &["strategy", "reportBackStrategy"][..],
            Rule {
                rule: "!has(self.type) || self.type != 'Mirror' || has(self.destination)".into(),
                field: ".destination".into(),
                reason: "FieldValueRequired",
                message: "must be set when type is Mirror".into(),
            },
        ),
    ]
}

/// `crd` with the CEL rules of its kind added to every served version's schema.
pub(crate) fn with_rules(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    if !PLACEMENTS.contains(&crd.spec.names.plural.as_str()) {
        return crd;
    }
    let mut placed: Vec<(&[&str], Rule)> = placement_policy_rules()
        .into_iter()
        .map(|rule| (&["policy"][..], rule))
        .collect();
    placed.extend(placement_spec_rules());
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
    }

    #[test]
    fn every_rule_names_a_field_and_a_known_reason() {
        let spec_rules = placement_spec_rules().into_iter().map(|(_, rule)| rule);
        for rule in placement_policy_rules().into_iter().chain(spec_rules) {
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
