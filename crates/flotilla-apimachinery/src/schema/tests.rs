//! Table tests for validation, defaulting, pruning and duplicate detection, with the exact
//! messages kube-apiserver prints, plus property tests.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::FieldError;

/// A ClusterResourcePlacement-like CRD schema exercising most keywords.
fn crp_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 3}}},
            "spec": {
                "type": "object",
                "required": ["placementName"],
                "properties": {
                    "placementName": {"type": "string", "minLength": 1, "maxLength": 12, "pattern": "^[a-z0-9-]+$"},
                    "numberOfClusters": {"type": "integer", "format": "int32", "minimum": 0, "maximum": 100},
                    "placementType": {"type": "string", "enum": ["PickAll", "PickN", "PickFixed"]},
                    "ratio": {"type": "number", "maximum": 1, "exclusiveMinimum": true, "minimum": 0},
                    "step": {"type": "integer", "multipleOf": 5},
                    "clusterNames": {
                        "type": "array", "minItems": 1, "maxItems": 2,
                        "items": {"type": "string"}, "x-kubernetes-list-type": "set"
                    },
                    "stages": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {
                                "name": {"type": "string"},
                                "weight": {"type": "integer", "default": 1},
                                "labels": {"type": "object", "additionalProperties": {"type": "string"}}
                            }
                        }
                    },
                    "at": {"type": "string", "format": "date-time"},
                    "timeout": {"type": "string", "format": "duration"},
                    "maxUnavailable": {
                        "x-kubernetes-int-or-string": true,
                        "anyOf": [{"type": "integer"}, {"type": "string"}]
                    },
                    "note": {"type": "string", "nullable": true},
                    "tags": {"type": "object", "maxProperties": 2, "minProperties": 1},
                    "closed": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false},
                    "unique": {"type": "array", "uniqueItems": true, "items": {"type": "integer"}},
                    "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
                    "config": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": true,
                        "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}
                    }
                }
            },
            "status": {"type": "object", "properties": {"observedGeneration": {"type": "integer"}}}
        }
    })
}

fn messages(schema: &Value, obj: &Value) -> Vec<String> {
    validate(schema, obj)
        .iter()
        .map(FieldError::message)
        .collect()
}

fn with_spec(spec: Value) -> Value {
    let mut spec = spec;
    if spec.get("placementName").is_none() {
        spec["placementName"] = json!("crp");
    }
    json!({"apiVersion": "placement.kubernetes-fleet.io/v1", "kind": "ClusterResourcePlacement", "metadata": {"name": "x"}, "spec": spec})
}

#[test]
fn valid_object_has_no_errors() {
    let obj = with_spec(json!({
        "numberOfClusters": 3, "placementType": "PickN", "ratio": 0.5, "step": 10,
        "clusterNames": ["a", "b"], "stages": [{"name": "a", "weight": 2}, {"name": "b"}],
        "at": "2024-01-01T00:00:00Z", "timeout": "1h30m", "maxUnavailable": "25%", "note": null,
        "tags": {"a": 1}, "closed": {"a": "x"}, "unique": [1, 2],
        "template": {"apiVersion": "v1", "kind": "ConfigMap", "data": {"x": "y"}}
    }));
    assert_eq!(messages(&crp_schema(), &obj), Vec::<String>::new());
    // Whole floats are integers; integers are numbers.
    let obj = with_spec(json!({"numberOfClusters": 5.0, "ratio": 1, "maxUnavailable": 2}));
    assert_eq!(messages(&crp_schema(), &obj), Vec::<String>::new());
}

