//! Flotilla's own rules of its kinds as the CEL rules (`x-kubernetes-validations`) and schema
//! constraints a kube-apiserver evaluates, for the CRDs `flotilla crds` prints: on a hub that is
//! a plain Kubernetes cluster the same bad objects are refused, naming the same field with the
//! same reason and, where a CEL failure can carry it, the same message as Flotilla's hub does
//! (`crate::validation`).
//!
//! Flotilla's own engine runs the Rust rules and serves its CRDs without these. Each rule here
//! mirrors one rule of `crate::validation` and says which; the differential test
//! `crates/flotilla/tests/byo_hub.rs` sends the same bad objects to both hubs. Where a
//! kube-apiserver cannot say exactly what Flotilla says, the difference is one of these (and
//! the test holds each case to it):
//! - an `Invalid value` quotes the schema type (`"string"`) where Flotilla quotes the value;
//! - a rule comparing a list's items (duplicates, a group against its stage) names the list
//!   or the item where Flotilla names the item's field;
//! - a `Duplicate value` carries no explanation.
//!
//! - a value longer than any valid one is refused as `Too long` (the bounds a kube-apiserver
//!   needs to bound the rules' cost), where Flotilla says why it is invalid.
//!
//! Not exported, so refused on writes only by Flotilla's own hub (on a Kubernetes hub the
//! controllers report them in the object's status): whether a ResourcePlacement selects a
//! cluster-scoped kind other than Namespace (it needs the hub's discovery); property names and
//! quantities in property selectors; `memberSelector.byLabel` of fleet update strategies
//! (Flotilla's messages quote the offending part); a group named in two stages of a fleet
//! update strategy and two custom node images of one family (rules comparing every pair
//! exceed a kube-apiserver's cost budget); a `remove` JSON patch with a `value` (a schemaless
//! field CEL cannot see; a Kubernetes hub ignores the value, as RFC 6902 does).

mod member;
mod placement;
mod rollout;
mod updates;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Value, json};

use crate::validation::format::{DNS1123_SUBDOMAIN_PATTERN, QUALIFIED_NAME_PART_PATTERN};

/// One rule on an object of the schema: CEL `rule` over `self` (and `oldSelf` for a rule on
/// changes), failing on `field` (relative, `.numberOfClusters`; empty for the object itself)
/// with `reason` and `message` (a CEL string expression when `dynamic`).
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
    /// Whether `message` is a CEL expression (`messageExpression`) rather than text.
    pub(crate) dynamic: bool,
}

impl Rule {
    fn new(reason: &'static str, rule: &str, field: &str, message: &str) -> Self {
        Rule {
            rule: rule.into(),
            field: field.into(),
            reason,
            message: message.into(),
            dynamic: false,
        }
    }

    /// The same rule with a message computed by the CEL expression `expression`.
    fn computed(mut self, expression: &str) -> Self {
        self.message = expression.into();
        self.dynamic = true;
        self
    }

    fn to_json(&self) -> Value {
        let mut rule = json!({"rule": self.rule, "reason": self.reason});
        if !self.field.is_empty() {
            rule["fieldPath"] = self.field.clone().into();
        }
        let key = if self.dynamic {
            "messageExpression"
        } else {
            "message"
        };
        rule[key] = self.message.clone().into();
        rule
    }
}

/// A rule failing with `FieldValueForbidden`.
fn forbidden(rule: &str, field: &str, message: &str) -> Rule {
    Rule::new("FieldValueForbidden", rule, field, message)
}

/// A rule failing with `FieldValueRequired`.
fn required(rule: &str, field: &str, message: &str) -> Rule {
    Rule::new("FieldValueRequired", rule, field, message)
}

/// A rule failing with `FieldValueInvalid`.
fn invalid(rule: &str, field: &str, message: &str) -> Rule {
    Rule::new("FieldValueInvalid", rule, field, message)
}

/// What is added to one object of a schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Check {
    /// A CEL rule, appended to the object's `x-kubernetes-validations`.
    Cel(Rule),
    /// Schema keywords merged into the object (`enum`, `maxLength`, `x-kubernetes-list-type`).
    Schema(Value),
    /// A schema for a property the derived schema leaves undeclared (`metadata.name`).
    Define(Value),
}

/// A check and where it goes: property names from the root, `[]` for a list's items.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Placed {
    /// The steps from the root schema to the object.
    pub(crate) at: Vec<String>,
    /// What is added there.
    pub(crate) check: Check,
}

