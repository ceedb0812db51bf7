//! Every YAML example of the seed documents (001 and 004), kept in `examples/`, and
//! KubeFleet-style examples of the kinds the seeds do not show (overrides, evictions,
//! disruption budgets, the namespaced ResourcePlacement and an override of one): each must deserialize into the Rust types without losing a field,
//! satisfy its CRD schema under strict field validation, and pass `validate`.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::schema_check::violations;
use crate::placement::{
    ClusterApprovalRequest, ClusterResourceOverride, ClusterResourcePlacement,
    ClusterResourcePlacementDisruptionBudget, ClusterResourcePlacementEviction,
    ClusterStagedUpdateRun, ClusterStagedUpdateStrategy, ResourceOverride, ResourcePlacement,
};
use crate::{fleet_crds, validate};

macro_rules! example {
    ($file:literal) => {
        (
            $file,
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../examples/",
                $file
            )),
        )
    };
}

/// Examples that live beside the tests: seed documents that show objects as the server reports
/// them (with controller-written status), and KubeFleet-style input for kinds the seed
/// documents have no example of.
macro_rules! fixture {
    ($file:literal) => {
        ($file, include_str!(concat!("fixtures/", $file)))
    };
}

const EXAMPLES: &[(&str, &str)] = &[
    example!("crp-pickall-property-selector.yaml"),
    example!("crp-pickall-label-and-property-selector.yaml"),
    example!("crp-pickn-metric-sorter.yaml"),
    example!("crp-pickn-label-and-metric-sorter.yaml"),
    example!("crp-pickn-available-cpu.yaml"),
    example!("crp-pickn-cpu-cost.yaml"),
    example!("crp-rolling-update.yaml"),
    example!("crp-staged-update.yaml"),
    example!("staged-update-strategy.yaml"),
    example!("staged-update-run.yaml"),
    example!("rp-app.yaml"),
    fixture!("staged-update-run-status.yaml"),
    fixture!("cluster-approval-request.yaml"),
    fixture!("cluster-resource-override.yaml"),
    fixture!("resource-override.yaml"),
    fixture!("resource-override-of-rp.yaml"),
    fixture!("cluster-resource-placement-eviction.yaml"),
    fixture!("disruption-budget-min-available.yaml"),
    fixture!("disruption-budget-max-unavailable.yaml"),
];

/// Deserializes into `T` and back: the result must equal the input, so no field was unknown
/// to the Rust types or changed on the way. The types are the v1beta1 (storage) shape, which
/// v1 shares, so they always write `apiVersion` v1beta1.
fn round_trip<T: Serialize + DeserializeOwned>(file: &str, object: &Value) {
    let typed: T = serde_json::from_value(object.clone()).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut back = serde_json::to_value(&typed).expect("serializes");
    assert_eq!(
        back["apiVersion"], "placement.kubernetes-fleet.io/v1beta1",
        "{file}"
    );
    back["apiVersion"] = object["apiVersion"].clone();
    assert_eq!(
        &back, object,
        "{file}: the typed round trip changed the object"
    );
}

#[test]
fn seed_examples_apply_unchanged() {
    let crds = fleet_crds();
    for (file, yaml) in EXAMPLES {
        let object: Value = serde_saphyr::from_str(yaml).unwrap_or_else(|e| panic!("{file}: {e}"));
        let (group, version) = object["apiVersion"]
            .as_str()
            .unwrap()
            .split_once('/')
            .unwrap();
        let kind = object["kind"].as_str().unwrap();

        match kind {
            "ClusterResourcePlacement" => round_trip::<ClusterResourcePlacement>(file, &object),
            "ResourcePlacement" => round_trip::<ResourcePlacement>(file, &object),
            "ClusterStagedUpdateStrategy" => {
                round_trip::<ClusterStagedUpdateStrategy>(file, &object)
            }
            "ClusterStagedUpdateRun" => round_trip::<ClusterStagedUpdateRun>(file, &object),
            "ClusterApprovalRequest" => round_trip::<ClusterApprovalRequest>(file, &object),
            "ClusterResourceOverride" => round_trip::<ClusterResourceOverride>(file, &object),
            "ResourceOverride" => round_trip::<ResourceOverride>(file, &object),
            "ClusterResourcePlacementEviction" => {
                round_trip::<ClusterResourcePlacementEviction>(file, &object)
            }
            "ClusterResourcePlacementDisruptionBudget" => {
                round_trip::<ClusterResourcePlacementDisruptionBudget>(file, &object)
            }
            other => panic!("{file}: unexpected kind {other}"),
        }

        let crd = crds
            .iter()
            .find(|c| c.spec.group == group && c.spec.names.kind == kind)
            .unwrap_or_else(|| panic!("{file}: no CRD for {kind}"));
        let served = crd
            .spec
            .versions
            .iter()
            .find(|v| v.name == version)
            .expect("version is served");
        let schema =
            serde_json::to_value(&served.schema.as_ref().unwrap().open_api_v3_schema).unwrap();
        assert_eq!(
            violations(&schema, &object),
            Vec::<String>::new(),
            "{file}: schema violations"
        );

        let errors: Vec<String> = validate(group, kind, &object, None, super::served())
            .iter()
            .map(|e| e.message())
            .collect();
        assert_eq!(errors, Vec::<String>::new(), "{file}: validation errors");
        // Applying the same object again (an update without changes) is valid too.
        let errors: Vec<String> = validate(group, kind, &object, Some(&object), super::served())
            .iter()
            .map(|e| e.message())
            .collect();
        assert_eq!(
            errors,
            Vec::<String>::new(),
            "{file}: update validation errors"
        );
    }
}

#[test]
fn metric_sorter_is_an_alias_of_property_sorter() {
    let (_, yaml) = example!("crp-pickn-metric-sorter.yaml");
    let crp: ClusterResourcePlacement = serde_saphyr::from_str(yaml).unwrap();
    let affinity = crp
        .spec
        .policy
        .unwrap()
        .affinity
        .unwrap()
        .cluster_affinity
        .unwrap();
    let preferred = affinity
        .preferred_during_scheduling_ignored_during_execution
        .unwrap();
    let sorter = preferred[0]
        .preference
        .property_sorter()
        .expect("sorter through the alias");
    assert_eq!(sorter.name, "kubernetes.azure.com/node-count");
}