#[test]
fn keyword_messages_match_kube_apiserver() {
    let s = crp_schema();
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"numberOfClusters": "3"}),
            vec![
                r#"spec.numberOfClusters: Invalid value: "string": spec.numberOfClusters in body must be of type integer: "string""#,
            ],
        ),
        (
            json!({"numberOfClusters": 1.5}),
            vec![
                r#"spec.numberOfClusters: Invalid value: "float64": spec.numberOfClusters in body must be of type int32: "float64""#,
            ],
        ),
        (
            json!({"step": 1.5}),
            vec![
                r#"spec.step: Invalid value: "number": spec.step in body must be of type integer: "number""#,
                "spec.step: Invalid value: 1.5: spec.step in body should be a multiple of 5",
            ],
        ),
        (
            json!({"placementType": "Foo"}),
            vec![
                r#"spec.placementType: Unsupported value: "Foo": supported values: "PickAll", "PickN", "PickFixed""#,
            ],
        ),
        (
            json!({"numberOfClusters": 101}),
            vec![
                "spec.numberOfClusters: Invalid value: 101: spec.numberOfClusters in body should be less than or equal to 100",
            ],
        ),
        (
            json!({"numberOfClusters": -1}),
            vec![
                "spec.numberOfClusters: Invalid value: -1: spec.numberOfClusters in body should be greater than or equal to 0",
            ],
        ),
        (
            json!({"numberOfClusters": 3_000_000_000i64}),
            vec![
                "spec.numberOfClusters: Invalid value: 3000000000: spec.numberOfClusters in body should be less than or equal to 100",
                r#"spec.numberOfClusters: Invalid value: 3000000000: spec.numberOfClusters in body must be of type int32: "3000000000""#,
            ],
        ),
        (
            json!({"ratio": 0}),
            vec!["spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0"],
        ),
        (
            json!({"ratio": 1.5}),
            vec![
                "spec.ratio: Invalid value: 1.5: spec.ratio in body should be less than or equal to 1",
            ],
        ),
        (
            json!({"step": 7}),
            vec!["spec.step: Invalid value: 7: spec.step in body should be a multiple of 5"],
        ),
        (
            json!({"placementName": ""}),
            vec![
                r#"spec.placementName: Invalid value: "": spec.placementName in body should be at least 1 chars long"#,
            ],
        ),
        (
            json!({"placementName": "much-too-long-name"}),
            vec!["spec.placementName: Too long: may not be more than 12 bytes"],
        ),
        (
            json!({"placementName": "A_B"}),
            vec![
                r#"spec.placementName: Invalid value: "A_B": spec.placementName in body should match '^[a-z0-9-]+$'"#,
            ],
        ),
        (
            json!({"clusterNames": ["a", "b", "c"]}),
            vec!["spec.clusterNames: Too many: 3: must have at most 2 items"],
        ),
        (
            json!({"clusterNames": []}),
            vec![
                "spec.clusterNames: Invalid value: 0: spec.clusterNames in body should have at least 1 items",
            ],
        ),
        (
            json!({"clusterNames": ["a", "a"]}),
            vec![r#"spec.clusterNames[1]: Duplicate value: "a""#],
        ),
        (
            json!({"stages": [{"name": "a"}, {"name": "b"}, {"name": "a"}, {"name": "a"}]}),
            vec![r#"spec.stages[2]: Duplicate value: {"name":"a"}"#],
        ),
        (
            json!({"stages": ["a"]}),
            vec![
                r#"spec.stages[0]: Invalid value: "string": spec.stages[0] in body must be of type object: "string""#,
                r#"spec.stages[0]: Invalid value: "a": must be an object for an array of list-type map"#,
            ],
        ),
        (
            json!({"stages": [{"weight": 1}]}),
            vec!["spec.stages[0].name: Required value"],
        ),
        (
            json!({"stages": [{"name": "a", "labels": {"foo": 1}}]}),
            vec![
                r#"spec.stages[0].labels[foo]: Invalid value: "integer": spec.stages[0].labels[foo] in body must be of type string: "integer""#,
            ],
        ),
        (
            json!({"at": "yesterday"}),
            vec![
                r#"spec.at: Invalid value: "yesterday": spec.at in body must be of type date-time: "yesterday""#,
            ],
        ),
        (
            json!({"timeout": "soon"}),
            vec![
                r#"spec.timeout: Invalid value: "soon": spec.timeout in body must be of type duration: "soon""#,
            ],
        ),
        (
            json!({"maxUnavailable": true}),
            vec![
                r#"spec.maxUnavailable: Invalid value: "boolean": spec.maxUnavailable in body must be of type integer,string: "boolean""#,
                r#"<nil>: Invalid value: "": "spec.maxUnavailable" must validate at least one schema (anyOf)"#,
                r#"spec.maxUnavailable: Invalid value: "boolean": spec.maxUnavailable in body must be of type integer: "boolean""#,
            ],
        ),
        (
            json!({"placementType": null}),
            vec![
                r#"spec.placementType: Invalid value: "null": spec.placementType in body must be of type string: "null""#,
                r#"spec.placementType: Unsupported value: "null": supported values: "PickAll", "PickN", "PickFixed""#,
            ],
        ),
        (
            json!({"tags": {}}),
            vec![
                "spec.tags: Invalid value: 0: spec.tags in body should have at least 1 properties",
            ],
        ),
        (
            json!({"tags": {"a": 1, "b": 2, "c": 3}}),
            vec!["spec.tags: Too many: 3: must have at most 2 items"],
        ),
        (
            json!({"closed": {"a": "x", "b": "y"}}),
            vec![
                r#"spec.closed: Invalid value: "b": spec.closed.b in body is a forbidden property"#,
            ],
        ),
        (
            json!({"unique": [1, 2, 1]}),
            vec![
                r#"spec.unique: Invalid value: "": spec.unique in body shouldn't contain duplicates"#,
            ],
        ),
        (
            json!({"template": {"data": 1}}),
            vec![
                "spec.template.apiVersion: Required value",
                "spec.template.kind: Required value",
            ],
        ),
        (
            json!({"template": {"apiVersion": "a/b/c", "kind": "my_kind"}}),
            vec![
                r#"spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#,
                "spec.template.kind: Invalid value: \"my_kind\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            ],
        ),
    ];
    for (spec, want) in cases {
        let obj = with_spec(spec.clone());
        assert_eq!(messages(&s, &obj), want, "spec: {spec}");
    }
}

#[test]
fn reports_every_bad_field_and_required() {
    let obj = json!({"metadata": {}, "spec": {"numberOfClusters": 101, "placementType": "Foo", "stages": [{}]}});
    assert_eq!(
        messages(&crp_schema(), &obj),
        [
            "spec.numberOfClusters: Invalid value: 101: spec.numberOfClusters in body should be less than or equal to 100",
            r#"spec.placementType: Unsupported value: "Foo": supported values: "PickAll", "PickN", "PickFixed""#,
            "spec.stages[0].name: Required value",
            "spec.placementName: Required value",
        ]
    );
    let errs = validate(&crp_schema(), &json!({"spec": {}}));
    assert_eq!(errs[0].error_type.cause_reason(), "FieldValueRequired");
    assert_eq!(errs[0].field, "spec.placementName");
}

#[test]
fn root_metadata_is_only_type_checked() {
    let s = crp_schema();
    assert!(
        messages(
            &s,
            &json!({"metadata": {"name": 12345}, "spec": {"placementName": "a"}})
        )
        .is_empty()
    );
    assert_eq!(
        messages(
            &s,
            &json!({"metadata": "x", "spec": {"placementName": "a"}})
        ),
        [r#"metadata: Invalid value: "string": metadata in body must be of type object: "string""#]
    );
    assert_eq!(
        messages(&s, &json!([])),
        [r#"<nil>: Invalid value: "array":  in body must be of type object: "array""#]
    );
}

#[test]
fn composition_keywords() {
    let one = json!({"type": "object", "properties": {"x": {"oneOf": [{"type": "integer"}, {"type": "number"}]}}});
    assert_eq!(
        messages(&one, &json!({"x": 1})),
        [
            r#"<nil>: Invalid value: "": "x" must validate one and only one schema (oneOf). Found 2 valid alternatives"#
        ]
    );
    assert_eq!(
        messages(&one, &json!({"x": "a"})),
        [
            r#"<nil>: Invalid value: "": "x" must validate one and only one schema (oneOf). Found none valid"#,
            r#"x: Invalid value: "string": x in body must be of type integer: "string""#,
        ]
    );
    let all = json!({"properties": {"x": {"allOf": [{"minimum": 1}, {"maximum": 3}]}}});
    assert_eq!(
        messages(&all, &json!({"x": 5})),
        [
            "x: Invalid value: 5: x in body should be less than or equal to 3",
            r#"<nil>: Invalid value: "": "x" must validate all the schemas (allOf)"#,
        ]
    );
    let not = json!({"properties": {"x": {"not": {"type": "string"}}}});
    assert_eq!(
        messages(&not, &json!({"x": "a"})),
        [r#"<nil>: Invalid value: "": "x" must not validate the schema (not)"#]
    );
    assert!(messages(&not, &json!({"x": 1})).is_empty());
}

#[test]
fn bounds_print_like_go() {
    let s = json!({"properties": {
        "big": {"type": "number", "maximum": 1000000},
        "frac": {"type": "integer", "maximum": 2.5},
        "neg": {"type": "integer", "multipleOf": -2},
        "excl": {"type": "integer", "exclusiveMaximum": 10}
    }});
    assert_eq!(
        messages(
            &s,
            &json!({"big": 2000000.5, "frac": 3, "neg": 4, "excl": 10})
        ),
        [
            "big: Invalid value: 2000000.5: big in body should be less than or equal to 1e+06",
            "frac: Invalid value: 3: frac in body should be less than or equal to 2",
            "neg: Invalid value: -2: factor MultipleOf declared for neg must be positive: -2",
            "excl: Invalid value: 10: excl in body should be less than 10",
        ]
    );
}

#[test]
fn invalid_pattern_is_reported_not_panicked() {
    let s = json!({"properties": {"x": {"type": "string", "pattern": "("}}});
    let msgs = messages(&s, &json!({"x": "a"}));
    assert_eq!(msgs.len(), 1);
    assert!(
        msgs[0].starts_with(
            r#"x: Invalid value: "a": x in body should match '(, but pattern is invalid: "#
        ),
        "{}",
        msgs[0]
    );
}

#[test]
fn defaults_nested_arrays_and_maps() {
    let schema = json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "default": {},
                "properties": {
                    "strategy": {
                        "type": "object",
                        "default": {"type": "RollingUpdate"},
                        "properties": {
                            "type": {"type": "string"},
                            "rollingUpdate": {"type": "object", "default": {}, "properties": {"maxUnavailable": {"default": "25%"}}}
                        }
                    },
                    "stages": {"type": "array", "items": {"type": "object", "properties": {"weight": {"type": "integer", "default": 1}}}},
                    "pools": {"type": "object", "additionalProperties": {"type": "object", "default": {}, "properties": {"size": {"default": 3}}}},
                    "note": {"type": "string", "nullable": true, "default": "n"},
                    "count": {"type": "integer", "default": 7},
                    "list": {"type": "array", "items": {"type": "string", "default": "x"}}
                }
            }
        }
    });
    let mut obj = json!({});
    apply_defaults(&schema, &mut obj);
    assert_eq!(
        obj,
        json!({"spec": {
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%"}},
            "note": "n",
            "count": 7
        }})
    );
    let mut obj = json!({"spec": {
        "strategy": {"type": "Recreate"},
        "stages": [{}, {"weight": 5}],
        "pools": {"a": {}, "b": null, "c": {"size": 1}},
        "note": null,
        "count": null,
        "list": [null, "y"]
    }});
    apply_defaults(&schema, &mut obj);
    assert_eq!(
        obj,
        json!({"spec": {
            "strategy": {"type": "Recreate", "rollingUpdate": {"maxUnavailable": "25%"}},
            "stages": [{"weight": 1}, {"weight": 5}],
            "pools": {"a": {"size": 3}, "b": {"size": 3}, "c": {"size": 1}},
            "note": null,
            "count": 7,
            "list": ["x", "y"]
        }})
    );
}

