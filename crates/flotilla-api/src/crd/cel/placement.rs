//! The checks of `ClusterResourcePlacement` and `ResourcePlacement`, as
//! `validation::placement` applies them.

use serde_json::json;

use super::{
    Placed, QUALIFIED_NAME_MAX, Rule, at, forbidden, invalid, label_value, longest, metadata_name,
    qualified_name, required, schema, unique_items,
};

/// The policy's placement type, PickAll when unset (the API's default).
const TYPE: &str = "(has(self.placementType) ? self.placementType : 'PickAll')";

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

/// The checks of a placement kind (`cluster`: a ClusterResourcePlacement).
pub(super) fn rules(cluster: bool) -> Vec<Placed> {
    let mut rules = vec![metadata_name(json!({"maxLength": 63}))];
    rules.extend(policy_rules().into_iter().map(|r| at("spec.policy", r)));
    rules.extend(selector_rules(cluster));
    rules.extend(affinity_rules());
    rules.extend(toleration_rules());
    rules.extend(strategy_rules());
    rules.extend(change_rules());
    rules
}

/// The rules of a placement's `spec.policy`, as `validation::placement::placement_policy`
/// checks them.
fn policy_rules() -> Vec<Rule> {
    let mut rules = vec![required(
        &format!("{TYPE} != 'PickFixed' || {}", set("clusterNames")),
        ".clusterNames",
        "must be set when placementType is PickFixed",
    )];
    for (name, types) in [
        ("numberOfClusters", "PickN"),
        ("affinity", "PickAll and PickN"),
        ("topologySpreadConstraints", "PickN"),
        ("tolerations", "PickAll and PickN"),
    ] {
        rules.push(forbidden(
            &format!("{TYPE} != 'PickFixed' || !{}", set(name)),
            &format!(".{name}"),
            &format!("only valid for placementType {types}, not PickFixed"),
        ));
    }
    for kind in ["PickAll", "PickN"] {
        rules.push(forbidden(
            &format!("{TYPE} != '{kind}' || !{}", set("clusterNames")),
            ".clusterNames",
            &format!("only valid for placementType PickFixed, not {kind}"),
        ));
    }
    for name in ["numberOfClusters", "topologySpreadConstraints"] {
        rules.push(forbidden(
            &format!("{TYPE} != 'PickAll' || !{}", set(name)),
            &format!(".{name}"),
            "only valid for placementType PickN, not PickAll",
        ));
    }
    rules.push(required(
        &format!("{TYPE} != 'PickN' || has(self.numberOfClusters)"),
        ".numberOfClusters",
        "must be set when placementType is PickN",
    ));
    let preferred = "preferredDuringSchedulingIgnoredDuringExecution";
    rules.push(forbidden(
        &format!(
            "{TYPE} != 'PickAll' || !has(self.affinity) || !has(self.affinity.clusterAffinity) \
             || !has(self.affinity.clusterAffinity.{preferred}) \
             || size(self.affinity.clusterAffinity.{preferred}) == 0"
        ),
        &format!(".affinity.clusterAffinity.{preferred}"),
        "only valid for placementType PickN: PickAll picks every matching cluster regardless of score",
    ));
    rules
}

/// The rules of a `metav1.LabelSelector` at `path`, as `validation::common::label_selector`
/// checks them.
pub(super) fn label_selector_rules(path: &str) -> Vec<Placed> {
    let expressions = format!("{path}.matchExpressions[]");
    vec![
        at(
            &expressions,
            required(
                "!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)",
                ".values",
                "must be specified when `operator` is 'In' or 'NotIn'",
            ),
        ),
        at(
            &expressions,
            forbidden(
                "!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0",
                ".values",
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            ),
        ),
        schema(
            &format!("{path}.matchExpressions[].operator"),
            json!({"enum": ["DoesNotExist", "Exists", "In", "NotIn"]}),
        ),
    ]
}

