use proptest::prelude::*;
use serde_json::{Value, json};

use std::collections::BTreeMap;

use super::object::members;
use super::ownable::ownable;
use super::*;
use crate::patch::{BuiltinStrategy, SchemaStrategy};

const T0: &str = "2026-01-01T00:00:00Z";
const T1: &str = "2026-01-01T00:01:00Z";
const T2: &str = "2026-01-01T00:02:00Z";

fn ssa(live: Option<&Value>, config: &Value, manager: &str, now: &str) -> Value {
    apply(live, config, manager, None, false, &BuiltinStrategy, now).expect("apply succeeds")
}

fn entries(object: &Value) -> Vec<ManagedFieldsEntry> {
    managed_fields(object).expect("valid managed fields")
}

fn entry<'a>(entries: &'a [ManagedFieldsEntry], manager: &str) -> &'a ManagedFieldsEntry {
    entries
        .iter()
        .find(|entry| entry.manager == manager)
        .unwrap_or_else(|| panic!("no entry for {manager}"))
}

fn rendered(set: &FieldSet) -> Vec<String> {
    set.paths().iter().map(ToString::to_string).collect()
}

fn deployment(replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "replicas": replicas,
            "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]}}
        }
    })
}

// ---- FieldSet -------------------------------------------------------------------------------

#[test]
fn fields_v1_round_trip_and_rendering() {
    let encoded = json!({
        "f:metadata": {"f:labels": {"f:app": {}}},
        "f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {".": {}, "f:image": {}, "f:name": {}}}}
    });
    let set = FieldSet::from_fields_v1(&encoded).unwrap();
    assert_eq!(set.to_fields_v1(), encoded);
    assert_eq!(set.len(), 4);
    assert_eq!(
        rendered(&set),
        [
            ".metadata.labels.app",
            ".spec.containers[name=\"nginx\"]",
            ".spec.containers[name=\"nginx\"].image",
            ".spec.containers[name=\"nginx\"].name",
        ]
    );
}

#[test]
fn fields_v1_canonicalises_keys_and_values() {
    let set = FieldSet::from_fields_v1(&json!({
        "f:spec": {"f:ports": {"k:{\"protocol\":\"TCP\",\"containerPort\":80}": {}}},
        "f:metadata": {"f:finalizers": {"v:\"a\"": {}}}
    }))
    .unwrap();
    assert_eq!(
        rendered(&set),
        [
            ".metadata.finalizers[=\"a\"]",
            ".spec.ports[containerPort=80,protocol=\"TCP\"]"
        ]
    );
    assert!(FieldSet::from_fields_v1(&json!({"x:y": {}})).is_err());
    assert!(FieldSet::from_fields_v1(&json!({"k:[1]": {}})).is_err());
    assert!(FieldSet::from_fields_v1(&json!({"f:a": 1})).is_err());
}

#[test]
fn field_set_algebra() {
    let a = FieldSet::from_fields_v1(&json!({"f:spec": {"f:a": {}, "f:b": {}}})).unwrap();
    let b = FieldSet::from_fields_v1(&json!({"f:spec": {"f:b": {}, "f:c": {}}})).unwrap();
    assert_eq!(rendered(&a.union(&b)), [".spec.a", ".spec.b", ".spec.c"]);
    assert_eq!(rendered(&a.intersection(&b)), [".spec.b"]);
    assert_eq!(rendered(&a.difference(&b)), [".spec.a"]);
    assert!(a.difference(&a).is_empty());
    assert_eq!(a.difference(&a).to_fields_v1(), json!({}));
}