#[test]
fn prunes_unknown_fields_with_kube_paths() {
    let mut obj = with_spec(json!({
        "foo": 1,
        "stages": [{"name": "a", "bar": true, "labels": {"k": "v"}}],
        "template": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"x": 1}, "anything": {"goes": 1}},
        "config": {"free": {"form": 1}, "known": {"a": "x", "b": "y"}},
        "note": null,
        "placementType": null
    }));
    obj["status"] = json!({"observedGeneration": 1, "extra": 2});
    obj["unknownTop"] = json!(1);
    obj["metadata"]["whatever"] = json!(1);
    let removed = prune(&crp_schema(), &mut obj);
    assert_eq!(
        removed,
        [
            "spec.config.known.b",
            "spec.foo",
            "spec.stages[0].bar",
            "status.extra",
            "unknownTop"
        ]
    );
    assert_eq!(
        obj,
        json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1",
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": "x", "whatever": 1},
            "spec": {
                "stages": [{"name": "a", "labels": {"k": "v"}}],
                "template": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"x": 1}, "anything": {"goes": 1}},
                "config": {"free": {"form": 1}, "known": {"a": "x"}},
                "note": null,
                "placementName": "crp"
            },
            "status": {"observedGeneration": 1}
        })
    );
}

#[test]
fn prunes_embedded_resources_and_schema_less_items() {
    let schema = json!({"properties": {
        "template": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}},
        "raw": {"type": "array"},
        "open": {"type": "object", "additionalProperties": true}
    }});
    let mut obj = json!({
        "apiVersion": "v1", "kind": "X", "metadata": {"name": "n"},
        "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {"c": 1}, "status": {}},
        "raw": [{"a": 1}, 2],
        "open": {"a": {"b": 1}}
    });
    let removed = prune(&schema, &mut obj);
    assert_eq!(removed, ["raw[0].a", "template.spec.c", "template.status"]);
    assert_eq!(
        obj["template"],
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {}})
    );
    assert_eq!(obj["raw"], json!([{}, 2]));
    assert_eq!(obj["open"], json!({"a": {"b": 1}}));
    assert_eq!(obj["metadata"], json!({"name": "n"}));
}

