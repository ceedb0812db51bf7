//! Rules of `ClusterResourcePlacement` and `ResourcePlacement` that their schema cannot
//! express: KubeFleet's CEL rules and its validating webhook. The two kinds share their spec
//! and every rule; the namespaced one adds what its scope implies (see
//! [`namespaced_selector`] and [`status_reporting_scope`]).

use flotilla_apimachinery::{FieldError, FieldErrorType};
use serde_json::{Value, json};

use super::ServedKinds;
use super::common::{field, immutable, is_set, label_selector, list, name_at_most_63, string};
use super::format::{is_dns1123_subdomain, is_label_value, is_qualified_name, is_quantity};
use super::path::Path;
use crate::placement::overrides::PlacementScope;

const PICK_ALL: &str = "PickAll";
const PICK_N: &str = "PickN";
const PICK_FIXED: &str = "PickFixed";
const EXTERNAL: &str = "External";

/// Validates a placement of `scope` (`Cluster`: a ClusterResourcePlacement, `Namespaced`: a
/// ResourcePlacement) on create (`old` is `None`) or update, on a hub serving `served`.
pub(crate) fn validate(
    scope: PlacementScope,
    new: &Value,
    old: Option<&Value>,
    served: &dyn ServedKinds,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    name_at_most_63(new, &mut errors);
    let spec = new.get("spec");
    let path = Path::new("spec");
    resource_selectors(scope, spec, &path, served, &mut errors);
    status_reporting_scope(scope, spec, &path, &mut errors);
    if let Some(policy) = field(spec, "policy") {
        placement_policy(policy, &path.child("policy"), &mut errors);
    }
    strategy(
        field(spec, "strategy"),
        &path.child("strategy"),
        &mut errors,
    );
    if let Some(old) = old {
        update(spec, old.get("spec"), &path, &mut errors);
    }
    errors
}

fn resource_selectors(
    scope: PlacementScope,
    spec: Option<&Value>,
    path: &Path,
    served: &dyn ServedKinds,
    errors: &mut Vec<FieldError>,
) {
    let path = path.child("resourceSelectors");
    for (i, selector) in list(spec, "resourceSelectors").iter().enumerate() {
        let path = path.index(i);
        let selector = Some(selector);
        if let Some(labels) = field(selector, "labelSelector") {
            if is_set(selector, "name") {
                errors.push(FieldError::forbidden(
                    path.child("labelSelector"),
                    "may not be set together with name: a selector picks one resource by name or many by labels",
                ));
            }
            label_selector(Some(labels), &path.child("labelSelector"), errors);
        }
        if scope == PlacementScope::Namespaced {
            namespaced_selector(selector, &path, served, errors);
        }
    }
}

/// A ResourcePlacement selects resources of its own namespace, so a selector may name neither
/// a namespace nor another cluster-scoped kind. KubeFleet's webhook asks its REST mapper; this
/// asks `served`, and leaves a kind the hub does not serve to the placement's status, as for a
/// ClusterResourcePlacement. Selection scopes say what selecting a namespace brings, which a
/// ResourcePlacement cannot do: only the schema's default is accepted, so a scope that would
/// silently mean nothing is an error rather than ignored.
fn namespaced_selector(
    selector: Option<&Value>,
    path: &Path,
    served: &dyn ServedKinds,
    errors: &mut Vec<FieldError>,
) {
    let group = string(selector, "group").unwrap_or_default();
    if let Some(kind) = string(selector, "kind")
        && ((group.is_empty() && kind == "Namespace")
            || served.namespaced(group, kind) == Some(false))
    {
        errors.push(FieldError::invalid(
            path.child("kind"),
            json!(kind),
            "must be a namespaced kind: a ResourcePlacement selects resources in its own namespace \
             (place namespaces and other cluster-scoped resources with a ClusterResourcePlacement)",
        ));
    }
    if let Some(selection_scope) = string(selector, "selectionScope")
        && selection_scope != "NamespaceWithResources"
    {
        errors.push(FieldError::invalid(
            path.child("selectionScope"),
            json!(selection_scope),
            "only NamespaceWithResources (the default) is valid in a ResourcePlacement: a selection \
             scope applies to namespace selectors, which a ResourcePlacement cannot have",
        ));
    }
}