#[test]
fn from_object_uses_list_semantics() {
    let object = json!({
        "metadata": {"finalizers": ["a", "b"], "labels": {}},
        "spec": {
            "containers": [{
                "name": "nginx",
                "args": ["-g", "daemon off;"],
                "ports": [{"containerPort": 53, "protocol": "TCP"}, {"containerPort": 53, "protocol": "UDP"}]
            }],
            "tolerations": [{"key": "k"}],
            "empty": {},
            "nothing": null
        }
    });
    let set = FieldSet::from_object(&object, &BuiltinStrategy);
    assert_eq!(
        rendered(&set),
        [
            ".metadata.finalizers[=\"a\"]",
            ".metadata.finalizers[=\"b\"]",
            ".metadata.labels",
            ".spec.containers[name=\"nginx\"]",
            ".spec.containers[name=\"nginx\"].args",
            ".spec.containers[name=\"nginx\"].name",
            ".spec.containers[name=\"nginx\"].ports[containerPort=53,protocol=\"TCP\"]",
            ".spec.containers[name=\"nginx\"].ports[containerPort=53,protocol=\"TCP\"].containerPort",
            ".spec.containers[name=\"nginx\"].ports[containerPort=53,protocol=\"TCP\"].protocol",
            ".spec.containers[name=\"nginx\"].ports[containerPort=53,protocol=\"UDP\"]",
            ".spec.containers[name=\"nginx\"].ports[containerPort=53,protocol=\"UDP\"].containerPort",
            ".spec.containers[name=\"nginx\"].ports[containerPort=53,protocol=\"UDP\"].protocol",
            ".spec.empty",
            ".spec.nothing",
            ".spec.tolerations",
        ]
    );
}

#[test]
fn from_object_treats_unkeyable_lists_as_atomic() {
    let duplicate = json!({"spec": {"containers": [{"name": "a"}, {"name": "a"}]}});
    assert_eq!(
        rendered(&FieldSet::from_object(&duplicate, &BuiltinStrategy)),
        [".spec.containers"]
    );
    let keyless = json!({"spec": {"containers": [{"image": "x"}]}});
    assert_eq!(
        rendered(&FieldSet::from_object(&keyless, &BuiltinStrategy)),
        [".spec.containers"]
    );
}

// ---- apply ----------------------------------------------------------------------------------

#[test]
fn first_apply_creates_object_and_entry() {
    let config = deployment(3);
    let object = ssa(None, &config, "kubectl", T0);
    assert_eq!(object["metadata"]["name"], "web");
    assert_eq!(object["metadata"]["namespace"], "default");
    assert_eq!(object["spec"], config["spec"]);
    assert_eq!(
        object["metadata"]["managedFields"],
        json!([{
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "apps/v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:replicas": {},
                    "f:template": {"f:spec": {"f:containers": {
                        "k:{\"name\":\"nginx\"}": {".": {}, "f:image": {}, "f:name": {}}
                    }}}
                }
            }
        }])
    );
}

#[test]
fn reapplying_the_same_config_is_a_no_op() {
    let config = deployment(3);
    let first = ssa(None, &config, "kubectl", T0);
    let second = ssa(Some(&first), &config, "kubectl", T1);
    assert_eq!(
        second, first,
        "object and managedFields, time included, are unchanged"
    );
}

#[test]
fn system_metadata_and_status_in_config_are_ignored() {
    let mut config = deployment(3);
    config["metadata"]["uid"] = json!("u-1");
    config["metadata"]["resourceVersion"] = json!("42");
    config["metadata"]["managedFields"] = json!([{"manager": "evil", "operation": "Apply"}]);
    config["status"] = json!({"replicas": 9});
    let object = ssa(None, &config, "kubectl", T0);
    assert!(object["metadata"].get("uid").is_none());
    assert!(object.get("status").is_none());
    let all = entries(&object);
    let fields = &entry(&all, "kubectl").fields;
    assert!(
        !rendered(fields)
            .iter()
            .any(|path| path.starts_with(".status")
                || path.starts_with(".metadata.uid")
                || path.starts_with(".metadata.managedFields"))
    );
}

#[test]
fn removing_a_field_from_config_deletes_it() {
    let first = ssa(None, &deployment(3), "kubectl", T0);
    let mut config = deployment(3);
    config["spec"]
        .as_object_mut()
        .unwrap()
        .shift_remove("replicas");
    config["metadata"]
        .as_object_mut()
        .unwrap()
        .shift_remove("labels");
    let second = ssa(Some(&first), &config, "kubectl", T1);
    assert!(second["spec"].get("replicas").is_none());
    assert_eq!(second["metadata"]["labels"], json!({}));
    let all = entries(&second);
    let fields = &entry(&all, "kubectl").fields;
    assert!(!rendered(fields).contains(&".spec.replicas".to_owned()));
    assert_eq!(
        entry(&entries(&second), "kubectl").time.as_deref(),
        Some(T1)
    );
}

