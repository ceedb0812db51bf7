use super::*;
use flotilla_apimachinery::patch::{BuiltinStrategy, merge_patch};
use proptest::prelude::*;
use serde_json::json;

use ComparisonOption::{FullComparison as Full, PartialComparison as Partial};

fn diff(comparison: ComparisonOption, desired: &Value, live: &Value) -> Vec<PatchDetail> {
    differences(comparison, desired, live, &BuiltinStrategy)
}

fn detail(path: &str, member: Option<&str>, hub: Option<&str>) -> PatchDetail {
    PatchDetail {
        path: path.to_owned(),
        value_in_member: member.map(str::to_owned),
        value_in_hub: hub.map(str::to_owned),
    }
}

fn manifest() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}, "creationTimestamp": null},
                "spec": {"containers": [
                    {"name": "web", "image": "nginx:1.27", "args": ["-a", "-b"],
                     "resources": {"requests": {"cpu": "1000m", "memory": "1Gi"}, "limits": {"cpu": 2}}},
                    {"name": "log", "image": "busybox"}
                ]}
            }
        }
    })
}

/// The manifest as the member stores it: defaulted, with status and member bookkeeping.
fn live() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {
            "name": "web", "namespace": "shop", "uid": "u", "resourceVersion": "9", "generation": 2,
            "labels": {"app": "web", "team": "blue"},
            "annotations": {"deployment.kubernetes.io/revision": "2",
                            "kubernetes-fleet.io/spec-hash": "abc"},
            "ownerReferences": [{"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
                                 "kind": "AppliedWork", "name": "w", "uid": "a"}],
            "managedFields": [{"manager": "work-api-agent"}]
        },
        "spec": {
            "replicas": 3,
            "progressDeadlineSeconds": 600,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "dnsPolicy": "ClusterFirst",
                    "containers": [
                        {"name": "log", "image": "busybox", "imagePullPolicy": "Always"},
                        {"name": "web", "image": "nginx:1.27", "args": ["-a", "-b"],
                         "imagePullPolicy": "IfNotPresent",
                         "resources": {"requests": {"cpu": "1", "memory": "1073741824"},
                                       "limits": {"cpu": "2"}}},
                        {"name": "mesh-proxy", "image": "envoy"}
                    ]
                }
            }
        },
        "status": {"replicas": 3, "availableReplicas": 3}
    })
}

#[test]
fn partial_ignores_defaults_member_additions_order_and_bookkeeping() {
    assert_eq!(diff(Partial, &manifest(), &live()), vec![]);
}

#[test]
fn partial_reports_changed_fields_at_member_positions() {
    let mut live = live();
    live["spec"]["replicas"] = json!(5);
    live["spec"]["template"]["spec"]["containers"][1]["image"] = json!("nginx:1.26");
    live["spec"]["template"]["spec"]["containers"][1]["args"] = json!(["-a"]);
    live["metadata"]["labels"]["app"] = json!("api");
    assert_eq!(
        diff(Partial, &manifest(), &live),
        vec![
            detail("/metadata/labels/app", Some("api"), Some("web")),
            detail("/spec/replicas", Some("5"), Some("3")),
            detail(
                "/spec/template/spec/containers/1/image",
                Some("nginx:1.26"),
                Some("nginx:1.27")
            ),
            detail("/spec/template/spec/containers/1/args/1", None, Some("-b")),
        ]
    );
}

