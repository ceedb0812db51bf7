//! Which override snapshots apply to a placement, and to one of its clusters.

use flotilla_api::placement::status::NamespacedName;
use flotilla_api::placement::{ClusterResourceOverrideSnapshot, ResourceOverrideSnapshot};
use flotilla_placement::overrides::{ApplicableOverrides, ClusterOverrides};
use flotilla_placement::placement_key::PlacementKey;
use serde_json::{Value, json};

use crate::fixtures::{
    PLACEMENT, config_map, cro, cro_at, cro_spec, delete_rule, deployment, example_cro, example_ro,
    member, namespace, on, patch_rule, ro, ro_spec, secret_reader,
};

fn names(overrides: &ApplicableOverrides<'_>) -> (Vec<String>, Vec<String>) {
    let cluster = overrides
        .cluster_resource_overrides()
        .iter()
        .map(|s| s.metadata.name.clone().unwrap())
        .collect();
    let namespaced = overrides
        .resource_overrides()
        .iter()
        .map(|s| {
            format!(
                "{}/{}",
                s.metadata.namespace.as_deref().unwrap(),
                s.metadata.name.as_deref().unwrap()
            )
        })
        .collect();
    (cluster, namespaced)
}

fn select(
    selected: &[Value],
    cros: &[ClusterResourceOverrideSnapshot],
    ros: &[ResourceOverrideSnapshot],
) -> (Vec<String>, Vec<String>) {
    names(&ApplicableOverrides::select(
        &PlacementKey::cluster(PLACEMENT),
        selected,
        cros,
        ros,
    ))
}

fn namespace_cro(
    name: &str,
    ns: &str,
    placement: Option<Value>,
) -> ClusterResourceOverrideSnapshot {
    let mut spec = cro_spec(
        json!([{"group": "", "version": "v1", "kind": "Namespace", "name": ns}]),
        json!([delete_rule(json!({"clusterSelectorTerms": []}))]),
    );
    if let Some(placement) = placement {
        spec["placement"] = placement;
    }
    cro(name, spec)
}

fn deployment_ro(ns: &str, name: &str, target: &str) -> ResourceOverrideSnapshot {
    ro(
        ns,
        name,
        ro_spec(
            json!([{"group": "apps", "version": "v1", "kind": "Deployment", "name": target}]),
            json!([delete_rule(json!({"clusterSelectorTerms": []}))]),
        ),
    )
}

#[test]
fn examples_apply_to_the_placement_selecting_their_resources() {
    let cros = [example_cro()];
    let ros = [example_ro()];
    let selected = [
        secret_reader(),
        namespace("test-namespace"),
        deployment("test-namespace", "test-nginx"),
    ];
    assert_eq!(
        select(&selected, &cros, &ros),
        (
            vec!["example-cro-0".to_string()],
            vec!["test-namespace/example-ro-0".to_string()]
        )
    );
    // Another placement: both examples name crp-example.
    let other =
        ApplicableOverrides::select(&PlacementKey::cluster("other"), &selected, &cros, &ros);
    assert_eq!(names(&other), (vec![], vec![]));
    // Nothing the overrides select.
    assert_eq!(
        select(&[namespace("unrelated")], &cros, &ros),
        (vec![], vec![])
    );
}