#[test]
fn removing_a_container_from_config_deletes_the_element() {
    let mut two = deployment(1);
    two["spec"]["template"]["spec"]["containers"] =
        json!([{"name": "nginx", "image": "nginx"}, {"name": "sidecar", "image": "busybox"}]);
    let first = ssa(None, &two, "kubectl", T0);
    let second = ssa(Some(&first), &deployment(1), "kubectl", T1);
    assert_eq!(
        second["spec"]["template"]["spec"]["containers"],
        json!([{"name": "nginx", "image": "nginx:1.25"}])
    );
}

#[test]
fn field_co_owned_by_two_appliers_survives_when_one_stops() {
    let object = ssa(None, &deployment(3), "alice", T0);
    let object = ssa(Some(&object), &deployment(3), "bob", T1);
    let mut without_replicas = deployment(3);
    without_replicas["spec"]
        .as_object_mut()
        .unwrap()
        .shift_remove("replicas");
    let object = ssa(Some(&object), &without_replicas, "alice", T2);
    assert_eq!(object["spec"]["replicas"], 3);
    let all = entries(&object);
    assert!(entry(&all, "bob").fields.contains(
        &FieldSet::from_object(&json!({"spec":{"replicas":3}}), &BuiltinStrategy).paths()[0]
    ));
    assert!(!rendered(&entry(&all, "alice").fields).contains(&".spec.replicas".to_owned()));
}

#[test]
fn conflict_with_another_applier_has_kubes_message() {
    let object = ssa(None, &deployment(3), "alice", T0);
    let err = apply(
        Some(&object),
        &deployment(5),
        "bob",
        None,
        false,
        &BuiltinStrategy,
        T1,
    )
    .unwrap_err();
    let ApplyError::Conflicts(conflicts) = err else {
        panic!("expected conflicts, got {err:?}");
    };
    assert_eq!(
        conflicts.message(),
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.replicas"
    );
    assert_eq!(
        conflicts.causes(),
        [
            json!({"reason": "FieldManagerConflict", "message": "conflict with \"alice\"", "field": ".spec.replicas"})
        ]
    );
}

#[test]
fn several_conflicts_are_listed_per_manager() {
    let object = ssa(None, &deployment(3), "alice", T0);
    let mut config = deployment(5);
    config["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.27");
    let err = apply(
        Some(&object),
        &config,
        "bob",
        None,
        false,
        &BuiltinStrategy,
        T1,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 2 conflicts: conflicts with \"alice\":\n\
         - .spec.replicas\n\
         - .spec.template.spec.containers[name=\"nginx\"].image"
    );
}

#[test]
fn force_takes_ownership() {
    let object = ssa(None, &deployment(3), "alice", T0);
    let object = apply(
        Some(&object),
        &deployment(5),
        "bob",
        None,
        true,
        &BuiltinStrategy,
        T1,
    )
    .unwrap();
    assert_eq!(object["spec"]["replicas"], 5);
    let all = entries(&object);
    assert!(!rendered(&entry(&all, "alice").fields).contains(&".spec.replicas".to_owned()));
    assert!(rendered(&entry(&all, "bob").fields).contains(&".spec.replicas".to_owned()));
    // Alice re-applying her old value now conflicts with Bob.
    let err = apply(
        Some(&object),
        &deployment(3),
        "alice",
        None,
        false,
        &BuiltinStrategy,
        T2,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"bob\": .spec.replicas"
    );
}