/// The rules of resource selectors and of the status reporting scope, as
/// `validation::placement::{resource_selectors, status_reporting_scope}` check them.
fn selector_rules(cluster: bool) -> Vec<Placed> {
    let mut rules = vec![at(
        "spec.resourceSelectors[]",
        forbidden(
            "!has(self.labelSelector) || !has(self.name)",
            ".labelSelector",
            "may not be set together with name: a selector picks one resource by name or many by labels",
        ),
    )];
    rules.extend(label_selector_rules(
        "spec.resourceSelectors[].labelSelector",
    ));
    let accessible =
        "!has(self.statusReportingScope) || self.statusReportingScope != 'NamespaceAccessible'";
    if cluster {
        rules.push(at(
            "spec",
            invalid(
                &format!(
                    "{accessible} || self.resourceSelectors.filter(s, s.kind == 'Namespace').size() == 1"
                ),
                ".statusReportingScope",
                "requires exactly one resourceSelector of kind Namespace",
            ),
        ));
    } else {
        rules.push(at(
            "spec.resourceSelectors[]",
            invalid(
                "!(self.group == '' && self.kind == 'Namespace')",
                ".kind",
                "must be a namespaced kind: a ResourcePlacement selects resources in its own namespace \
                 (place namespaces and other cluster-scoped resources with a ClusterResourcePlacement)",
            ),
        ));
        rules.push(at(
            "spec.resourceSelectors[]",
            invalid(
                "!has(self.selectionScope) || self.selectionScope == 'NamespaceWithResources'",
                ".selectionScope",
                "only NamespaceWithResources (the default) is valid in a ResourcePlacement: a selection \
                 scope applies to namespace selectors, which a ResourcePlacement cannot have",
            ),
        ));
        rules.push(at(
            "spec",
            invalid(
                accessible,
                ".statusReportingScope",
                "only valid for a ClusterResourcePlacement: a ResourcePlacement's status is already in its namespace",
            ),
        ));
    }
    rules
}

/// The rules of cluster affinity terms, as `validation::placement::cluster_affinity` checks
/// them (property names excepted).
fn affinity_rules() -> Vec<Placed> {
    let required_terms = "spec.policy.affinity.clusterAffinity.requiredDuringSchedulingIgnoredDuringExecution.clusterSelectorTerms[]";
    let preference = "spec.policy.affinity.clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution[].preference";
    let mut rules = Vec::new();
    for sorter in ["propertySorter", "metricSorter"] {
        rules.push(at(
            required_terms,
            forbidden(
                &format!("!has(self.{sorter})"),
                &format!(".{sorter}"),
                "only valid in preferredDuringSchedulingIgnoredDuringExecution terms",
            ),
        ));
    }
    rules.extend(label_selector_rules(
        "spec.policy.affinity.clusterAffinity.requiredDuringSchedulingIgnoredDuringExecution.clusterSelectorTerms[].labelSelector",
    ));
    rules.push(at(
        "spec.policy.affinity.clusterAffinity.requiredDuringSchedulingIgnoredDuringExecution.clusterSelectorTerms[].propertySelector.matchExpressions[]",
        invalid(
            "has(self.values) && size(self.values) == 1",
            ".values",
            "must have exactly one value",
        ),
    ));
    rules.push(at(
        preference,
        forbidden(
            "!has(self.propertySelector)",
            ".propertySelector",
            "only valid in requiredDuringSchedulingIgnoredDuringExecution terms",
        ),
    ));
    rules.push(at(
        preference,
        forbidden(
            "!has(self.propertySorter) || !has(self.metricSorter)",
            ".metricSorter",
            "may not be set together with propertySorter (metricSorter is its deprecated alias)",
        ),
    ));
    rules.extend(label_selector_rules(
        "spec.policy.affinity.clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution[].preference.labelSelector",
    ));
    rules.push(at(
        "spec.policy.clusterNames[]",
        invalid(
            &format!(
                "self.size() <= 63 && self.matches(r'{}')",
                crate::validation::format::DNS1123_SUBDOMAIN_PATTERN
            ),
            "",
            "must be a valid member cluster name (a DNS-1123 subdomain of at most 63 characters)",
        ),
    ));
    rules.push(longest("spec.policy.clusterNames[]", 253));
    rules.push(unique_items("spec.policy.clusterNames"));
    rules
}

/// The rules of tolerations, as `validation::placement::tolerations` checks them.
fn toleration_rules() -> Vec<Placed> {
    let toleration = "spec.policy.tolerations[]";
    let equal = "(!has(self.operator) || self.operator == 'Equal')";
    vec![
        at(
            toleration,
            invalid(
                &format!(
                    "!has(self.key) || self.key == '' || {}",
                    qualified_name("self.key")
                ),
                ".key",
                "must be a qualified name",
            ),
        ),
        at(
            toleration,
            invalid(
                "!has(self.operator) || self.operator != 'Exists' || !has(self.value) || self.value == ''",
                ".value",
                "must be empty when operator is Exists",
            ),
        ),
        at(
            toleration,
            required(
                &format!("!{equal} || (has(self.key) && self.key != '')"),
                ".key",
                "must be set when operator is Equal",
            ),
        ),
        at(
            toleration,
            invalid(
                &format!(
                    "!{equal} || !has(self.value) || {}",
                    label_value("self.value")
                ),
                ".value",
                "must be a valid label value",
            ),
        ),
        longest("spec.policy.tolerations[].key", QUALIFIED_NAME_MAX),
        longest("spec.policy.tolerations[].value", 253),
        unique_items("spec.policy.tolerations"),
        schema(
            "spec.policy.tolerations[]",
            json!({"x-kubernetes-map-type": "atomic"}),
        ),
    ]
}