#[test]
fn root_preserve_unknown_fields_keeps_everything_unknown() {
    let schema = json!({"x-kubernetes-preserve-unknown-fields": true, "properties": {"spec": {"type": "object", "properties": {"a": {}}}}});
    let mut obj = json!({"x": 1, "spec": {"a": 1, "b": 2}});
    assert_eq!(prune(&schema, &mut obj), ["spec.b"]);
    assert_eq!(obj, json!({"x": 1, "spec": {"a": 1}}));

    let mut obj = json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}, "spec": {}});
    assert_eq!(prune(&Value::Null, &mut obj), ["spec"]);
    assert_eq!(
        obj,
        json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}})
    );
}

#[test]
fn finds_duplicate_fields() {
    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            r#"{"spec":{"placementName":"a","placementName":"b"}}"#,
            vec!["spec.placementName"],
        ),
        (
            r#"{"spec":{"stages":[{"name":"a"},{"name":"a","name":"b"}]}}"#,
            vec!["spec.stages[1].name"],
        ),
        (r#"{"a":1,"a":2,"a":3}"#, vec!["a", "a"]),
        (r#"{"a":1,"\u0061":2}"#, vec!["a"]),
        (r#"{"a":{"x":1},"b":{"x":1}}"#, vec![]),
        (r#"[{"k":1,"k":2}]"#, vec!["[0].k"]),
        ("5", vec![]),
    ];
    for (raw, want) in cases {
        assert_eq!(
            find_duplicate_fields(raw.as_bytes()).unwrap(),
            want,
            "{raw}"
        );
    }
    let wide: String = (0..40)
        .map(|i| format!("\"k{i}\":{i},"))
        .collect::<String>()
        + "\"k39\":0";
    assert_eq!(
        find_duplicate_fields(format!("{{\"spec\":{{{wide}}}}}").as_bytes()).unwrap(),
        ["spec.k39"]
    );
    assert!(find_duplicate_fields(b"{\"a\":").is_err());
    assert!(find_duplicate_fields(b"{} x").is_err());
    let deep = "[".repeat(100) + &"]".repeat(100);
    assert!(find_duplicate_fields(deep.as_bytes()).unwrap().is_empty());
    let too_deep = "[".repeat(10_000) + &"]".repeat(10_000);
    assert!(find_duplicate_fields(too_deep.as_bytes()).is_err());
    let big = format!(
        "{{\"items\":[{}]}}",
        vec![r#"{"a":1,"b":"x","a":2}"#; 20_000].join(",")
    );
    assert_eq!(find_duplicate_fields(big.as_bytes()).unwrap().len(), 20_000);
}

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e12f64..1e12).prop_map(Value::from),
        "[a-zA-Z0-9:%-]{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 48, 6, |inner| {
        let key = prop_oneof![
            Just("spec".to_string()),
            Just("stages".to_string()),
            Just("name".to_string()),
            Just("placementName".to_string()),
            Just("template".to_string()),
            Just("maxUnavailable".to_string()),
            Just("metadata".to_string()),
            "[a-z]{1,4}",
        ];
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::vec((key, inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Objects valid against `crp_schema()`.
fn valid_object() -> impl Strategy<Value = Value> {
    let stages =
        proptest::collection::btree_map("[a-z]{1,5}", proptest::option::of(0i64..10), 0..4)
            .prop_map(|m| {
                Value::Array(
                    m.into_iter()
                        .map(|(name, w)| match w {
                            Some(w) => json!({"name": name, "weight": w}),
                            None => json!({"name": name}),
                        })
                        .collect(),
                )
            });
    (
        "[a-z0-9-]{1,12}",
        0i64..=100,
        prop_oneof![Just("PickAll"), Just("PickN"), Just("PickFixed")],
        proptest::collection::btree_set("[a-z]{1,3}", 1..=2),
        stages,
        prop_oneof![
            (0i64..5).prop_map(Value::from),
            "[0-9]{1,2}%".prop_map(Value::from)
        ],
        proptest::option::of("[a-z ]{0,5}"),
    )
        .prop_map(|(name, n, kind, clusters, stages, unavailable, note)| {
            json!({
                "apiVersion": "placement.kubernetes-fleet.io/v1",
                "kind": "ClusterResourcePlacement",
                "metadata": {"name": "anything-goes-here"},
                "spec": {
                    "placementName": name, "numberOfClusters": n, "placementType": kind,
                    "clusterNames": clusters.into_iter().collect::<Vec<_>>(), "stages": stages,
                    "maxUnavailable": unavailable, "note": note,
                    "template": {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}}
                }
            })
        })
}

/// An update re-validates only what it changed (Kubernetes' ratcheting), at any depth.
#[test]
fn an_update_skips_what_it_left_as_stored() {
    let s = crp_schema();
    // Stored before the schema limited names to 12 characters and stage labels to strings.
    let old = json!({"apiVersion": "v1", "kind": "X", "metadata": {"name": "x"},
                     "spec": {"placementName": "a-name-too-long-now",
                              "stages": [{"name": "a", "labels": {"x": 1}}, {"name": "b"}]},
                     "status": {"observedGeneration": 1}});
    let errors = |new: &Value| -> Vec<String> {
        validate_update(&s, new, &old)
            .iter()
            .map(FieldError::message)
            .collect()
    };
    let mut status_write = old.clone();
    status_write["status"]["observedGeneration"] = json!(2);
    assert_eq!(
        errors(&status_write),
        Vec::<String>::new(),
        "spec as stored"
    );
    let mut bad_status = old.clone();
    bad_status["status"]["observedGeneration"] = json!("two");
    assert_eq!(
        errors(&bad_status),
        [
            "status.observedGeneration: Invalid value: \"string\": status.observedGeneration in body must be of type integer: \"string\""
        ]
    );
    let mut beside = old.clone();
    beside["spec"]["numberOfClusters"] = json!(2);
    beside["spec"]["stages"][1]["weight"] = json!(3);
    assert_eq!(
        errors(&beside),
        Vec::<String>::new(),
        "the name and the first stage as stored, beside changed fields"
    );
    let mut renamed = old.clone();
    renamed["spec"]["placementName"] = json!("another-name-too-long");
    renamed["spec"]["stages"][0]["labels"]["y"] = json!(2);
    assert_eq!(
        errors(&renamed),
        [
            "spec.placementName: Too long: may not be more than 12 bytes",
            "spec.stages[0].labels[y]: Invalid value: \"integer\": spec.stages[0].labels[y] in body must be of type string: \"integer\"",
        ],
        "changed values are checked, the unchanged label beside them is not"
    );
    let mut duplicate = old.clone();
    duplicate["spec"]["stages"][1]["name"] = json!("a");
    assert_eq!(
        errors(&duplicate),
        ["spec.stages[1]: Duplicate value: {\"name\":\"a\"}"],
        "a changed list is checked whole for duplicates"
    );
    assert_eq!(
        messages(&s, &status_write).len(),
        2,
        "a create of the same object is checked whole"
    );
}

proptest! {
    /// With nothing left as stored, an update is validated exactly as a create; left as
    /// stored, a field is never the cause of an error.
    #[test]
    fn ratcheting_only_skips_what_is_unchanged(spec in arbitrary_json(), status in arbitrary_json()) {
        let schema = crp_schema();
        let obj = json!({"apiVersion": "v1", "kind": "X", "spec": spec, "status": status});
        prop_assert_eq!(
            validate_update(&schema, &obj, &json!({})),
            validate(&schema, &obj)
        );
        let mut old = obj.clone();
        old["status"] = json!({"observedGeneration": 1});
        let ratcheted = validate_update(&schema, &obj, &old);
        prop_assert!(ratcheted.iter().all(|e| !e.field.starts_with("spec")), "{ratcheted:?}");
        let whole = validate(&schema, &obj);
        prop_assert!(ratcheted.iter().all(|e| whole.contains(e)), "{ratcheted:?} ⊄ {whole:?}");
    }

    /// Against a stored object that is valid, skipping what an update left as stored changes
    /// nothing: the errors are those of validating the whole object.
    #[test]
    fn ratcheting_against_a_valid_stored_object_changes_nothing(
        stored in valid_object(),
        place in 0usize..6,
        value in arbitrary_json(),
    ) {
        let schema = crp_schema();
        let mut stored = stored;
        prop_assert!(prune(&schema, &mut stored).is_empty());
        apply_defaults(&schema, &mut stored);
        let mut new = stored.clone();
        match place {
            0 => new["spec"]["placementName"] = value,
            1 => new["spec"]["zz"] = value,
            2 => new["spec"]["stages"] = value,
            3 => match new["spec"]["stages"].as_array_mut().and_then(|s| s.first_mut()) {
                Some(stage) => stage["labels"] = value,
                None => new["spec"]["stages"] = json!([value]),
            },
            4 => new["status"] = value,
            _ => new["spec"]["template"]["data"] = value,
        }
        prop_assert_eq!(validate_update(&schema, &new, &stored), validate(&schema, &new));
    }

    #[test]
    fn schema_functions_never_panic(obj in arbitrary_json()) {
        let schema = crp_schema();
        let _ = validate(&schema, &obj);
        let _ = validate(&schema, &json!({"spec": obj.clone()}));
        let mut pruned = json!({"spec": obj.clone(), "status": obj.clone()});
        let _ = prune(&schema, &mut pruned);
        apply_defaults(&schema, &mut pruned);
        let _ = validate(&schema, &pruned);
        let raw = serde_json::to_vec(&obj).unwrap();
        prop_assert!(find_duplicate_fields(&raw).unwrap().is_empty());
    }

    #[test]
    fn prune_then_validate_of_valid_object_is_a_no_op(obj in valid_object(), junk in arbitrary_json()) {
        let schema = crp_schema();
        prop_assert_eq!(messages(&schema, &obj), Vec::<String>::new());
        let mut pruned = obj.clone();
        prop_assert!(prune(&schema, &mut pruned).is_empty());
        prop_assert_eq!(&pruned, &obj);
        prop_assert_eq!(messages(&schema, &pruned), Vec::<String>::new());

        let mut dirty = obj.clone();
        dirty["spec"]["zzUnknown"] = junk.clone();
        dirty["spec"]["stages"].as_array_mut().unwrap().iter_mut().for_each(|s| s["zz"] = junk.clone());
        let removed = prune(&schema, &mut dirty);
        prop_assert!(removed.contains(&"spec.zzUnknown".to_string()));
        prop_assert_eq!(&dirty, &obj);
    }
}