#[test]
fn containers_merge_by_name_across_managers() {
    let object = ssa(None, &deployment(1), "alice", T0);
    let sidecar = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "busybox"}]}}}
    });
    let object = ssa(Some(&object), &sidecar, "bob", T1);
    assert_eq!(
        object["spec"]["template"]["spec"]["containers"],
        json!([{"name": "nginx", "image": "nginx:1.25"}, {"name": "sidecar", "image": "busybox"}])
    );
    // Bob withdrawing his container removes only his.
    let mut nothing = sidecar.clone();
    nothing.as_object_mut().unwrap().shift_remove("spec");
    let object = ssa(Some(&object), &nothing, "bob", T2);
    assert_eq!(
        object["spec"]["template"]["spec"]["containers"],
        json!([{"name": "nginx", "image": "nginx:1.25"}])
    );
    assert!(entries(&object).iter().all(|entry| entry.manager != "bob"));
}

#[test]
fn ports_are_keyed_by_port_and_protocol() {
    let dns = |udp_name: &str| {
        json!({
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": "dns"},
            "spec": {"ports": [
                {"port": 53, "protocol": "TCP", "name": "dns-tcp"},
                {"port": 53, "protocol": "UDP", "name": udp_name}
            ]}
        })
    };
    let object = ssa(None, &dns("dns"), "alice", T0);
    assert_eq!(object["spec"]["ports"][1]["name"], "dns");
    let err = apply(
        Some(&object),
        &dns("udp"),
        "bob",
        None,
        false,
        &BuiltinStrategy,
        T1,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.ports[port=53,protocol=\"UDP\"].name"
    );
}

#[test]
fn element_kept_while_another_manager_owns_a_field_inside_it() {
    let object = ssa(None, &deployment(1), "alice", T0);
    let env = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"template": {"spec": {"containers": [{"name": "nginx", "env": [{"name": "A", "value": "1"}]}]}}}
    });
    let object = ssa(Some(&object), &env, "bob", T1);
    let mut no_containers = deployment(1);
    no_containers["spec"]["template"]["spec"]
        .as_object_mut()
        .unwrap()
        .shift_remove("containers");
    let object = ssa(Some(&object), &no_containers, "alice", T2);
    assert_eq!(
        object["spec"]["template"]["spec"]["containers"],
        json!([{"name": "nginx", "env": [{"name": "A", "value": "1"}]}])
    );
}

#[test]
fn null_in_config_removes_the_field() {
    let object = ssa(None, &deployment(3), "kubectl", T0);
    let mut config = deployment(3);
    config["spec"]["replicas"] = Value::Null;
    let object = ssa(Some(&object), &config, "kubectl", T1);
    assert!(object["spec"].get("replicas").is_none());
}

#[test]
fn status_subresource_applies_only_status() {
    let object = ssa(None, &deployment(3), "kubectl", T0);
    let status = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"x": "y"}},
        "spec": {"replicas": 100},
        "status": {"readyReplicas": 3, "conditions": [{"type": "Available", "status": "True"}]}
    });
    let object = apply(
        Some(&object),
        &status,
        "controller",
        Some("status"),
        false,
        &BuiltinStrategy,
        T1,
    )
    .unwrap();
    assert_eq!(object["spec"]["replicas"], 3);
    assert_eq!(object["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(object["status"]["readyReplicas"], 3);
    let all = entries(&object);
    let controller = entry(&all, "controller");
    assert_eq!(controller.subresource.as_deref(), Some("status"));
    assert_eq!(
        rendered(&controller.fields),
        [
            ".status.conditions[type=\"Available\"]",
            ".status.conditions[type=\"Available\"].status",
            ".status.conditions[type=\"Available\"].type",
            ".status.readyReplicas",
        ]
    );
    // A main-resource apply leaves status alone.
    let object = ssa(Some(&object), &deployment(3), "kubectl", T2);
    assert_eq!(object["status"]["readyReplicas"], 3);
}

#[test]
fn finalizers_are_a_set_shared_between_managers() {
    let with = |finalizers: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "finalizers": finalizers}});
    let object = ssa(None, &with(json!(["a"])), "alice", T0);
    let object = ssa(Some(&object), &with(json!(["b"])), "bob", T1);
    assert_eq!(object["metadata"]["finalizers"], json!(["a", "b"]));
    let object = ssa(Some(&object), &with(json!([])), "alice", T2);
    assert_eq!(object["metadata"]["finalizers"], json!(["b"]));
}

