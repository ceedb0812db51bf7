//! Rules of `ClusterResourceOverride` and `ResourceOverride` that their schemas cannot express
//! (KubeFleet's CEL rules): what a selector and a rule may hold, and which paths a JSON patch
//! may touch.

use flotilla_apimachinery::{FieldError, FieldErrorType};
use serde_json::{Value, json};

use super::common::{field, immutable, is_set, label_selector, list, string};
use super::path::Path;

/// Validates a `ClusterResourceOverride`.
pub(crate) fn validate_cluster(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = new.get("spec");
    let path = Path::new("spec");
    if string(field(spec, "placement"), "scope") == Some("Namespaced") {
        errors.push(FieldError::invalid(
            path.child("placement").child("scope"),
            json!("Namespaced"),
            "clusterResourceOverride placement reference cannot be Namespaced scope",
        ));
    }
    let selectors = list(spec, "clusterResourceSelectors");
    let selectors_path = path.child("clusterResourceSelectors");
    for (i, selector) in selectors.iter().enumerate() {
        let path = selectors_path.index(i);
        if is_set(Some(selector), "labelSelector") {
            errors.push(FieldError::forbidden(
                path.child("labelSelector"),
                "labelSelector is not supported for ClusterResourceOverride resource selection",
            ));
        }
        if string(Some(selector), "name").is_none_or(str::is_empty) {
            errors.push(FieldError::required(
                path.child("name"),
                "resource name is required for ClusterResourceOverride resource selection",
            ));
        }
        duplicate(selectors, i, &path, &mut errors);
    }
    common(new, old, &mut errors);
    errors
}

/// Validates a `ResourceOverride`.
pub(crate) fn validate_namespaced(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let selectors = list(new.get("spec"), "resourceSelectors");
    let selectors_path = Path::new("spec").child("resourceSelectors");
    for i in 0..selectors.len() {
        duplicate(selectors, i, &selectors_path.index(i), &mut errors);
    }
    common(new, old, &mut errors);
    errors
}

fn duplicate(items: &[Value], i: usize, path: &Path, errors: &mut Vec<FieldError>) {
    if items[..i].contains(&items[i]) {
        errors.push(FieldError::new(
            FieldErrorType::Duplicate,
            path,
            Some(items[i].clone()),
            "selectors must be unique",
        ));
    }
}

/// The placement reference is immutable, and every rule is well-formed.
fn common(new: &Value, old: Option<&Value>, errors: &mut Vec<FieldError>) {
    let spec = new.get("spec");
    let path = Path::new("spec");
    if let Some(old) = old {
        immutable(
            &path.child("placement"),
            field(spec, "placement"),
            field(old.get("spec"), "placement"),
            errors,
        );
    }
    let rules_path = path.child("policy").child("overrideRules");
    for (i, rule) in list(field(spec, "policy"), "overrideRules")
        .iter()
        .enumerate()
    {
        override_rule(rule, &rules_path.index(i), errors);
    }
}

fn override_rule(rule: &Value, path: &Path, errors: &mut Vec<FieldError>) {
    let rule = Some(rule);
    let delete = string(rule, "overrideType") == Some("Delete");
    let patches = list(rule, "jsonPatchOverrides");
    if delete && !patches.is_empty() {
        errors.push(FieldError::forbidden(
            path.child("jsonPatchOverrides"),
            "jsonPatchOverrides must be empty when overrideType is Delete",
        ));
    }
    if !delete && patches.is_empty() {
        errors.push(FieldError::required(
            path.child("jsonPatchOverrides"),
            "jsonPatchOverrides must not be empty when overrideType is JSONPatch",
        ));
    }
    let terms_path = path.child("clusterSelector").child("clusterSelectorTerms");
    for (i, term) in list(field(rule, "clusterSelector"), "clusterSelectorTerms")
        .iter()
        .enumerate()
    {
        let term_path = terms_path.index(i);
        for key in ["propertySelector", "propertySorter", "metricSorter"] {
            if is_set(Some(term), key) {
                errors.push(FieldError::forbidden(
                    term_path.child(key),
                    "only labelSelector is supported in override clusterSelector",
                ));
            }
        }
        match field(Some(term), "labelSelector") {
            Some(selector) => {
                label_selector(Some(selector), &term_path.child("labelSelector"), errors)
            }
            None => errors.push(FieldError::required(
                term_path.child("labelSelector"),
                "labelSelector is required in override clusterSelector terms",
            )),
        }
    }
    let patches_path = path.child("jsonPatchOverrides");
    for (i, patch) in patches.iter().enumerate() {
        json_patch(patch, &patches_path.index(i), errors);
    }
}