/// `NamespaceAccessible` copies a ClusterResourcePlacement's status into the one namespace it
/// selects; a ResourcePlacement's status is already in its namespace, so it accepts only the
/// default.
fn status_reporting_scope(
    scope: PlacementScope,
    spec: Option<&Value>,
    path: &Path,
    errors: &mut Vec<FieldError>,
) {
    if string(spec, "statusReportingScope") != Some("NamespaceAccessible") {
        return;
    }
    if scope == PlacementScope::Namespaced {
        errors.push(FieldError::invalid(
            path.child("statusReportingScope"),
            json!("NamespaceAccessible"),
            "only valid for a ClusterResourcePlacement: a ResourcePlacement's status is already in its namespace",
        ));
        return;
    }
    let namespaces = list(spec, "resourceSelectors")
        .iter()
        .filter(|s| string(Some(s), "kind") == Some("Namespace"))
        .count();
    if namespaces != 1 {
        errors.push(FieldError::invalid(
            path.child("statusReportingScope"),
            json!("NamespaceAccessible"),
            "requires exactly one resourceSelector of kind Namespace",
        ));
    }
}

/// The placement type of a spec, `PickAll` when unset.
fn placement_type(spec: Option<&Value>) -> &str {
    string(field(spec, "policy"), "placementType").unwrap_or(PICK_ALL)
}

fn placement_policy(policy: &Value, path: &Path, errors: &mut Vec<FieldError>) {
    let policy = Some(policy);
    let kind = string(policy, "placementType").unwrap_or(PICK_ALL);
    let only_for = |field: &str, types: &str| {
        FieldError::forbidden(
            path.child(field),
            format!("only valid for placementType {types}, not {kind}"),
        )
    };
    match kind {
        PICK_FIXED => {
            cluster_names(policy, path, errors);
            for (name, types) in [
                ("numberOfClusters", "PickN"),
                ("affinity", "PickAll and PickN"),
                ("topologySpreadConstraints", "PickN"),
                ("tolerations", "PickAll and PickN"),
            ] {
                if is_set(policy, name) {
                    errors.push(only_for(name, types));
                }
            }
        }
        PICK_ALL | PICK_N => {
            if is_set(policy, "clusterNames") {
                errors.push(only_for("clusterNames", "PickFixed"));
            }
            if kind == PICK_ALL {
                for name in ["numberOfClusters", "topologySpreadConstraints"] {
                    if is_set(policy, name) {
                        errors.push(only_for(name, "PickN"));
                    }
                }
            } else if field(policy, "numberOfClusters").is_none() {
                errors.push(FieldError::required(
                    path.child("numberOfClusters"),
                    "must be set when placementType is PickN",
                ));
            }
            cluster_affinity(
                policy,
                kind,
                &path.child("affinity").child("clusterAffinity"),
                errors,
            );
            tolerations(policy, &path.child("tolerations"), errors);
        }
        // Unknown types are the schema's enum's to reject.
        _ => {}
    }
}

fn cluster_names(policy: Option<&Value>, path: &Path, errors: &mut Vec<FieldError>) {
    let names = list(policy, "clusterNames");
    let path = path.child("clusterNames");
    if names.is_empty() {
        errors.push(FieldError::required(
            &path,
            "must be set when placementType is PickFixed",
        ));
    }
    for (i, name) in names.iter().enumerate() {
        let Some(text) = name.as_str() else { continue };
        if text.len() > 63 || !is_dns1123_subdomain(text) {
            errors.push(FieldError::invalid(
                path.index(i),
                name.clone(),
                "must be a valid member cluster name (a DNS-1123 subdomain of at most 63 characters)",
            ));
        }
        if names[..i].contains(name) {
            errors.push(FieldError::new(
                FieldErrorType::Duplicate,
                path.index(i),
                Some(name.clone()),
                "",
            ));
        }
    }
}