// ---- record_update and client-side apply ----------------------------------------------------

#[test]
fn client_side_apply_then_server_side_apply() {
    // `kubectl apply` (client-side) creates the object: an Update entry.
    let mut created = deployment(3);
    record_update(
        None,
        &mut created,
        "kubectl-client-side-apply",
        None,
        "apps/v1",
        T0,
        &BuiltinStrategy,
    );
    let all = entries(&created);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].operation, Operation::Update);
    assert!(rendered(&all[0].fields).contains(&".spec.replicas".to_owned()));

    // `kubectl apply --server-side` with different replicas conflicts...
    let err = apply(
        Some(&created),
        &deployment(5),
        "kubectl",
        None,
        false,
        &BuiltinStrategy,
        T1,
    )
    .unwrap_err();
    let ApplyError::Conflicts(conflicts) = &err else {
        panic!("expected conflicts, got {err:?}");
    };
    assert_eq!(
        conflicts.message(),
        "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using apps/v1: .spec.replicas"
    );
    assert_eq!(
        conflicts.causes(),
        [json!({
            "reason": "FieldManagerConflict",
            "message": "conflict with \"kubectl-client-side-apply\" using apps/v1",
            "field": ".spec.replicas"
        })]
    );

    // ...with the same values it succeeds and shares ownership.
    let applied = apply(
        Some(&created),
        &deployment(3),
        "kubectl",
        None,
        false,
        &BuiltinStrategy,
        T1,
    )
    .unwrap();
    let all = entries(&applied);
    assert_eq!(all.len(), 2);
    assert_eq!(
        all[0].operation,
        Operation::Apply,
        "Apply entries sort first"
    );
    assert!(rendered(&entry(&all, "kubectl").fields).contains(&".spec.replicas".to_owned()));
    assert!(
        rendered(&entry(&all, "kubectl-client-side-apply").fields)
            .contains(&".spec.replicas".to_owned())
    );
}

#[test]
fn update_takes_fields_from_appliers() {
    let object = ssa(None, &deployment(3), "kubectl", T0);
    let mut scaled = object.clone();
    scaled["spec"]["replicas"] = json!(7);
    record_update(
        Some(&object),
        &mut scaled,
        "hpa",
        None,
        "apps/v1",
        T1,
        &BuiltinStrategy,
    );
    let all = entries(&scaled);
    assert_eq!(rendered(&entry(&all, "hpa").fields), [".spec.replicas"]);
    assert_eq!(entry(&all, "hpa").time.as_deref(), Some(T1));
    assert!(!rendered(&entry(&all, "kubectl").fields).contains(&".spec.replicas".to_owned()));
    // The applier re-applying its old value now conflicts with the updater.
    let err = apply(
        Some(&scaled),
        &deployment(3),
        "kubectl",
        None,
        false,
        &BuiltinStrategy,
        T2,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"hpa\" using apps/v1: .spec.replicas"
    );
}

#[test]
fn update_removing_fields_drops_ownership_and_empty_entries() {
    let object = ssa(None, &deployment(3), "kubectl", T0);
    let mut edited = object.clone();
    edited["spec"]
        .as_object_mut()
        .unwrap()
        .shift_remove("replicas");
    record_update(
        Some(&object),
        &mut edited,
        "kubectl-edit",
        None,
        "apps/v1",
        T1,
        &BuiltinStrategy,
    );
    let all = entries(&edited);
    assert_eq!(all.len(), 1, "a pure removal creates no entry: {all:?}");
    assert!(!rendered(&all[0].fields).contains(&".spec.replicas".to_owned()));

    let mut stripped = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
    record_update(
        None,
        &mut stripped,
        "creator",
        None,
        "v1",
        T0,
        &BuiltinStrategy,
    );
    let before = stripped.clone();
    stripped["data"] = json!({"b": "2"});
    record_update(
        Some(&before),
        &mut stripped,
        "other",
        None,
        "v1",
        T1,
        &BuiltinStrategy,
    );
    let all = entries(&stripped);
    assert_eq!(all.len(), 1, "creator lost its only field: {all:?}");
    assert_eq!(all[0].manager, "other");
}

