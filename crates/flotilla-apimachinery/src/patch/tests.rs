use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn smp(target: Value, patch: Value) -> Value {
    strategic_merge_patch(&target, &patch, &BuiltinStrategy).expect("patch applies")
}

// ---- RFC 7386 -------------------------------------------------------------------------------

#[test]
fn merge_patch_rfc7386_appendix_a() {
    let cases = [
        (json!({"a":"b"}), json!({"a":"c"}), json!({"a":"c"})),
        (json!({"a":"b"}), json!({"b":"c"}), json!({"a":"b","b":"c"})),
        (json!({"a":"b"}), json!({"a":null}), json!({})),
        (
            json!({"a":"b","b":"c"}),
            json!({"a":null}),
            json!({"b":"c"}),
        ),
        (json!({"a":["b"]}), json!({"a":"c"}), json!({"a":"c"})),
        (json!({"a":"c"}), json!({"a":["b"]}), json!({"a":["b"]})),
        (
            json!({"a":{"b":"c"}}),
            json!({"a":{"b":"d","c":null}}),
            json!({"a":{"b":"d"}}),
        ),
        (json!({"a":[{"b":"c"}]}), json!({"a":[1]}), json!({"a":[1]})),
        (json!(["a", "b"]), json!(["c", "d"]), json!(["c", "d"])),
        (json!({"a":"b"}), json!(["c"]), json!(["c"])),
        (json!({"a":"foo"}), json!(null), json!(null)),
        (json!({"a":"foo"}), json!("bar"), json!("bar")),
        (json!({"e":null}), json!({"a":1}), json!({"e":null,"a":1})),
        (json!([1, 2]), json!({"a":"b","c":null}), json!({"a":"b"})),
        (
            json!({}),
            json!({"a":{"bb":{"ccc":null}}}),
            json!({"a":{"bb":{}}}),
        ),
    ];
    for (target, patch, expected) in cases {
        assert_eq!(merge_patch(&target, &patch), expected, "{target} + {patch}");
    }
}

#[test]
fn merge_patch_deletion_keeps_key_order() {
    let patched = merge_patch(&json!({"a":1,"b":2,"c":3}), &json!({"a":null}));
    let keys: Vec<&String> = patched.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["b", "c"]);
}

/// RFC 7386's pseudo-code as written (copy the target, then merge each patched key), keeping
/// the target's key order: the oracle `merge_patch`'s single walk must agree with, key order
/// included.
fn rfc7386(target: &Value, patch: &Value) -> Value {
    let Value::Object(patch) = patch else {
        return patch.clone();
    };
    let mut result = target.as_object().cloned().unwrap_or_default();
    for (key, value) in patch {
        if value.is_null() {
            result.shift_remove(key);
        } else {
            let merged = rfc7386(result.get(key).unwrap_or(&Value::Null), value);
            result.insert(key.clone(), merged);
        }
    }
    Value::Object(result)
}

fn arb_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-5i64..5).prop_map(Value::from),
        "[a-c]{0,2}".prop_map(Value::from),
    ]
}

fn arb_map(inner: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    prop::collection::btree_map("[a-d]", inner, 0..4)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

fn arb_json() -> impl Strategy<Value = Value> {
    arb_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            arb_map(inner),
        ]
    })
}

/// Nested objects and scalars, no lists.
fn arb_tree() -> impl Strategy<Value = Value> {
    arb_map(arb_leaf().prop_recursive(3, 24, 4, arb_map))
}

fn arb_object() -> impl Strategy<Value = Value> {
    arb_map(arb_json())
}

proptest! {
    #[test]
    fn merge_patch_empty_patch_is_identity(target in arb_object()) {
        prop_assert_eq!(merge_patch(&target, &json!({})), target);
    }

    #[test]
    fn merge_patch_agrees_with_the_rfc_key_order_included(target in arb_json(), patch in arb_json()) {
        prop_assert_eq!(
            merge_patch(&target, &patch).to_string(),
            rfc7386(&target, &patch).to_string()
        );
    }

    #[test]
    fn merge_patch_is_idempotent(target in arb_json(), patch in arb_json()) {
        let once = merge_patch(&target, &patch);
        prop_assert_eq!(merge_patch(&once, &patch), once);
    }

    #[test]
    fn merge_patch_of_itself_without_nulls_is_stable(target in arb_object()) {
        // Patching an object with itself only strips the nulls it contains.
        let once = merge_patch(&target, &target);
        prop_assert_eq!(merge_patch(&json!({}), &target), once);
    }

    #[test]
    fn strategic_patch_without_lists_equals_merge_patch(target in arb_tree(), patch in arb_tree()) {
        // With no list anywhere, strategic merge degenerates to RFC 7386 (objects only).
        let strategic = strategic_merge_patch(&target, &patch, &BuiltinStrategy).unwrap();
        prop_assert_eq!(strategic, merge_patch(&target, &patch));
    }
}