/// `rule` on the object at `path`: dotted property names from the root, `name[]` for the
/// items of list `name`, `""` for the root.
fn at(path: &str, rule: Rule) -> Placed {
    Placed {
        at: steps(path),
        check: Check::Cel(rule),
    }
}

/// Schema keywords `keywords` merged into the object at `path` (as for [`at`]).
fn schema(path: &str, keywords: Value) -> Placed {
    Placed {
        at: steps(path),
        check: Check::Schema(keywords),
    }
}

fn steps(path: &str) -> Vec<String> {
    let mut steps = Vec::new();
    for segment in path.split('.').filter(|s| !s.is_empty()) {
        match segment.strip_suffix("[]") {
            Some(name) => steps.extend([name.to_string(), "[]".to_string()]),
            None => steps.push(segment.to_string()),
        }
    }
    steps
}

/// A schema for `metadata.name`, a string with `keywords` (`maxLength`, `enum`): the derived
/// schemas leave `metadata` open, and a CRD may constrain its name only.
fn metadata_name(keywords: Value) -> Placed {
    let mut definition = json!({"type": "string"});
    definition
        .as_object_mut()
        .expect("an object")
        .extend(keywords.as_object().expect("keywords").clone());
    Placed {
        at: steps("metadata.name"),
        check: Check::Define(definition),
    }
}

/// A list whose items are unique as wholes: a kube-apiserver refuses a repeated item as
/// `Duplicate value`, naming its index.
fn unique_items(path: &str) -> Placed {
    schema(path, json!({"x-kubernetes-list-type": "set"}))
}

/// A list of objects unique by `keys`: a kube-apiserver refuses a repeat, naming its index.
fn unique_by(path: &str, keys: &[&str]) -> Placed {
    schema(
        path,
        json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": keys}),
    )
}

/// The longest qualified name: a DNS subdomain prefix, `/`, a 63-character name.
const QUALIFIED_NAME_MAX: usize = 253 + 1 + 63;

/// A bound on the strings at `path`, so that a kube-apiserver can bound the cost of the rules
/// reading them (it refuses a CRD whose rules' estimated cost is unbounded). Each bound is
/// above any valid value's length: a longer value, invalid anyway, is refused as `Too long`.
fn longest(path: &str, length: usize) -> Placed {
    schema(path, json!({"maxLength": length}))
}

/// CEL: whether the string `s` is a qualified name (`validation::format::is_qualified_name`).
fn qualified_name(s: &str) -> String {
    let slash = format!("{s}.indexOf('/')");
    let name = format!("{s}.substring({slash} + 1)");
    let prefix = format!("{s}.substring(0, {slash})");
    format!(
        "({slash} < 0 ? ({s}.size() <= 63 && {s}.matches(r'{part}')) : \
         ({prefix}.size() >= 1 && {prefix}.size() <= 253 && {prefix}.matches(r'{subdomain}') \
         && {name}.size() <= 63 && {name}.matches(r'{part}')))",
        part = QUALIFIED_NAME_PART_PATTERN,
        subdomain = DNS1123_SUBDOMAIN_PATTERN,
    )
}

/// CEL: whether the string `s` is a label value (`validation::format::is_label_value`).
fn label_value(s: &str) -> String {
    format!(
        "({s}.size() == 0 || ({s}.size() <= 63 && {s}.matches(r'{QUALIFIED_NAME_PART_PATTERN}')))"
    )
}

/// CEL: field `field` of `object` and of `old` (the same object before the change) are both
/// unset, or equal.
fn unchanged(object: &str, old: &str, field: &str) -> String {
    format!(
        "(has({object}.{field}) == has({old}.{field}) && (!has({object}.{field}) || {object}.{field} == {old}.{field}))"
    )
}

/// The rules of the kind with plural `plural`.
fn rules_of(plural: &str) -> Vec<Placed> {
    match plural {
        "clusterresourceplacements" => placement::rules(true),
        "resourceplacements" => placement::rules(false),
        "clusterresourceoverrides" => rollout::override_rules(true),
        "resourceoverrides" => rollout::override_rules(false),
        "clusterstagedupdatestrategies" | "stagedupdatestrategies" => rollout::strategy_rules(),
        "clusterstagedupdateruns" | "stagedupdateruns" => rollout::run_rules(),
        "clusterapprovalrequests" | "approvalrequests" => vec![at("spec", immutable(""))],
        "clusterresourceplacementevictions" => rollout::eviction_rules(),
        "clusterresourceplacementdisruptionbudgets" => rollout::budget_rules(),
        "memberclusters" => member::rules(),
        "fleetupdatestrategies" => updates::strategy_rules("spec"),
        "updateruns" => updates::run_rules(),
        "maintenanceconfigurations" => updates::maintenance_rules(),
        "autoupgradeprofiles" => updates::profile_rules(),
        "gates" | "memberupgrades" => vec![at("spec", immutable(""))],
        _ => Vec::new(),
    }
}

