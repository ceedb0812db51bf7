//! Rules of `ClusterResourcePlacementEviction` and `ClusterResourcePlacementDisruptionBudget`
//! that their schemas cannot express (KubeFleet's CEL rules): an eviction's spec never changes,
//! and a budget sets at most one of its two fields, each an integer of at least 0 (the
//! percentage form is the schema's `pattern`).

use flotilla_apimachinery::FieldError;
use serde_json::Value;

use super::common::{field, immutable};
use super::path::Path;

/// Validates a `ClusterResourcePlacementEviction`: `placementName` and `clusterName` are
/// immutable.
pub(crate) fn validate_eviction(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(old) = old {
        let spec = Path::new("spec");
        for name in ["placementName", "clusterName"] {
            immutable(
                &spec.child(name),
                field(new.get("spec"), name),
                field(old.get("spec"), name),
                &mut errors,
            );
        }
    }
    errors
}

/// Validates a `ClusterResourcePlacementDisruptionBudget`.
pub(crate) fn validate_budget(new: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = new.get("spec");
    let path = Path::new("spec");
    for name in ["maxUnavailable", "minAvailable"] {
        if let Some(value) = field(spec, name)
            && value.as_i64().is_some_and(|n| n < 0)
        {
            errors.push(FieldError::invalid(
                path.child(name),
                value.clone(),
                "must be greater than or equal to 0",
            ));
        }
    }
    if field(spec, "maxUnavailable").is_some() && field(spec, "minAvailable").is_some() {
        errors.push(FieldError::forbidden(
            path.child("minAvailable"),
            "may not be set together with maxUnavailable",
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(errors: Vec<FieldError>) -> Vec<String> {
        errors.iter().map(FieldError::message).collect()
    }

    #[test]
    fn eviction_spec_is_immutable() {
        let old = json!({"spec": {"placementName": "crp", "clusterName": "member-1"}});
        assert_eq!(
            messages(validate_eviction(&old, None)),
            Vec::<String>::new()
        );
        assert_eq!(
            messages(validate_eviction(&old, Some(&old))),
            Vec::<String>::new()
        );
        let new = json!({"spec": {"placementName": "other", "clusterName": "member-2"}});
        assert_eq!(
            messages(validate_eviction(&new, Some(&old))),
            [
                "spec.placementName: Invalid value: \"other\": field is immutable",
                "spec.clusterName: Invalid value: \"member-2\": field is immutable",
            ]
        );
    }

    #[test]
    fn budget_table() {
        let cases = [
            (json!({"maxUnavailable": 1}), vec![]),
            (json!({"minAvailable": "50%"}), vec![]),
            (json!({}), vec![]),
            (json!({"maxUnavailable": 0}), vec![]),
            (
                json!({"maxUnavailable": -1}),
                vec!["spec.maxUnavailable: Invalid value: -1: must be greater than or equal to 0"],
            ),
            (
                json!({"minAvailable": -2}),
                vec!["spec.minAvailable: Invalid value: -2: must be greater than or equal to 0"],
            ),
            (
                json!({"maxUnavailable": 1, "minAvailable": "10%"}),
                vec!["spec.minAvailable: Forbidden: may not be set together with maxUnavailable"],
            ),
        ];
        for (spec, want) in cases {
            let got = messages(validate_budget(&json!({ "spec": spec })));
            assert_eq!(got, want, "{spec}");
        }
    }
}