#[test]
fn no_op_update_keeps_managed_fields() {
    let mut object = deployment(3);
    record_update(
        None,
        &mut object,
        "creator",
        None,
        "apps/v1",
        T0,
        &BuiltinStrategy,
    );
    let mut same = object.clone();
    record_update(
        Some(&object),
        &mut same,
        "someone",
        None,
        "apps/v1",
        T1,
        &BuiltinStrategy,
    );
    assert_eq!(same, object);
}

#[test]
fn update_resets_managed_fields_on_request() {
    let mut object = deployment(3);
    record_update(
        None,
        &mut object,
        "creator",
        None,
        "apps/v1",
        T0,
        &BuiltinStrategy,
    );
    let mut reset = object.clone();
    reset["metadata"]["managedFields"] = json!([{}]);
    record_update(
        Some(&object),
        &mut reset,
        "someone",
        None,
        "apps/v1",
        T1,
        &BuiltinStrategy,
    );
    assert!(reset["metadata"].get("managedFields").is_none());
}

#[test]
fn status_updates_are_tracked_per_subresource() {
    let mut object = deployment(3);
    record_update(
        None,
        &mut object,
        "creator",
        None,
        "apps/v1",
        T0,
        &BuiltinStrategy,
    );
    let mut with_status = object.clone();
    with_status["status"] = json!({"replicas": 3});
    record_update(
        Some(&object),
        &mut with_status,
        "controller",
        Some("status"),
        "apps/v1",
        T1,
        &BuiltinStrategy,
    );
    let all = entries(&with_status);
    let controller = entry(&all, "controller");
    assert_eq!(controller.subresource.as_deref(), Some("status"));
    assert_eq!(rendered(&controller.fields), [".status.replicas"]);
    assert!(
        !rendered(&entry(&all, "creator").fields)
            .iter()
            .any(|p| p.starts_with(".status"))
    );
}

#[test]
fn apply_with_schema_semantics() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "members": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object"}},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "order": {"type": "array", "items": {"type": "string"}}
    }}}});
    let semantics = SchemaStrategy::new(&schema);
    let cr = |spec: Value| json!({"apiVersion": "example.com/v1", "kind": "Fleet", "metadata": {"name": "f"}, "spec": spec});
    let object = apply(
        None,
        &cr(json!({"members": [{"name": "a", "w": 1}], "tags": ["x"], "order": ["1"]})),
        "alice",
        None,
        false,
        &semantics,
        T0,
    )
    .unwrap();
    let object = apply(
        Some(&object),
        &cr(json!({"members": [{"name": "b", "w": 2}], "tags": ["y"]})),
        "bob",
        None,
        false,
        &semantics,
        T1,
    )
    .unwrap();
    assert_eq!(
        object["spec"],
        json!({"members": [{"name": "a", "w": 1}, {"name": "b", "w": 2}], "tags": ["x", "y"], "order": ["1"]})
    );
    let err = apply(
        Some(&object),
        &cr(json!({"order": ["2"]})),
        "bob",
        None,
        false,
        &semantics,
        T2,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.order"
    );
}

#[test]
fn invalid_inputs() {
    assert_eq!(
        apply(None, &json!([]), "m", None, false, &BuiltinStrategy, T0),
        Err(ApplyError::NotAnObject)
    );
    let bad = json!({"metadata": {"managedFields": [{"manager": "m", "operation": "Bogus"}]}});
    assert_eq!(
        managed_fields(&bad).unwrap_err().to_string(),
        "metadata.managedFields[0]: operation must be Apply or Update"
    );
    // Undecodable managed fields on the live object are reset, as kube-apiserver does.
    let mut live = deployment(3);
    live["metadata"]["managedFields"] = json!("garbage");
    let object = ssa(Some(&live), &deployment(3), "kubectl", T0);
    assert_eq!(entries(&object).len(), 1);
}

// ---- properties -----------------------------------------------------------------------------