fn cluster_affinity(policy: Option<&Value>, kind: &str, path: &Path, errors: &mut Vec<FieldError>) {
    let affinity = field(field(policy, "affinity"), "clusterAffinity");
    let required_key = "requiredDuringSchedulingIgnoredDuringExecution";
    let required_path = path.child(required_key).child("clusterSelectorTerms");
    for (i, term) in list(field(affinity, required_key), "clusterSelectorTerms")
        .iter()
        .enumerate()
    {
        let path = required_path.index(i);
        label_selector(
            field(Some(term), "labelSelector"),
            &path.child("labelSelector"),
            errors,
        );
        for sorter in ["propertySorter", "metricSorter"] {
            if is_set(Some(term), sorter) {
                errors.push(FieldError::forbidden(
                    path.child(sorter),
                    "only valid in preferredDuringSchedulingIgnoredDuringExecution terms",
                ));
            }
        }
        if let Some(selector) = field(Some(term), "propertySelector") {
            property_selector(selector, &path.child("propertySelector"), errors);
        }
    }

    let preferred_key = "preferredDuringSchedulingIgnoredDuringExecution";
    let preferred = list(affinity, preferred_key);
    let preferred_path = path.child(preferred_key);
    if kind == PICK_ALL && !preferred.is_empty() {
        errors.push(FieldError::forbidden(
            &preferred_path,
            "only valid for placementType PickN: PickAll picks every matching cluster regardless of score",
        ));
        return;
    }
    for (i, preferred) in preferred.iter().enumerate() {
        let path = preferred_path.index(i).child("preference");
        let term = field(Some(preferred), "preference");
        label_selector(
            field(term, "labelSelector"),
            &path.child("labelSelector"),
            errors,
        );
        if is_set(term, "propertySelector") {
            errors.push(FieldError::forbidden(
                path.child("propertySelector"),
                "only valid in requiredDuringSchedulingIgnoredDuringExecution terms",
            ));
        }
        if is_set(term, "propertySorter") && is_set(term, "metricSorter") {
            errors.push(FieldError::forbidden(
                path.child("metricSorter"),
                "may not be set together with propertySorter (metricSorter is its deprecated alias)",
            ));
        }
        for sorter in ["propertySorter", "metricSorter"] {
            if let Some(name) = string(field(term, sorter), "name") {
                property_name(name, &path.child(sorter).child("name"), errors);
            }
        }
    }
}

fn property_selector(selector: &Value, path: &Path, errors: &mut Vec<FieldError>) {
    let path = path.child("matchExpressions");
    for (i, requirement) in list(Some(selector), "matchExpressions").iter().enumerate() {
        let path = path.index(i);
        let requirement = Some(requirement);
        if let Some(name) = string(requirement, "name") {
            property_name(name, &path.child("name"), errors);
        }
        let values = list(requirement, "values");
        if values.len() != 1 {
            errors.push(FieldError::invalid(
                path.child("values"),
                Value::Array(values.to_vec()),
                "must have exactly one value",
            ));
        }
        for (j, value) in values.iter().enumerate() {
            if !value.as_str().is_some_and(is_quantity) {
                errors.push(FieldError::invalid(
                    path.child("values").index(j),
                    value.clone(),
                    "must be a Kubernetes quantity (e.g. 5, 1.5, 100m, 2Gi)",
                ));
            }
        }
    }
}

/// A property name is a qualified name, possibly with more `/`-separated segments; a
/// `resources.kubernetes-fleet.io/` name must be `<total|allocatable|available>-<resource>`.
fn property_name(name: &str, path: &Path, errors: &mut Vec<FieldError>) {
    const RESOURCE_PREFIX: &str = "resources.kubernetes-fleet.io/";
    let valid = if let Some(resource) = name.strip_prefix(RESOURCE_PREFIX) {
        resource.split_once('-').is_some_and(|(capacity, rest)| {
            ["total", "allocatable", "available"].contains(&capacity) && !rest.is_empty()
        }) && is_qualified_name(name)
    } else {
        let mut segments = name.split('/');
        let first = segments.next().unwrap_or_default();
        let rest: Vec<&str> = segments.collect();
        if rest.is_empty() {
            is_qualified_name(first)
        } else {
            (is_dns1123_subdomain(first) || is_qualified_name(first))
                && rest.iter().all(|s| is_qualified_name(s))
        }
    };
    if !valid {
        errors.push(FieldError::invalid(
            path,
            json!(name),
            "must be a property name such as kubernetes-fleet.io/node-count or \
             resources.kubernetes-fleet.io/<total|allocatable|available>-<resource>",
        ));
    }
}

fn tolerations(policy: Option<&Value>, path: &Path, errors: &mut Vec<FieldError>) {
    let tolerations = list(policy, "tolerations");
    for (i, toleration) in tolerations.iter().enumerate() {
        let path = path.index(i);
        let toleration_ref = Some(toleration);
        let key = string(toleration_ref, "key").unwrap_or_default();
        let value = string(toleration_ref, "value").unwrap_or_default();
        if !key.is_empty() && !is_qualified_name(key) {
            errors.push(FieldError::invalid(
                path.child("key"),
                json!(key),
                "must be a qualified name",
            ));
        }
        match string(toleration_ref, "operator").unwrap_or("Equal") {
            "Exists" if !value.is_empty() => errors.push(FieldError::invalid(
                path.child("value"),
                json!(value),
                "must be empty when operator is Exists",
            )),
            "Equal" => {
                if key.is_empty() {
                    errors.push(FieldError::required(
                        path.child("key"),
                        "must be set when operator is Equal",
                    ));
                }
                if !is_label_value(value) {
                    errors.push(FieldError::invalid(
                        path.child("value"),
                        json!(value),
                        "must be a valid label value",
                    ));
                }
            }
            _ => {}
        }
        if tolerations[..i].contains(toleration) {
            errors.push(FieldError::new(
                FieldErrorType::Duplicate,
                path,
                Some(toleration.clone()),
                "",
            ));
        }
    }
}