/// The rules of a placement's strategy, as `validation::placement::strategy` checks them.
fn strategy_rules() -> Vec<Placed> {
    let external = "has(self.type) && self.type == 'External'";
    let mut rules = Vec::new();
    for name in ["rollingUpdate", "resourceSnapshotIndex"] {
        rules.push(at(
            "spec.strategy",
            forbidden(
                &format!("!({external}) || !has(self.{name})"),
                &format!(".{name}"),
                "only valid for type RollingUpdate",
            ),
        ));
    }
    for name in ["maxUnavailable", "maxSurge"] {
        rules.push(at(
            "spec.strategy.rollingUpdate",
            invalid(
                &format!("!has(self.{name}) || type(self.{name}) == string || self.{name} >= 0"),
                &format!(".{name}"),
                "must be greater than or equal to 0",
            ),
        ));
    }
    let zero = |name: &str| {
        format!(
            "(has(self.{name}) && (type(self.{name}) == string ? self.{name} == '0%' : self.{name} == 0))"
        )
    };
    rules.push(at(
        "spec.strategy.rollingUpdate",
        invalid(
            &format!("!({} && {})", zero("maxUnavailable"), zero("maxSurge")),
            ".maxSurge",
            "may not be 0 when maxUnavailable is 0",
        ),
    ));
    rules.push(at(
        "spec.strategy.rollingUpdate",
        invalid(
            "!has(self.unavailablePeriodSeconds) || self.unavailablePeriodSeconds >= 0",
            ".unavailablePeriodSeconds",
            "must be greater than or equal to 0",
        ),
    ));
    rules.push(at(
        "spec.strategy.applyStrategy",
        forbidden(
            "!has(self.serverSideApplyConfig) || (has(self.type) && self.type == 'ServerSideApply')",
            ".serverSideApplyConfig",
            "only valid for type ServerSideApply",
        ),
    ));
    rules.push(at(
        "spec.strategy.reportBackStrategy",
        required(
            "!has(self.type) || self.type != 'Mirror' || has(self.destination)",
            ".destination",
            "must be set when type is Mirror",
        ),
    ));
    rules
}

/// The rules on changes, as `validation::placement::update` checks them.
fn change_rules() -> Vec<Placed> {
    let kind = |o: &str| {
        format!(
            "(has({o}.policy) && has({o}.policy.placementType) ? {o}.policy.placementType : 'PickAll')"
        )
    };
    let strategy = |o: &str| {
        format!(
            "(has({o}.strategy) && has({o}.strategy.type) ? {o}.strategy.type : 'RollingUpdate')"
        )
    };
    let tolerations = |o: &str| {
        format!("(has({o}.policy) && has({o}.policy.tolerations) ? {o}.policy.tolerations : [])")
    };
    let removed = format!(
        "{}.all(t, t in {})",
        tolerations("oldSelf"),
        tolerations("self")
    );
    vec![
        at(
            "spec",
            forbidden(
                "!has(oldSelf.policy) || has(self.policy)",
                ".policy",
                "may not be removed once set",
            ),
        ),
        at(
            "spec",
            invalid(
                &format!("{} == {}", kind("self"), kind("oldSelf")),
                ".policy.placementType",
                "field is immutable",
            ),
        ),
        at(
            "spec",
            invalid(
                "!has(oldSelf.statusReportingScope) || (has(self.statusReportingScope) && self.statusReportingScope == oldSelf.statusReportingScope)",
                ".statusReportingScope",
                "field is immutable",
            ),
        ),
        at(
            "spec",
            forbidden(
                &format!(
                    "{} != 'External' || {} == 'External'",
                    strategy("oldSelf"),
                    strategy("self")
                ),
                ".strategy.type",
                "may not change from External: staged update runs own this placement's rollout",
            ),
        ),
        at(
            "spec",
            forbidden(
                &removed,
                ".policy.tolerations",
                "tolerations may only be added; an existing toleration was changed or removed",
            ),
        ),
    ]
}