fn arb_config() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        (0i64..3).prop_map(Value::from),
        "[a-b]".prop_map(Value::from),
    ];
    let container = ("[a-c]", proptest::option::of(scalar.clone())).prop_map(|(name, image)| {
        let mut container = json!({"name": name});
        if let Some(image) = image {
            container["image"] = image;
        }
        container
    });
    (
        prop::collection::btree_map("[a-c]", scalar.clone(), 0..3),
        prop::collection::vec(container, 0..3),
        prop::collection::btree_set("[a-c]", 0..3),
        proptest::option::of(scalar),
    )
        .prop_map(|(labels, containers, finalizers, replicas)| {
            let mut spec = json!({"template": {"spec": {"containers": containers}}});
            if let Some(replicas) = replicas {
                spec["replicas"] = replicas;
            }
            json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "labels": labels, "finalizers": finalizers},
                "spec": spec
            })
        })
}

proptest! {
    #[test]
    fn apply_is_idempotent(first in arb_config(), second in arb_config()) {
        let object = ssa(None, &first, "alice", T0);
        let forced = |live: &Value, config: &Value, now: &str| {
            apply(Some(live), config, "bob", None, true, &BuiltinStrategy, now).unwrap()
        };
        let once = forced(&object, &second, T1);
        let twice = forced(&once, &second, T2);
        prop_assert_eq!(&twice, &once);
        // Bob's entry is exactly his configuration's field set.
        let bob = entry(&entries(&once), "bob").fields.clone();
        let expected = FieldSet::from_object(&ownable(&second, None), &BuiltinStrategy);
        prop_assert_eq!(bob, expected);
    }

    #[test]
    fn fields_v1_round_trips(config in arb_config()) {
        let set = FieldSet::from_object(&config, &BuiltinStrategy);
        prop_assert_eq!(FieldSet::from_fields_v1(&set.to_fields_v1()).unwrap(), set);
    }

    #[test]
    fn applied_values_win(first in arb_config(), second in arb_config()) {
        // After a forced apply every configured leaf holds the configured value.
        let object = ssa(None, &first, "alice", T0);
        let result = apply(Some(&object), &second, "bob", None, true, &BuiltinStrategy, T1).unwrap();
        let result_view = ownable(&result, None);
        let present: BTreeMap<_, _> = members(&result_view, &BuiltinStrategy).into_iter().collect();
        let config_view = ownable(&second, None);
        for (path, value) in members(&config_view, &BuiltinStrategy) {
            if value.is_some_and(|value| !value.is_null() && value != &json!({})) {
                prop_assert_eq!(present.get(&path).copied().flatten(), value, "{:?}", path);
            }
        }
    }
}

// ---- the structural diff against the definition ----------------------------------------------

/// `compare` by definition: list every member of both sides and compare the lists.
fn compare_by_listing(old: &Value, new: &Value) -> (FieldSet, FieldSet) {
    let old_members: BTreeMap<_, _> = members(old, &BuiltinStrategy).into_iter().collect();
    let new_members = members(new, &BuiltinStrategy);
    let mut changed = FieldSet::new();
    for (path, value) in &new_members {
        if old_members.get(path) != Some(value) {
            changed.insert(path);
        }
    }
    let mut removed = FieldSet::new();
    for path in old_members.keys() {
        if !new_members.iter().any(|(new_path, _)| new_path == path) {
            removed.insert(path);
        }
    }
    (changed, removed)
}

/// Objects whose values change shape as well as content: containers as an associative list
/// (names may repeat, which makes it atomic), an object or a scalar; finalizers as a set or
/// with duplicates; empty maps.
fn arb_shapes() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        (0i64..3).prop_map(Value::from),
        "[a-b]".prop_map(Value::from),
    ];
    let container = (
        "[a-c]",
        proptest::option::of(scalar.clone()),
        proptest::option::of(scalar.clone()),
    )
        .prop_map(|(name, image, port)| {
            let mut container = json!({"name": name});
            if let Some(image) = image {
                container["image"] = image;
            }
            if let Some(port) = port {
                container["ports"] = json!([{"containerPort": port}]);
            }
            container
        });
    let containers = prop_oneof![
        prop::collection::vec(container, 0..4).prop_map(Value::from),
        Just(json!({})),
        Just(json!({"x": 1})),
        scalar.clone(),
    ];
    let finalizers = prop::collection::vec("[a-c]", 0..4).prop_map(Value::from);
    let labels = prop::collection::btree_map("[a-c]", scalar.clone(), 0..3);
    (labels, containers, finalizers, proptest::option::of(scalar)).prop_map(
        |(labels, containers, finalizers, replicas)| {
            let mut spec = json!({"template": {"spec": {"containers": containers}}});
            if let Some(replicas) = replicas {
                spec["replicas"] = replicas;
            }
            json!({"metadata": {"labels": labels, "finalizers": finalizers}, "spec": spec})
        },
    )
}