fn strategy(strategy: Option<&Value>, path: &Path, errors: &mut Vec<FieldError>) {
    let external = string(strategy, "type") == Some(EXTERNAL);
    if external {
        for name in ["rollingUpdate", "resourceSnapshotIndex"] {
            if is_set(strategy, name) {
                errors.push(FieldError::forbidden(
                    path.child(name),
                    "only valid for type RollingUpdate",
                ));
            }
        }
    }
    if let Some(rolling) = field(strategy, "rollingUpdate") {
        let path = path.child("rollingUpdate");
        let rolling = Some(rolling);
        for name in ["maxUnavailable", "maxSurge"] {
            if let Some(value) = field(rolling, name)
                && value.as_i64().is_some_and(|n| n < 0)
            {
                errors.push(FieldError::invalid(
                    path.child(name),
                    value.clone(),
                    "must be greater than or equal to 0",
                ));
            }
        }
        let is_zero = |name: &str| matches!(field(rolling, name), Some(v) if v == &json!(0) || v == &json!("0%"));
        if is_zero("maxUnavailable") && is_zero("maxSurge") {
            errors.push(FieldError::invalid(
                path.child("maxSurge"),
                field(rolling, "maxSurge").cloned().unwrap_or(Value::Null),
                "may not be 0 when maxUnavailable is 0",
            ));
        }
        if let Some(value) = field(rolling, "unavailablePeriodSeconds")
            && value.as_i64().is_some_and(|n| n < 0)
        {
            errors.push(FieldError::invalid(
                path.child("unavailablePeriodSeconds"),
                value.clone(),
                "must be greater than or equal to 0",
            ));
        }
    }
    if let Some(apply) = field(strategy, "applyStrategy")
        && is_set(Some(apply), "serverSideApplyConfig")
        && string(Some(apply), "type") != Some("ServerSideApply")
    {
        errors.push(FieldError::forbidden(
            path.child("applyStrategy").child("serverSideApplyConfig"),
            "only valid for type ServerSideApply",
        ));
    }
    if let Some(report) = field(strategy, "reportBackStrategy")
        && string(Some(report), "type") == Some("Mirror")
        && !is_set(Some(report), "destination")
    {
        errors.push(FieldError::required(
            path.child("reportBackStrategy").child("destination"),
            "must be set when type is Mirror",
        ));
    }
}

fn update(
    spec: Option<&Value>,
    old_spec: Option<&Value>,
    path: &Path,
    errors: &mut Vec<FieldError>,
) {
    let policy_path = path.child("policy");
    if field(old_spec, "policy").is_some() && field(spec, "policy").is_none() {
        errors.push(FieldError::forbidden(
            &policy_path,
            "may not be removed once set",
        ));
    }
    let (new_type, old_type) = (placement_type(spec), placement_type(old_spec));
    if new_type != old_type {
        immutable(
            &policy_path.child("placementType"),
            Some(&json!(new_type)),
            Some(&json!(old_type)),
            errors,
        );
    }
    if let Some(old_scope) = field(old_spec, "statusReportingScope") {
        immutable(
            &path.child("statusReportingScope"),
            field(spec, "statusReportingScope"),
            Some(old_scope),
            errors,
        );
    }
    let strategy_type = |spec| string(field(spec, "strategy"), "type").unwrap_or("RollingUpdate");
    if strategy_type(old_spec) == EXTERNAL && strategy_type(spec) != EXTERNAL {
        errors.push(FieldError::forbidden(
            path.child("strategy").child("type"),
            "may not change from External: staged update runs own this placement's rollout",
        ));
    }
    let new_tolerations = list(field(spec, "policy"), "tolerations");
    let old_tolerations = list(field(old_spec, "policy"), "tolerations");
    if old_tolerations.iter().any(|t| !new_tolerations.contains(t)) {
        errors.push(FieldError::forbidden(
            policy_path.child("tolerations"),
            "tolerations may only be added; an existing toleration was changed or removed",
        ));
    }
}