/// A rule on changes: `field` of the object (all of it when empty) never changes, as
/// `validation::common::immutable` says.
fn immutable(field: &str) -> Rule {
    let rule = if field.is_empty() {
        "self == oldSelf".to_string()
    } else {
        unchanged("self", "oldSelf", field)
    };
    let path = if field.is_empty() {
        String::new()
    } else {
        format!(".{field}")
    };
    invalid(&rule, &path, "field is immutable")
}

/// `crd` with the checks of its kind added to every served version's schema.
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
        for placed in &placed {
            let mut node = &mut value;
            for step in &placed.at {
                node = match step.as_str() {
                    "[]" => &mut node["items"],
                    name => &mut node["properties"][name],
                };
            }
            assert!(
                node.is_object() || matches!(placed.check, Check::Define(_)),
                "the schema of {} has {}",
                crd.spec.names.plural,
                placed.at.join(".")
            );
            match &placed.check {
                Check::Cel(rule) => {
                    let rules = &mut node["x-kubernetes-validations"];
                    if !rules.is_array() {
                        *rules = json!([]);
                    }
                    rules.as_array_mut().expect("an array").push(rule.to_json());
                }
                Check::Schema(keywords) => {
                    let object = node.as_object_mut().expect("an object");
                    for (key, keyword) in keywords.as_object().expect("keywords") {
                        object.insert(key.clone(), keyword.clone());
                    }
                }
                Check::Define(definition) => *node = definition.clone(),
            }
        }
        *schema = serde_json::from_value(value).expect("a schema with rules deserializes");
    }
    crd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_finds_its_place_in_every_version() {
        // with_rules asserts each place exists.
        for crd in crate::fleet_crds() {
            let plural = crd.spec.names.plural.clone();
            let placed = rules_of(&plural);
            let with = with_rules(crd.clone());
            if placed.is_empty() {
                assert_eq!(with, crd, "{plural} unchanged");
                continue;
            }
            for (version, before) in with.spec.versions.iter().zip(&crd.spec.versions) {
                let count = |v: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionVersion| {
                    rule_count(&serde_json::to_value(v.schema.as_ref().unwrap()).unwrap())
                };
                let cel = placed
                    .iter()
                    .filter(|p| matches!(p.check, Check::Cel(_)))
                    .count();
                assert_eq!(
                    count(version),
                    count(before) + cel,
                    "{plural} {}: every rule is in the schema",
                    version.name
                );
            }
        }
    }

    /// How many CEL rules `schema` holds, at any depth.
    fn rule_count(schema: &Value) -> usize {
        match schema {
            Value::Object(object) => object
                .iter()
                .map(|(key, value)| match (key.as_str(), value) {
                    ("x-kubernetes-validations", Value::Array(rules)) => rules.len(),
                    _ => rule_count(value),
                })
                .sum(),
            Value::Array(items) => items.iter().map(rule_count).sum(),
            _ => 0,
        }
    }

    #[test]
    fn every_rule_names_a_known_reason_and_reads_its_object() {
        let plurals = crate::fleet_crds()
            .into_iter()
            .map(|crd| crd.spec.names.plural);
        for placed in plurals.flat_map(|p| rules_of(&p)) {
            let Check::Cel(rule) = placed.check else {
                continue;
            };
            assert!(
                rule.field.is_empty() || rule.field.starts_with('.'),
                "{rule:?}"
            );
            assert!(
                [
                    "FieldValueRequired",
                    "FieldValueForbidden",
                    "FieldValueInvalid"
                ]
                .contains(&rule.reason),
                "{rule:?}"
            );
            assert!(rule.rule.contains("self"), "{rule:?}");
        }
    }

    #[test]
    fn paths_read_as_steps() {
        assert_eq!(steps(""), Vec::<String>::new());
        assert_eq!(
            steps("spec.stages[].groups[]"),
            ["spec", "stages", "[]", "groups", "[]"]
        );
    }
}