/// Whether `path` is `prefix` or below it.
fn within(path: &str, prefix: &str) -> bool {
    path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

fn json_patch(patch: &Value, path: &Path, errors: &mut Vec<FieldError>) {
    let patch = Some(patch);
    let target = string(patch, "path").unwrap_or_default();
    let problem = if within(target, "/kind") {
        Some("cannot override typeMeta field kind")
    } else if within(target, "/apiVersion") {
        Some("cannot override typeMeta field apiVersion")
    } else if within(target, "/status") {
        Some("cannot override status fields")
    } else if within(target, "/metadata")
        && !within(target, "/metadata/annotations")
        && !within(target, "/metadata/labels")
    {
        Some("cannot override metadata fields except annotations and labels")
    } else if target.contains("//") {
        Some("path cannot contain empty segments")
    } else if target.ends_with('/') {
        Some("path cannot have a trailing slash")
    } else {
        None
    };
    if let Some(problem) = problem {
        errors.push(FieldError::invalid(
            path.child("path"),
            json!(target),
            problem,
        ));
    }
    if string(patch, "op") == Some("remove") && is_set(patch, "value") {
        errors.push(FieldError::forbidden(
            path.child("value"),
            "remove operation cannot have a value",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(errors: Vec<FieldError>) -> Vec<String> {
        errors.iter().map(FieldError::message).collect()
    }

    fn cro(rules: Value) -> Value {
        json!({"spec": {
            "clusterResourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "app"}],
            "policy": {"overrideRules": rules}
        }})
    }

    #[test]
    fn rules_table() {
        let ok = json!([{
            "clusterSelector": {"clusterSelectorTerms": [{"labelSelector": {"matchLabels": {"env": "prod"}}}]},
            "jsonPatchOverrides": [{"op": "replace", "path": "/metadata/labels/owner", "value": "${MEMBER-CLUSTER-NAME}"}]
        }, {"overrideType": "Delete"}]);
        assert_eq!(
            messages(validate_cluster(&cro(ok), None)),
            Vec::<String>::new()
        );
        let cases = [
            (
                json!([{"overrideType": "Delete", "jsonPatchOverrides": [{"op": "remove", "path": "/spec"}]}]),
                "spec.policy.overrideRules[0].jsonPatchOverrides: Forbidden: jsonPatchOverrides must be empty when overrideType is Delete",
            ),
            (
                json!([{}]),
                "spec.policy.overrideRules[0].jsonPatchOverrides: Required value: jsonPatchOverrides must not be empty when overrideType is JSONPatch",
            ),
            (
                json!([{"jsonPatchOverrides": [{"op": "replace", "path": "/kind", "value": "X"}]}]),
                "spec.policy.overrideRules[0].jsonPatchOverrides[0].path: Invalid value: \"/kind\": cannot override typeMeta field kind",
            ),
            (
                json!([{"jsonPatchOverrides": [{"op": "add", "path": "/metadata/name", "value": "x"}]}]),
                "spec.policy.overrideRules[0].jsonPatchOverrides[0].path: Invalid value: \"/metadata/name\": cannot override metadata fields except annotations and labels",
            ),
            (
                json!([{"jsonPatchOverrides": [{"op": "remove", "path": "/spec/x", "value": 1}]}]),
                "spec.policy.overrideRules[0].jsonPatchOverrides[0].value: Forbidden: remove operation cannot have a value",
            ),
            (
                json!([{"jsonPatchOverrides": [{"op": "add", "path": "/spec//x", "value": 1}]}]),
                "spec.policy.overrideRules[0].jsonPatchOverrides[0].path: Invalid value: \"/spec//x\": path cannot contain empty segments",
            ),
            (
                json!([{"clusterSelector": {"clusterSelectorTerms": [{"propertySelector": {"matchExpressions": []}}]}, "overrideType": "Delete"}]),
                "spec.policy.overrideRules[0].clusterSelector.clusterSelectorTerms[0].propertySelector: Forbidden: only labelSelector is supported in override clusterSelector",
            ),
        ];
        for (rules, want) in cases {
            let got = messages(validate_cluster(&cro(rules), None));
            assert!(got.iter().any(|m| m == want), "want {want}\ngot {got:?}");
        }
        assert!(within("/metadata/labels/x", "/metadata/labels"));
        assert!(!within("/statusx", "/status"));
    }

    #[test]
    fn selectors_and_placement() {
        let mut bad = cro(json!([{"overrideType": "Delete"}]));
        bad["spec"]["clusterResourceSelectors"] = json!([
            {"group": "", "version": "v1", "kind": "Namespace", "labelSelector": {}},
            {"group": "", "version": "v1", "kind": "Namespace", "name": "a"},
            {"group": "", "version": "v1", "kind": "Namespace", "name": "a"}
        ]);
        bad["spec"]["placement"] = json!({"name": "crp", "scope": "Namespaced"});
        let got = messages(validate_cluster(&bad, None));
        assert_eq!(got.len(), 4, "{got:?}");
        let old = cro(json!([{"overrideType": "Delete"}]));
        let mut new = old.clone();
        new["spec"]["placement"] = json!({"name": "other"});
        assert_eq!(
            messages(validate_namespaced(&new, Some(&old))),
            ["spec.placement: Invalid value: {\"name\":\"other\"}: field is immutable"]
        );
    }

    /// A ResourceOverride may belong to a ResourcePlacement of its namespace (scope
    /// `Namespaced`) as well as to a ClusterResourcePlacement.
    #[test]
    fn resource_override_references_either_scope() {
        for scope in ["Cluster", "Namespaced"] {
            let ro = json!({"spec": {
                "placement": {"name": "web", "scope": scope},
                "resourceSelectors": [{"group": "apps", "version": "v1", "kind": "Deployment", "name": "web"}],
                "policy": {"overrideRules": [{"overrideType": "Delete"}]}
            }});
            assert_eq!(
                messages(validate_namespaced(&ro, None)),
                Vec::<String>::new(),
                "{scope}"
            );
        }
    }
}