#[test]
fn partial_reports_missing_keyed_elements_where_a_merge_would_append_them() {
    let mut live = live();
    let containers = live["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .unwrap();
    containers.remove(0);
    assert_eq!(
        diff(Partial, &manifest(), &live),
        vec![detail(
            "/spec/template/spec/containers/2",
            None,
            Some(r#"{"name":"log","image":"busybox"}"#)
        )]
    );
}

#[test]
fn partial_set_lists_need_the_manifest_values() {
    let desired =
        json!({"kind": "Pod", "spec": {"template": {"metadata": {"finalizers": ["a", "b"]}}}});
    let live =
        json!({"kind": "Pod", "spec": {"template": {"metadata": {"finalizers": ["c", "a"]}}}});
    assert_eq!(
        diff(Partial, &desired, &live),
        vec![detail(
            "/spec/template/metadata/finalizers/2",
            None,
            Some("b")
        )]
    );
}

#[test]
fn partial_null_means_absent() {
    let desired = json!({"kind": "ConfigMap", "data": {"gone": null, "also": null}});
    let live = json!({"kind": "ConfigMap", "data": {"gone": "still here"}});
    assert_eq!(
        diff(Partial, &desired, &live),
        vec![detail("/data/gone", Some("still here"), None)]
    );
}

#[test]
fn quantities_compare_by_value_only_in_quantity_maps() {
    let desired = json!({"kind": "ResourceQuota", "spec": {"hard": {"cpu": "1000m", "pods": 10}},
                         "data": {"cpu": "1000m"}});
    let live = json!({"kind": "ResourceQuota", "spec": {"hard": {"cpu": "1", "pods": "10"}},
                      "data": {"cpu": "1"}});
    for comparison in [Partial, Full] {
        assert_eq!(
            diff(comparison, &desired, &live),
            vec![detail("/data/cpu", Some("1"), Some("1000m"))]
        );
    }
}

#[test]
fn full_reports_everything_the_member_adds_except_bookkeeping() {
    let details = diff(Full, &manifest(), &live());
    let paths: Vec<&str> = details.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(
        paths,
        vec![
            "/metadata/labels/team",
            "/spec/template/spec/containers/0/name",
            "/spec/template/spec/containers/0/image",
            "/spec/template/spec/containers/0/args",
            "/spec/template/spec/containers/0/resources",
            "/spec/template/spec/containers/0/imagePullPolicy",
            "/spec/template/spec/containers/1/name",
            "/spec/template/spec/containers/1/image",
            "/spec/template/spec/containers/1/args",
            "/spec/template/spec/containers/1/imagePullPolicy",
            "/spec/template/spec/containers/1/resources",
            "/spec/template/spec/containers/2",
            "/spec/template/spec/dnsPolicy",
            "/spec/progressDeadlineSeconds",
            "/spec/strategy",
        ]
    );
    assert_eq!(
        details[0],
        detail("/metadata/labels/team", Some("blue"), None)
    );
    assert_eq!(
        details[4],
        detail(
            "/spec/template/spec/containers/0/resources",
            None,
            Some(r#"{"requests":{"cpu":"1000m","memory":"1Gi"},"limits":{"cpu":2}}"#)
        )
    );
    assert_eq!(
        details[14],
        detail("/spec/strategy", Some(r#"{"type":"RollingUpdate"}"#), None)
    );
}

#[test]
fn empty_values_numbers_and_escaping() {
    let desired = json!({"kind": "X", "metadata": {"annotations": {"example.com/team": "a"}},
                         "spec": {"n": 3, "empty": {}, "none": [], "ratio": 0.5}});
    let live = json!({"kind": "X", "metadata": {"annotations": {"example.com/team": "b"}},
                      "spec": {"n": 3.0, "ratio": 0.25}});
    for comparison in [Partial, Full] {
        assert_eq!(
            diff(comparison, &desired, &live),
            vec![
                detail(
                    "/metadata/annotations/example.com~1team",
                    Some("b"),
                    Some("a")
                ),
                detail("/spec/ratio", Some("0.25"), Some("0.5")),
            ]
        );
    }
}

#[test]
fn caps_the_details() {
    let data: serde_json::Map<String, Value> = (0..150)
        .map(|i| (format!("k{i:03}"), json!("hub")))
        .collect();
    let desired = json!({"kind": "ConfigMap", "data": data});
    let live = json!({"kind": "ConfigMap", "data": {}});
    for comparison in [Partial, Full] {
        let details = diff(comparison, &desired, &live);
        assert_eq!(details.len(), MAX_DETAILS);
        assert_eq!(details[0].path, "/data/k000");
        assert_eq!(details[99].path, "/data/k099");
    }
}

/// Arbitrary JSON objects over a small key alphabet (so that keys collide), without the
/// fields the comparable view drops and without list names that merge by key.
fn object() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..3).prop_map(Value::from),
        "[xy]{0,2}".prop_map(Value::from),
    ];
    let value = leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::btree_map("[a-d]", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    prop::collection::btree_map("[a-d]", value, 0..4)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

proptest! {
    #[test]
    fn an_object_never_differs_from_itself(a in object()) {
        prop_assert_eq!(diff(Partial, &a, &a), vec![]);
        prop_assert_eq!(diff(Full, &a, &a), vec![]);
    }

    #[test]
    fn applying_a_manifest_leaves_no_partial_drift(live in object(), desired in object()) {
        let applied = merge_patch(&live, &desired);
        prop_assert_eq!(diff(Partial, &desired, &applied), vec![]);
    }

    #[test]
    fn full_is_symmetric_and_stricter_than_partial(a in object(), b in object()) {
        let forward = diff(Full, &a, &b);
        let mut backward: Vec<PatchDetail> = diff(Full, &b, &a)
            .into_iter()
            .map(|d| PatchDetail {
                path: d.path,
                value_in_member: d.value_in_hub,
                value_in_hub: d.value_in_member,
            })
            .collect();
        let mut sorted = forward.clone();
        sorted.sort_by(|x, y| x.path.cmp(&y.path));
        backward.sort_by(|x, y| x.path.cmp(&y.path));
        prop_assert_eq!(sorted, backward);
        if forward.is_empty() {
            prop_assert_eq!(diff(Partial, &a, &b), vec![]);
        }
        prop_assert!(forward.len() <= MAX_DETAILS);
    }
}