proptest! {
    #[test]
    fn the_structural_diff_finds_what_listing_every_member_finds(
        old in arb_shapes(),
        new in arb_shapes(),
    ) {
        let changes = super::object::compare(&old, &new, &BuiltinStrategy);
        let (changed, removed) = compare_by_listing(&old, &new);
        prop_assert_eq!(&changes.changed, &changed);
        prop_assert_eq!(&changes.removed, &removed);
        let same = super::object::compare(&new, &new, &BuiltinStrategy);
        prop_assert!(same.changed.is_empty() && same.removed.is_empty());
    }
}

proptest! {
    #[test]
    fn comparing_borrowed_ownable_parts_matches_comparing_copied_views(
        mut old in arb_shapes(),
        mut new in arb_shapes(),
        status in any::<bool>(),
    ) {
        for object in [&mut old, &mut new] {
            object["status"] = object["spec"].clone();
            object["kind"] = json!("Deployment");
        }
        let subresource = status.then_some("status");
        let by_parts = super::object::compare_parts(
            &super::ownable::ownable_part(&old, subresource),
            &super::ownable::ownable_part(&new, subresource),
            &BuiltinStrategy,
        );
        let by_views = super::object::compare(
            &ownable(&old, subresource),
            &ownable(&new, subresource),
            &BuiltinStrategy,
        );
        prop_assert_eq!(by_parts.changed, by_views.changed);
        prop_assert_eq!(by_parts.removed, by_views.removed);
    }
}

proptest! {
    /// Whatever the sequence of writes, by whichever managers through the object or its
    /// status, recording each with the encoded-entries fast path gives exactly the managed
    /// fields the general path gives.
    #[test]
    fn the_fast_path_records_what_the_general_path_records(
        shapes in prop::collection::vec(arb_shapes(), 3),
        writes in prop::collection::vec((0usize..3, prop_oneof![4 => Just(0usize), 1 => 1usize..3], any::<bool>()), 1..10),
    ) {
        let times = [T0, T1, T2];
        let (mut fast, mut general): (Option<Value>, Option<Value>) = (None, None);
        for (step, (shape, manager, status)) in writes.into_iter().enumerate() {
            let mut object = shapes[shape].clone();
            object["status"] = object["spec"].clone();
            object["kind"] = json!("Deployment");
            let manager = ["alice", "bob", "carol"][manager];
            let subresource = status.then_some("status");
            let now = times[step % times.len()];
            let mut by_fast = object.clone();
            if let Some(managed) = fast.as_ref().and_then(|f| f.pointer("/metadata/managedFields")) {
                by_fast["metadata"]["managedFields"] = managed.clone();
            }
            let mut by_general = object;
            if let Some(managed) = general.as_ref().and_then(|g| g.pointer("/metadata/managedFields")) {
                by_general["metadata"]["managedFields"] = managed.clone();
            }
            record_update(fast.as_ref(), &mut by_fast, manager, subresource, "apps/v1", now, &BuiltinStrategy);
            let changes = super::object::compare_parts(
                &general.as_ref().map_or_else(Default::default, |g| super::ownable::ownable_part(g, subresource)),
                &super::ownable::ownable_part(&by_general, subresource),
                &BuiltinStrategy,
            );
            super::update::record_in_full(general.as_ref(), &mut by_general, changes, manager, subresource, "apps/v1", now);
            prop_assert_eq!(&by_fast, &by_general);
            fast = Some(by_fast);
            general = Some(by_general);
        }
    }
}