#[test]
fn cluster_resource_override_selection_table() {
    let ns = |placement: Option<Value>| namespace_cro("ns-cro", "app", placement);
    // (selected manifests, snapshot, applies)
    let cases: Vec<(Vec<Value>, ClusterResourceOverrideSnapshot, bool)> = vec![
        // A namespace selector matches the namespace object...
        (vec![namespace("app")], ns(None), true),
        // ...and, through it, anything selected inside the namespace.
        (vec![config_map("app", "settings")], ns(None), true),
        (vec![config_map("other", "settings")], ns(None), false),
        (vec![namespace("other")], ns(None), false),
        // The placement reference: unset, this placement, another, a namespaced placement.
        (
            vec![namespace("app")],
            ns(Some(json!({"name": PLACEMENT}))),
            true,
        ),
        (
            vec![namespace("app")],
            ns(Some(json!({"name": PLACEMENT, "scope": "Cluster"}))),
            true,
        ),
        (
            vec![namespace("app")],
            ns(Some(json!({"name": "other"}))),
            false,
        ),
        (
            vec![namespace("app")],
            ns(Some(json!({"name": PLACEMENT, "scope": "Namespaced"}))),
            false,
        ),
        // Only the latest snapshot counts.
        (
            vec![namespace("app")],
            cro_at(
                "old",
                3,
                false,
                cro_spec(
                    json!([{"group": "", "version": "v1", "kind": "Namespace", "name": "app"}]),
                    json!([delete_rule(json!({"clusterSelectorTerms": []}))]),
                ),
            ),
            false,
        ),
        // Group, version, kind and name must all match.
        (vec![secret_reader()], example_cro(), true),
        (
            vec![
                json!({"apiVersion": "rbac.authorization.k8s.io/v1beta1", "kind": "ClusterRole", "metadata": {"name": "secret-reader"}}),
            ],
            example_cro(),
            false,
        ),
        (
            vec![
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "admin"}}),
            ],
            example_cro(),
            false,
        ),
        (
            vec![
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "secret-reader"}}),
            ],
            example_cro(),
            false,
        ),
        // A namespaced resource is selected only through its namespace, never by its own name.
        (
            vec![deployment("app", "web")],
            cro(
                "by-name",
                cro_spec(
                    json!([{"group": "apps", "version": "v1", "kind": "Deployment", "name": "web"}]),
                    json!([delete_rule(json!({"clusterSelectorTerms": []}))]),
                ),
            ),
            false,
        ),
    ];
    for (i, (selected, snapshot, applies)) in cases.into_iter().enumerate() {
        let expected: Vec<String> = if applies {
            vec![snapshot.metadata.name.clone().unwrap()]
        } else {
            vec![]
        };
        assert_eq!(select(&selected, &[snapshot], &[]).0, expected, "case {i}");
    }
}

#[test]
fn resource_override_selection_table() {
    // (selected manifests, snapshot, applies)
    let cases = [
        (
            vec![deployment("app", "web")],
            deployment_ro("app", "ro", "web"),
            true,
        ),
        // Another namespace, another name, another kind.
        (
            vec![deployment("other", "web")],
            deployment_ro("app", "ro", "web"),
            false,
        ),
        (
            vec![deployment("app", "api")],
            deployment_ro("app", "ro", "web"),
            false,
        ),
        (
            vec![config_map("app", "web")],
            deployment_ro("app", "ro", "web"),
            false,
        ),
        // Selecting the namespace does not bring a ResourceOverride in.
        (
            vec![namespace("app")],
            deployment_ro("app", "ro", "web"),
            false,
        ),
    ];
    for (i, (selected, snapshot, applies)) in cases.into_iter().enumerate() {
        let expected: Vec<String> = if applies {
            vec!["app/ro-0".to_string()]
        } else {
            vec![]
        };
        assert_eq!(select(&selected, &[], &[snapshot]).1, expected, "case {i}");
    }
}

#[test]
fn placement_references_tell_resource_placements_from_cluster_ones() {
    let rp = PlacementKey::namespaced("app", "web");
    let other_rp = PlacementKey::namespaced("app", "api");
    let crp = PlacementKey::cluster("web");
    let referencing = |placement: Option<Value>| {
        let mut snapshot = deployment_ro("app", "ro", "web");
        snapshot.spec.override_spec.placement =
            placement.map(|p| serde_json::from_value(p).unwrap());
        snapshot
    };
    let namespaced = Some(json!({"name": "web", "scope": "Namespaced"}));
    let cluster = Some(json!({"name": "web", "scope": "Cluster"}));
    // (ResourceOverride, placement, applies)
    let cases = [
        (referencing(namespaced.clone()), &rp, true),
        (referencing(namespaced.clone()), &other_rp, false),
        (referencing(namespaced), &crp, false),
        (referencing(cluster.clone()), &rp, false),
        (referencing(cluster), &crp, true),
        (referencing(None), &rp, true),
        (referencing(None), &crp, true),
    ];
    let selected = [deployment("app", "web")];
    for (i, (snapshot, placement, applies)) in cases.into_iter().enumerate() {
        let ros = [snapshot];
        let found = names(&ApplicableOverrides::select(
            placement,
            &selected,
            &[],
            &ros,
        ))
        .1;
        assert_eq!(found.len(), usize::from(applies), "case {i}: {found:?}");
    }
    // A ClusterResourceOverride selecting the namespace reaches a ResourcePlacement's
    // resources unless it names a (cluster) placement.
    let cros = [
        namespace_cro("any", "app", None),
        namespace_cro("named", "app", Some(json!({"name": "web"}))),
    ];
    let found = names(&ApplicableOverrides::select(&rp, &selected, &cros, &[])).0;
    assert_eq!(found, ["any-0"]);
}