// ---- RFC 6902 -------------------------------------------------------------------------------

#[test]
fn json_patch_operations() {
    let doc = json!({"foo": ["bar", "baz"], "a": {"b": 1}});
    let patched = json_patch(
        &doc,
        &json!([
            {"op": "add", "path": "/foo/1", "value": "qux"},
            {"op": "remove", "path": "/foo/0"},
            {"op": "replace", "path": "/a/b", "value": 2},
            {"op": "copy", "from": "/a", "path": "/c"},
            {"op": "move", "from": "/c/b", "path": "/d"},
            {"op": "test", "path": "/d", "value": 2},
            {"op": "add", "path": "/foo/-", "value": "end"},
        ]),
    )
    .unwrap();
    assert_eq!(
        patched,
        json!({"foo": ["qux", "baz", "end"], "a": {"b": 2}, "c": {}, "d": 2})
    );
}

#[test]
fn json_patch_remove_keeps_key_order() {
    let patched = json_patch(
        &json!({"a":1,"b":2,"c":3}),
        &json!([{"op":"remove","path":"/a"}]),
    )
    .unwrap();
    let keys: Vec<&String> = patched.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["b", "c"]);
}

#[test]
fn json_patch_null_test_passes_on_missing_key() {
    // kube-rs' finalizer(): test /metadata/finalizers == null, then add it.
    let object = json!({"metadata": {"name": "x"}});
    let patched = json_patch(
        &object,
        &json!([
            {"op": "test", "path": "/metadata/finalizers", "value": null},
            {"op": "add", "path": "/metadata/finalizers", "value": ["example.com/cleanup"]},
        ]),
    )
    .unwrap();
    assert_eq!(
        patched,
        json!({"metadata": {"name": "x", "finalizers": ["example.com/cleanup"]}})
    );
}

#[test]
fn json_patch_null_test_fails_when_value_present_or_parent_missing() {
    let object = json!({"metadata": {"finalizers": ["a"]}});
    let err = json_patch(
        &object,
        &json!([{"op": "test", "path": "/metadata/finalizers", "value": null}]),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "JSON patch operation 0 (test at \"/metadata/finalizers\") failed: value did not match"
    );
    let err = json_patch(
        &json!({}),
        &json!([{"op": "test", "path": "/metadata/finalizers", "value": null}]),
    )
    .unwrap_err();
    assert!(matches!(err, PatchError::JsonPatchFailed { index: 0, .. }));
}

#[test]
fn json_patch_errors_name_the_operation() {
    let err = json_patch(
        &json!({"a": 1}),
        &json!([
            {"op": "replace", "path": "/a", "value": 2},
            {"op": "remove", "path": "/missing"},
        ]),
    )
    .unwrap_err();
    assert_eq!(
        err,
        PatchError::JsonPatchFailed {
            index: 1,
            op: "remove",
            path: "/missing".into(),
            reason: "path is invalid".into(),
        }
    );
    assert!(matches!(
        json_patch(&json!({}), &json!({"op": "add"})),
        Err(PatchError::InvalidJsonPatch(_))
    ));
}

// ---- strategic merge patch ------------------------------------------------------------------

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "finalizers": ["a"]},
        "spec": {
            "replicas": 1,
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "nginx", "image": "nginx:1.25",
                         "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                         "ports": [{"containerPort": 80}]},
                        {"name": "sidecar", "image": "busybox"}
                    ],
                    "tolerations": [{"key": "k", "operator": "Exists"}]
                }
            }
        }
    })
}