#[test]
fn overrides_are_ordered_by_name_and_namespace() {
    let cros = [
        namespace_cro("zeta", "app", None),
        namespace_cro("alpha", "app", None),
    ];
    let ros = [
        deployment_ro("b-ns", "first", "web"),
        deployment_ro("a-ns", "second", "web"),
        deployment_ro("a-ns", "first", "web"),
    ];
    let selected = [
        namespace("app"),
        deployment("a-ns", "web"),
        deployment("b-ns", "web"),
    ];
    assert_eq!(
        select(&selected, &cros, &ros),
        (
            vec!["alpha-0".to_string(), "zeta-0".to_string()],
            vec![
                "a-ns/first-0".to_string(),
                "a-ns/second-0".to_string(),
                "b-ns/first-0".to_string()
            ]
        )
    );
}

#[test]
fn a_cluster_records_the_overrides_with_a_rule_for_it() {
    let absent = cro(
        "absent",
        cro_spec(
            json!([{"group": "", "version": "v1", "kind": "Namespace", "name": "app"}]),
            json!([{"jsonPatchOverrides": [{"op": "add", "path": "/metadata/labels/x", "value": "y"}]}]),
        ),
    );
    let everyone = cro(
        "everyone",
        cro_spec(
            json!([{"group": "", "version": "v1", "kind": "Namespace", "name": "app"}]),
            json!([patch_rule(
                json!({"clusterSelectorTerms": []}),
                json!([{"op": "add", "path": "/metadata/labels/x", "value": "y"}])
            )]),
        ),
    );
    let cros = [example_cro(), absent, everyone];
    let ros = [example_ro()];
    let selected = [
        secret_reader(),
        namespace("app"),
        deployment("test-namespace", "test-nginx"),
    ];
    let applicable =
        ApplicableOverrides::select(&PlacementKey::cluster(PLACEMENT), &selected, &cros, &ros);
    let ro_name = NamespacedName {
        name: "example-ro-0".into(),
        namespace: "test-namespace".into(),
    };
    let cases = [
        (
            member("prod-1", &[("env", "prod")]),
            vec!["everyone-0", "example-cro-0"],
            vec![ro_name.clone()],
        ),
        (
            member("east-1", &[("region", "east")]),
            vec!["everyone-0"],
            vec![ro_name.clone()],
        ),
        (
            member("dev-1", &[("env", "dev")]),
            vec!["everyone-0"],
            vec![],
        ),
    ];
    for (cluster, cluster_resource_overrides, resource_overrides) in cases {
        assert_eq!(
            applicable.for_cluster(cluster.view()),
            Ok(ClusterOverrides {
                cluster_resource_overrides: cluster_resource_overrides
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                resource_overrides,
            })
        );
    }
}

#[test]
fn an_invalid_cluster_selector_is_an_error() {
    let bad = cro(
        "bad",
        cro_spec(
            json!([{"group": "", "version": "v1", "kind": "Namespace", "name": "app"}]),
            json!([
                delete_rule(on("env", "prod")),
                delete_rule(
                    json!({"clusterSelectorTerms": [{"labelSelector": {"matchExpressions": [{"key": "env", "operator": "In", "values": []}]}}]})
                )
            ]),
        ),
    );
    let cros = [bad];
    let applicable = ApplicableOverrides::select(
        &PlacementKey::cluster(PLACEMENT),
        &[namespace("app")],
        &cros,
        &[],
    );
    let error = applicable
        .for_cluster(member("dev-1", &[("env", "dev")]).view())
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "ClusterResourceOverrideSnapshot \"bad-0\" rule 1 failed: invalid cluster selector: matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
    );
}