#[test]
fn strategic_container_image_change_by_name() {
    let patched = smp(
        deployment(),
        json!({"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}}}),
    );
    let containers = &patched["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers.as_array().unwrap().len(), 2);
    assert_eq!(containers[0]["image"], "nginx:1.27");
    assert_eq!(containers[0]["env"][1]["value"], "2");
    assert_eq!(
        containers[1],
        json!({"name": "sidecar", "image": "busybox"})
    );
}

#[test]
fn strategic_env_add_change_and_remove() {
    let patched = smp(
        deployment(),
        json!({"spec":{"template":{"spec":{
            "$setElementOrder/containers": [{"name":"nginx"},{"name":"sidecar"}],
            "containers":[{
                "name":"nginx",
                "$setElementOrder/env": [{"name":"A"},{"name":"C"}],
                "env":[{"name":"B","$patch":"delete"},{"name":"C","value":"3"}]
            }]
        }}}}),
    );
    assert_eq!(
        patched["spec"]["template"]["spec"]["containers"][0]["env"],
        json!([{"name":"A","value":"1"},{"name":"C","value":"3"}])
    );
}

#[test]
fn strategic_patch_delete_on_list_element() {
    let patched = smp(
        deployment(),
        json!({"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}),
    );
    let containers = patched["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(containers.len(), 1);
    assert_eq!(containers[0]["name"], "nginx");
}

#[test]
fn strategic_patch_replace_on_list_and_map() {
    let patched = smp(
        deployment(),
        json!({"spec":{"template":{"spec":{"containers":[
            {"$patch":"replace"},
            {"name":"only","image":"x"}
        ]}}}}),
    );
    assert_eq!(
        patched["spec"]["template"]["spec"]["containers"],
        json!([{"name":"only","image":"x"}])
    );

    let patched = smp(
        deployment(),
        json!({"spec":{"template":{"metadata":{"$patch":"replace","labels":{"tier":"fe"}}}}}),
    );
    assert_eq!(
        patched["spec"]["template"]["metadata"],
        json!({"labels":{"tier":"fe"}})
    );

    let patched = smp(
        deployment(),
        json!({"spec":{"template":{"$patch":"delete"}}}),
    );
    assert_eq!(patched["spec"]["template"], json!({}));
}

#[test]
fn strategic_set_element_order_reorders_containers() {
    let patched = smp(
        deployment(),
        json!({"spec":{"template":{"spec":{
            "$setElementOrder/containers":[{"name":"sidecar"},{"name":"nginx"}]
        }}}}),
    );
    let names: Vec<&Value> = patched["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["name"])
        .collect();
    assert_eq!(names, [&json!("sidecar"), &json!("nginx")]);
}

#[test]
fn strategic_set_element_order_inserts_new_item_in_place() {
    let patched = smp(
        json!({"metadata":{"finalizers":["a","c"]}}),
        json!({"metadata":{"$setElementOrder/finalizers":["a","b","c"],"finalizers":["b"]}}),
    );
    assert_eq!(patched["metadata"]["finalizers"], json!(["a", "b", "c"]));
}

#[test]
fn strategic_set_element_order_must_match_patch_list() {
    let err = strategic_merge_patch(
        &json!({"metadata":{"finalizers":["a"]}}),
        &json!({"metadata":{"$setElementOrder/finalizers":["a"],"finalizers":["b"]}}),
        &BuiltinStrategy,
    )
    .unwrap_err();
    assert!(
        matches!(&err, PatchError::InvalidStrategicPatch { path, .. } if path == ".metadata.finalizers"),
        "{err}"
    );
}

#[test]
fn strategic_delete_from_primitive_list_finalizers() {
    let patched = smp(
        json!({"metadata":{"finalizers":["a","b","c"]}}),
        json!({"metadata":{"$deleteFromPrimitiveList/finalizers":["b"]}}),
    );
    assert_eq!(patched["metadata"]["finalizers"], json!(["a", "c"]));
}

#[test]
fn strategic_finalizer_removal_as_kubectl_sends_it() {
    let patched = smp(
        json!({"metadata":{"finalizers":["a","b","c"]}}),
        json!({"metadata":{
            "$setElementOrder/finalizers":["a","c"],
            "$deleteFromPrimitiveList/finalizers":["b"]
        }}),
    );
    assert_eq!(patched["metadata"]["finalizers"], json!(["a", "c"]));
}

#[test]
fn strategic_finalizer_union() {
    // Go's ordering without $setElementOrder: new patch items precede server-only ones.
    let patched = smp(
        json!({"metadata":{"finalizers":["a","b"]}}),
        json!({"metadata":{"finalizers":["b","c"]}}),
    );
    assert_eq!(patched["metadata"]["finalizers"], json!(["a", "b", "c"]));
    let patched = smp(
        json!({"metadata":{"finalizers":["a"]}}),
        json!({"metadata":{"finalizers":["z"]}}),
    );
    assert_eq!(patched["metadata"]["finalizers"], json!(["z", "a"]));
}

#[test]
fn strategic_owner_references_merge_by_uid() {
    let patched = smp(
        json!({"metadata":{"ownerReferences":[{"uid":"1","name":"a"}]}}),
        json!({"metadata":{"ownerReferences":[{"uid":"2","name":"b"}]}}),
    );
    assert_eq!(
        patched["metadata"]["ownerReferences"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn strategic_retain_keys_clears_other_fields() {
    let target =
        json!({"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}}}});
    let patched = smp(
        target,
        json!({"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}),
    );
    assert_eq!(patched, json!({"spec":{"strategy":{"type":"Recreate"}}}));

    let err = strategic_merge_patch(
        &json!({}),
        &json!({"spec":{"$retainKeys":["a"],"b":1}}),
        &BuiltinStrategy,
    )
    .unwrap_err();
    assert!(err.to_string().contains("$retainKeys"), "{err}");
}

#[test]
fn strategic_retain_keys_on_volume_element() {
    let target = json!({"spec":{"volumes":[{"name":"v","emptyDir":{}}]}});
    let patched = smp(
        target,
        json!({"spec":{"volumes":[{"name":"v","$retainKeys":["configMap","name"],"configMap":{"name":"cm"}}]}}),
    );
    assert_eq!(
        patched,
        json!({"spec":{"volumes":[{"name":"v","configMap":{"name":"cm"}}]}})
    );
}

#[test]
fn strategic_atomic_lists_replace_and_nulls_delete() {
    let patched = smp(
        deployment(),
        json!({"spec":{"replicas":null,"template":{"spec":{"tolerations":[{"key":"other","operator":"Exists"}]}}}}),
    );
    assert!(patched["spec"].get("replicas").is_none());
    assert_eq!(
        patched["spec"]["template"]["spec"]["tolerations"],
        json!([{"key":"other","operator":"Exists"}])
    );
}

#[test]
fn strategic_new_values_are_cleaned_of_nulls_and_directives() {
    let patched = smp(
        json!({}),
        json!({"spec":{"a":null,"b":{"c":null,"d":1},"containers":[{"name":"x","$patch":"delete"},{"name":"y"}]}}),
    );
    assert_eq!(
        patched,
        json!({"spec":{"b":{"d":1},"containers":[{"name":"y"}]}})
    );
}

#[test]
fn strategic_errors() {
    let missing_key = strategic_merge_patch(
        &deployment(),
        &json!({"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}),
        &BuiltinStrategy,
    )
    .unwrap_err();
    assert_eq!(
        missing_key.to_string(),
        "invalid strategic merge patch at .spec.template.spec.containers: \
         map: {\"image\":\"x\"} does not contain declared merge key: name"
    );
    assert!(
        strategic_merge_patch(
            &json!({}),
            &json!({"a":{"$patch":"bogus"}}),
            &BuiltinStrategy
        )
        .is_err()
    );
    assert!(strategic_merge_patch(&json!({}), &json!([]), &BuiltinStrategy).is_err());
    assert!(strategic_merge_patch(&json!({}), &json!({"$unknown": 1}), &BuiltinStrategy).is_err());
}

// ---- strategies -----------------------------------------------------------------------------

#[test]
fn builtin_strategy_table() {
    let s = BuiltinStrategy;
    let key = |k: &str| ListStrategy::MergeByKey(k.to_owned());
    assert_eq!(
        s.list_strategy(&["metadata", "finalizers"]),
        ListStrategy::MergePrimitives
    );
    assert_eq!(
        s.list_strategy(&["metadata", "ownerReferences"]),
        key("uid")
    );
    assert_eq!(
        s.list_strategy(&[
            "spec",
            "jobTemplate",
            "spec",
            "template",
            "spec",
            "initContainers"
        ]),
        key("name")
    );
    assert_eq!(
        s.list_strategy(&["spec", "containers", "ports"]),
        key("containerPort")
    );
    assert_eq!(
        s.list_map_keys(&["spec", "containers", "ports"]),
        ["containerPort", "protocol"]
    );
    assert_eq!(s.list_strategy(&["spec", "ports"]), key("port"));
    assert_eq!(
        s.list_strategy(&["spec", "containers", "volumeMounts"]),
        key("mountPath")
    );
    assert_eq!(s.list_strategy(&["status", "conditions"]), key("type"));
    assert_eq!(s.list_map_keys(&["status", "conditions"]), ["type"]);
    assert_eq!(
        s.list_strategy(&["spec", "tolerations"]),
        ListStrategy::Atomic
    );
    assert_eq!(s.list_strategy(&["rules"]), ListStrategy::Atomic);
    assert_eq!(
        s.list_strategy(&["spec", "containers", "args"]),
        ListStrategy::Atomic
    );
    assert_eq!(s.list_strategy(&["spec", "secrets"]), ListStrategy::Atomic);
    assert_eq!(s.list_strategy(&["secrets"]), key("name"));
}

#[test]
fn schema_strategy_reads_extensions_and_falls_back() {
    let schema = json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "items": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name", "zone"],
                        "items": {"type": "object", "properties": {
                            "tags": {"type": "array", "x-kubernetes-list-type": "set",
                                     "items": {"type": "string"}}
                        }}
                    },
                    "merged": {
                        "type": "array",
                        "x-kubernetes-patch-strategy": "merge,retainKeys",
                        "x-kubernetes-patch-merge-key": "id",
                        "items": {"type": "object"}
                    },
                    "plain": {"type": "array", "x-kubernetes-list-type": "atomic",
                              "items": {"type": "object"}},
                    "byName": {"type": "object", "additionalProperties": {
                        "type": "array", "x-kubernetes-list-type": "set"}},
                    "undocumented": {"type": "array", "items": {"type": "object"}}
                }
            }
        }
    });
    let s = SchemaStrategy::new(&schema);
    let key = |k: &str| ListStrategy::MergeByKey(k.to_owned());
    assert_eq!(s.list_strategy(&["spec", "items"]), key("name"));
    assert_eq!(s.list_map_keys(&["spec", "items"]), ["name", "zone"]);
    assert_eq!(
        s.list_strategy(&["spec", "items", "tags"]),
        ListStrategy::MergePrimitives
    );
    assert_eq!(s.list_strategy(&["spec", "merged"]), key("id"));
    assert_eq!(s.list_map_keys(&["spec", "merged"]), ["id"]);
    assert_eq!(s.list_strategy(&["spec", "plain"]), ListStrategy::Atomic);
    assert_eq!(
        s.list_strategy(&["spec", "byName", "x"]),
        ListStrategy::MergePrimitives
    );
    assert_eq!(
        s.list_strategy(&["spec", "undocumented"]),
        ListStrategy::Atomic
    );
    // Not described by the schema: the built-in table answers.
    assert_eq!(
        s.list_strategy(&["metadata", "finalizers"]),
        ListStrategy::MergePrimitives
    );
    assert_eq!(
        s.list_strategy(&["metadata", "ownerReferences"]),
        key("uid")
    );
}

#[test]
fn strategic_patch_with_schema_strategy() {
    let schema = json!({"type":"object","properties":{"spec":{"type":"object","properties":{
        "items":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
                 "items":{"type":"object"}}}}}});
    let patched = strategic_merge_patch(
        &json!({"spec":{"items":[{"name":"a","v":1},{"name":"b","v":2}]}}),
        &json!({"spec":{"items":[{"name":"b","v":3}]}}),
        &SchemaStrategy::new(&schema),
    )
    .unwrap();
    assert_eq!(
        patched,
        json!({"spec":{"items":[{"name":"a","v":1},{"name":"b","v":3}]}})
    );
}

#[test]
fn json_patch_refuses_more_than_ten_thousand_operations() {
    let op = json!({"op": "test", "path": "/a", "value": 1});
    let at_cap = Value::Array(vec![op.clone(); MAX_OPERATIONS]);
    assert!(json_patch(&json!({"a": 1}), &at_cap).is_ok());
    let over = Value::Array(vec![op; MAX_OPERATIONS + 1]);
    let err = json_patch(&json!({"a": 1}), &over).unwrap_err();
    assert!(
        matches!(
            err,
            PatchError::TooManyOperations {
                limit: 10_000,
                got: 10_001
            }
        ),
        "{err}"
    );
}

#[test]
fn json_patch_doubling_copies_stop_at_the_accumulated_copy_limit() {
    // Each copy of /a into itself doubles it: 40 of them would need a terabyte.
    let ops: Vec<Value> = (0..40)
        .map(|_| json!({"op": "copy", "from": "/a", "path": "/a/-"}))
        .collect();
    let start = json!({"a": ["x".repeat(1024)]});
    let err = json_patch(&start, &Value::Array(ops)).unwrap_err();
    assert!(matches!(err, PatchError::CopyTooLarge { .. }), "{err}");
    // Small copies are untouched by the cap.
    let small = json!([{"op": "copy", "from": "/a", "path": "/b"}]);
    assert_eq!(
        json_patch(&json!({"a": [1, 2]}), &small).unwrap(),
        json!({"a": [1, 2], "b": [1, 2]})
    );
}
