//! The cases: CRUD and its errors, bad input, dry run, status and scale subresources, patches of
//! every type, lists and watches, Tables and discovery of every built-in resource the real
//! kube-apiserver serves, and kubectl's own flows.

use serde_json::{Value, json};

use crate::case::{Case, Observe};
use crate::target::Target;

const CM: &str = "/api/v1/namespaces/{ns}/configmaps";
const DEPLOY: &str = "/apis/apps/v1/namespaces/{ns}/deployments";
const TABLE: (&str, &str) = ("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io");
/// What kubectl asks `/api` and `/apis` for first.
const AGGREGATED: (&str, &str) = (
    "Accept",
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
);

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}})
}

fn deployment(name: &str, replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
}

const POD: &str = "/api/v1/namespaces/{ns}/pods";

/// A pod no node can take (its node selector matches none): Pending everywhere, so deleting it
/// is immediate and evicting it never waits on a budget.
fn unschedulable_pod(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {"nodeSelector": {"flotilla.test/no-such-node": "true"},
            "containers": [{"name": "c", "image": "nginx"}]}})
}

fn eviction(name: &str) -> Value {
    json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}})
}

fn fields(pointers: &[&'static str]) -> Observe {
    Observe::Fields(pointers.to_vec())
}

/// Every case; the per-resource ones come from `kube`'s discovery.
pub async fn all(kube: &Target) -> Vec<Case> {
    let mut cases = crud();
    cases.extend(bad_input());
    cases.extend(dry_run());
    cases.extend(subresources());
    cases.extend(patches());
    cases.extend(lists_and_watches());
    cases.extend(builtin_kinds());
    cases.extend(kubectl_flows());
    cases.extend(per_resource(kube).await);
    cases
}

fn crud() -> Vec<Case> {
    vec![
        Case::new("configmap-create-get-delete")
            .http("POST", CM, Some(configmap("a")), fields(&["/kind", "/apiVersion", "/data", "/metadata/name", "/metadata/namespace"]))
            .http("GET", &format!("{CM}/a"), None, fields(&["/data", "/metadata/generation"]))
            .http("DELETE", &format!("{CM}/a"), None, fields(&["/kind"]))
            .http("GET", &format!("{CM}/a"), None, Observe::Status),
        Case::new("create-twice-conflicts")
            .http("POST", CM, Some(configmap("a")), Observe::Status)
            .http("POST", CM, Some(configmap("a")), Observe::Status),
        Case::new("get-missing")
            .http("GET", &format!("{CM}/nope"), None, Observe::Status)
            .http("GET", &format!("{DEPLOY}/nope"), None, Observe::Status),
        Case::new("create-without-kind-or-apiversion")
            .http("POST", CM, Some(json!({"metadata": {"name": "bare"}, "data": {"k": "v"}})), fields(&["/kind", "/apiVersion"])),
        Case::new("update-stale-resource-version")
            .http("POST", CM, Some(configmap("a")), Observe::Status)
            .http("PUT", &format!("{CM}/a"), Some(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "a", "resourceVersion": "1"}, "data": {"k": "w"}})), Observe::Status),
        Case::new("update-name-mismatch")
            .http("POST", CM, Some(configmap("a")), Observe::Status)
            .http("PUT", &format!("{CM}/a"), Some(configmap("b")), Observe::Status),
        Case::new("secret-string-data-is-folded-into-data")
            .http("POST", "/api/v1/namespaces/{ns}/secrets", Some(json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "s"}, "data": {"a": "b2xk"}, "stringData": {"a": "new", "b": "two"}})),
                fields(&["/data", "/stringData", "/type"]))
            .http("PATCH", "/api/v1/namespaces/{ns}/secrets/s", None, Observe::Status)
            .raw("PATCH", "/api/v1/namespaces/{ns}/secrets/s", "application/merge-patch+json",
                r#"{"stringData": {"c": "three"}}"#, fields(&["/data", "/stringData"])),
        Case::new("system-namespaces-stay")
            .http("DELETE", "/api/v1/namespaces/default", None, Observe::Status)
            .http("DELETE", "/api/v1/namespaces/kube-system?dryRun=All", None, Observe::Status)
            .http("DELETE", "/api/v1/namespaces/kube-public", None, Observe::Status)
            .http("GET", "/version/", None, Observe::Keys(vec![""])),
        Case::new("namespace-defaults")
            .http("POST", "/api/v1/namespaces", Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "{ns}-x"}})),
                fields(&["/spec", "/status"]))
            .http("DELETE", "/api/v1/namespaces/{ns}-x", None, fields(&["/status/phase"])),
    ]
}

fn bad_input() -> Vec<Case> {
    vec![
        Case::new("malformed-json")
            .raw("POST", CM, "application/json", "{\"metadata\": ", Observe::Status),
        Case::new("wrong-type")
            .http("POST", CM, Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": 5})), Observe::Status),
        Case::new("invalid-name")
            .http("POST", CM, Some(configmap("Not_Valid")), Observe::Status),
        Case::new("missing-name")
            .http("POST", CM, Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})), Observe::Status),
        Case::new("unknown-field-strict")
            .http("POST", &format!("{CM}?fieldValidation=Strict"), Some(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "a"}, "bogus": 1})), Observe::Status),
        Case::new("unknown-field-warn")
            .http("POST", &format!("{CM}?fieldValidation=Warn"), Some(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "a"}, "bogus": 1})), Observe::Warnings),
        Case::new("unknown-field-ignore")
            .http("POST", &format!("{CM}?fieldValidation=Ignore"), Some(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "a"}, "bogus": 1})), Observe::Warnings),
        Case::new("field-validation-bogus")
            .http("POST", &format!("{CM}?fieldValidation=Bogus"), Some(configmap("a")), Observe::Status),
        Case::new("kind-mismatch")
            .http("POST", CM, Some(json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"}})), Observe::Status),
        Case::new("namespace-mismatch")
            .http("POST", CM, Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "other"}})), Observe::Status),
        Case::new("unsupported-media-type")
            .raw("POST", CM, "text/plain", "hello", Observe::Status),
        Case::new("object-over-the-storage-limit")
            .http("POST", "/api/v1/namespaces/{ns}/podtemplates", Some(json!({"apiVersion": "v1", "kind": "PodTemplate",
                "metadata": {"name": "big"}, "template": {"spec": {"containers": [{"name": "c", "image": "x",
                "env": [{"name": "A", "value": "x".repeat(1600 * 1024)}]}]}}})), Observe::Status)
            .http("GET", "/api/v1/namespaces/{ns}/podtemplates/big", None, Observe::Status),
        Case::new("configmap-over-one-mebibyte")
            .http("POST", CM, Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
                "data": {"k": "x".repeat(1024 * 1024 + 1)}})), Observe::Status),
        Case::new("invalid-resource-version-on-get")
            .http("POST", CM, Some(configmap("a")), Observe::Status)
            .http("GET", &format!("{CM}/a?resourceVersion=abc"), None, Observe::Status)
            .http("GET", &format!("{CM}?resourceVersion=abc"), None, Observe::Status)
            .http("GET", &format!("{CM}?resourceVersionMatch=Bogus&resourceVersion=1"), None, Observe::Status),
        Case::new("deployment-selector-must-match-template")
            .http("POST", DEPLOY, Some(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": {"metadata": {"labels": {"app": "b"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})), Observe::Status),
        Case::new("delete-a-group-version")
            .http("DELETE", "/api/v1", None, Observe::Status),
        Case::new("invalid-label-selector")
            .http("GET", &format!("{CM}?labelSelector=a%20in%20"), None, Observe::Status),
        Case::new("unsupported-field-selector")
            .http("GET", &format!("{CM}?fieldSelector=data.k%3Dv"), None, Observe::Status),
        Case::new("json-patch-over-ten-thousand-operations")
            .http("POST", CM, Some(configmap("a")), Observe::Status)
            .raw("PATCH", &format!("{CM}/a"), "application/json-patch+json",
                &serde_json::to_string(&vec![json!({"op": "test", "path": "/data/k", "value": "v"}); 10_001]).unwrap(),
                Observe::Status),
        Case::new("patch-cannot-rename")
            .http("POST", CM, Some(configmap("a")), Observe::Status)
            .raw("PATCH", &format!("{CM}/a"), "application/merge-patch+json", r#"{"metadata": {"name": "b"}}"#, Observe::Status)
            .raw("PATCH", &format!("{CM}/a"), "application/merge-patch+json", r#"{"metadata": {"uid": "x"}}"#, Observe::Status),
    ]
}

fn dry_run() -> Vec<Case> {
    vec![
        Case::new("dry-run-create")
            .http("POST", &format!("{CM}?dryRun=All"), Some(configmap("a")), fields(&["/metadata/name"]))
            .http("GET", &format!("{CM}/a"), None, Observe::Status),
        Case::new("dry-run-delete-keeps-the-object")
            .http("POST", CM, Some(configmap("a")), Observe::Status)
            .http("DELETE", &format!("{CM}/a?dryRun=All"), None, Observe::Status)
            .http("GET", &format!("{CM}/a"), None, fields(&["/metadata/name"]))
            .http("DELETE", CM, Some(json!({"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]})), Observe::Status)
            .http("GET", &format!("{CM}/a"), None, fields(&["/metadata/name"])),
        Case::new("dry-run-unknown-values-are-refused")
            .http("POST", CM, Some(configmap("a")), Observe::Status)
            .http("DELETE", &format!("{CM}/a?dryRun=Bogus"), None, Observe::Status)
            .http("DELETE", &format!("{CM}/a"), Some(json!({"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["Bogus"]})), Observe::Status)
            .http("POST", &format!("{CM}?dryRun=Bogus"), Some(configmap("b")), Observe::Status)
            .http("GET", &format!("{CM}/a"), None, fields(&["/metadata/name"])),
        Case::new("delete-options-are-validated")
            .http("POST", CM, Some(configmap("a")), Observe::Status)
            .http("DELETE", &format!("{CM}/a"), Some(json!({"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": "abc"})), Observe::Status)
            .http("DELETE", &format!("{CM}/a"), Some(json!({"kind": "DeleteOptions", "apiVersion": "v1", "orphanDependents": true, "propagationPolicy": "Background"})), Observe::Status)
            .http("DELETE", &format!("{CM}/a"), Some(json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Sideways"})), Observe::Status)
            .http("GET", &format!("{CM}/a"), None, fields(&["/metadata/name"])),
    ]
}

fn subresources() -> Vec<Case> {
    vec![
        Case::new("status-write-changes-only-status")
            .http("POST", DEPLOY, Some(deployment("d", 1)), Observe::Status)
            .raw("PATCH", &format!("{DEPLOY}/d/status"), "application/merge-patch+json",
                r#"{"metadata": {"labels": {"app": "hacked", "extra": "x"}, "annotations": {"a": "b"}}, "spec": {"replicas": 7}, "status": {"observedGeneration": 1}}"#,
                fields(&["/metadata/labels", "/metadata/annotations/a", "/spec/replicas", "/status/observedGeneration"])),
        Case::new("pod-eviction")
            .http("POST", POD, Some(unschedulable_pod("p")), Observe::Status)
            .http("POST", &format!("{POD}/p/eviction"), Some(eviction("p")), fields(&["/kind", "/apiVersion", "/status", "/code"]))
            .http("GET", &format!("{POD}/p"), None, Observe::Status)
            .http("POST", &format!("{POD}/nope/eviction"), Some(eviction("nope")), Observe::Status),
        Case::new("pod-eviction-name-mismatch")
            .http("POST", POD, Some(unschedulable_pod("p")), Observe::Status)
            .http("POST", &format!("{POD}/p/eviction"), Some(eviction("q")), Observe::Status)
            .http("GET", &format!("{POD}/p"), None, fields(&["/metadata/name"])),
        Case::new("pod-eviction-of-a-pending-pod-ignores-its-budget")
            .http("POST", "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", Some(json!({"apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
                "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "web"}}}})), Observe::Status)
            .http("POST", POD, Some(unschedulable_pod("p")), Observe::Status)
            .http("POST", &format!("{POD}/p/eviction"), Some(eviction("p")), fields(&["/status", "/code"]))
            .http("GET", &format!("{POD}/p"), None, Observe::Status),
        Case::new("scale-get-patch-put")
            .http("POST", DEPLOY, Some(deployment("d", 2)), Observe::Status)
            .http("GET", &format!("{DEPLOY}/d/scale"), None, fields(&["/kind", "/apiVersion", "/spec", "/metadata/name"]))
            .raw("PATCH", &format!("{DEPLOY}/d/scale"), "application/merge-patch+json", r#"{"spec": {"replicas": 3}}"#,
                fields(&["/kind", "/spec/replicas"]))
            .http("GET", &format!("{DEPLOY}/d"), None, fields(&["/spec/replicas"]))
            .http("PUT", &format!("{DEPLOY}/d/scale"), Some(json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
                "metadata": {"name": "d", "namespace": "{ns}"}, "spec": {"replicas": 5}})), fields(&["/spec/replicas"]))
            .http("PUT", &format!("{DEPLOY}/d/scale"), Some(json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
                "metadata": {"name": "d", "namespace": "{ns}"}, "spec": {"replicas": -1}})), Observe::Status)
            .http("GET", &format!("{CM}/d/scale"), None, Observe::Status),
        Case::new("scale-of-every-scalable-kind")
            .http("POST", "/apis/apps/v1/namespaces/{ns}/replicasets", Some(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": "r"}, "spec": {"replicas": 0, "selector": {"matchLabels": {"a": "r"}},
                "template": {"metadata": {"labels": {"a": "r"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}})), Observe::Status)
            .raw("PATCH", "/apis/apps/v1/namespaces/{ns}/replicasets/r/scale", "application/merge-patch+json", r#"{"spec": {"replicas": 0}}"#, fields(&["/spec/replicas", "/status/selector"]))
            .http("POST", "/apis/apps/v1/namespaces/{ns}/statefulsets", Some(json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
                "metadata": {"name": "s"}, "spec": {"replicas": 0, "serviceName": "s", "selector": {"matchLabels": {"a": "s"}},
                "template": {"metadata": {"labels": {"a": "s"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}})), Observe::Status)
            .http("GET", "/apis/apps/v1/namespaces/{ns}/statefulsets/s/scale", None, fields(&["/spec/replicas", "/status/selector"]))
            .http("POST", "/api/v1/namespaces/{ns}/replicationcontrollers", Some(json!({"apiVersion": "v1", "kind": "ReplicationController",
                "metadata": {"name": "rc"}, "spec": {"replicas": 0, "selector": {"a": "rc"},
                "template": {"metadata": {"labels": {"a": "rc"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}})), Observe::Status)
            .http("GET", "/api/v1/namespaces/{ns}/replicationcontrollers/rc/scale", None, fields(&["/spec/replicas", "/status/selector"])),
    ]
}

fn patches() -> Vec<Case> {
    vec![
        Case::new("patch-types")
            .http("POST", DEPLOY, Some(deployment("d", 1)), Observe::Status)
            .raw("PATCH", &format!("{DEPLOY}/d"), "application/merge-patch+json", r#"{"metadata": {"labels": {"m": "1"}}}"#, fields(&["/metadata/labels"]))
            .raw("PATCH", &format!("{DEPLOY}/d"), "application/json-patch+json", r#"[{"op": "add", "path": "/metadata/labels/j", "value": "2"}]"#, fields(&["/metadata/labels"]))
            .raw("PATCH", &format!("{DEPLOY}/d"), "application/strategic-merge-patch+json",
                r#"{"spec": {"template": {"spec": {"containers": [{"name": "side", "image": "busybox"}]}}}}"#,
                fields(&["/spec/template/spec/containers/0/name", "/spec/template/spec/containers/1/name"]))
            .raw("PATCH", &format!("{DEPLOY}/d"), "application/json-patch+json", r#"[{"op": "test", "path": "/metadata/labels/m", "value": "0"}]"#, Observe::Status)
            .raw("PATCH", &format!("{DEPLOY}/d"), "application/bogus", "{}", Observe::Status),
        Case::new("server-side-apply-conflicts")
            .raw("PATCH", &format!("{CM}/a?fieldManager=one"), "application/apply-patch+yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: one\n", fields(&["/data"]))
            .raw("PATCH", &format!("{CM}/a?fieldManager=two"), "application/apply-patch+yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: two\n", Observe::Status)
            .raw("PATCH", &format!("{CM}/a?fieldManager=two&force=true"), "application/apply-patch+yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: two\n", fields(&["/data"]))
            .raw("PATCH", &format!("{CM}/a"), "application/apply-patch+yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n", Observe::Status),
    ]
}

fn lists_and_watches() -> Vec<Case> {
    let mut paging = Case::new("list-pagination-and-selectors");
    for name in ["a", "b", "c"] {
        paging = paging.http("POST", CM, Some(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"tier": if name == "b" { "back" } else { "front" }}}})), Observe::Status);
    }
    vec![
        paging
            .http(
                "GET",
                &format!("{CM}?limit=2"),
                None,
                Observe::Keys(vec!["", "/metadata"]),
            )
            .http(
                "GET",
                &format!("{CM}?labelSelector=tier%3Dfront"),
                None,
                fields(&[
                    "/items/0/metadata/name",
                    "/items/1/metadata/name",
                    "/kind",
                    "/apiVersion",
                ]),
            )
            .http(
                "GET",
                &format!("{CM}?fieldSelector=metadata.name%3Db"),
                None,
                fields(&["/items/0/metadata/name"]),
            )
            .http(
                "GET",
                &format!("{CM}?limit=1&continue=bogus"),
                None,
                Observe::Status,
            ),
        Case::new("request-body-over-three-mebibytes").http(
            "POST",
            CM,
            Some(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
                "data": {"k": "x".repeat(4 * 1024 * 1024)}}),
            ),
            Observe::Status,
        ),
        Case::new("aggregated-discovery")
            .get_with(
                "/api",
                vec![AGGREGATED],
                Observe::Aggregated("", "v1", "configmaps"),
            )
            .get_with(
                "/api",
                vec![AGGREGATED],
                Observe::Aggregated("", "v1", "namespaces"),
            )
            .get_with(
                "/apis",
                vec![AGGREGATED],
                Observe::Aggregated("apps", "v1", "deployments"),
            )
            .get_with(
                "/apis",
                vec![AGGREGATED],
                Observe::Aggregated("events.k8s.io", "v1", "events"),
            ),
        Case::new("openapi-v3-declares-path-parameters-and-list-kinds")
            .http(
                "GET",
                "/openapi/v3/api/v1",
                None,
                Observe::OpenApiPath("/api/v1/namespaces/{namespace}/configmaps/{name}"),
            )
            .http(
                "GET",
                "/openapi/v3/api/v1",
                None,
                Observe::OpenApiPath("/api/v1/namespaces/{namespace}/configmaps"),
            )
            .http(
                "GET",
                "/openapi/v3/apis/apps/v1",
                None,
                Observe::OpenApiPath("/apis/apps/v1/deployments"),
            ),
        Case::new("events-are-one-resource-in-two-shapes")
            .http(
                "POST",
                "/api/v1/namespaces/{ns}/events",
                Some(json!({"apiVersion": "v1", "kind": "Event",
                    "metadata": {"name": "core-made"},
                    "involvedObject": {"kind": "ConfigMap", "name": "a", "namespace": "{ns}"},
                    "reason": "Tested", "message": "written as core/v1", "type": "Normal",
                    "count": 3, "source": {"component": "differential"},
                    "firstTimestamp": "2026-11-28T10:00:00Z", "lastTimestamp": "2026-11-28T10:05:00Z"})),
                Observe::Status,
            )
            .http(
                "GET",
                "/apis/events.k8s.io/v1/namespaces/{ns}/events/core-made",
                None,
                fields(&[
                    "/apiVersion",
                    "/note",
                    "/regarding/name",
                    "/deprecatedCount",
                    "/deprecatedSource/component",
                    "/deprecatedLastTimestamp",
                ]),
            )
            .http(
                "POST",
                "/apis/events.k8s.io/v1/namespaces/{ns}/events",
                Some(json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                    "metadata": {"name": "events-made"},
                    "eventTime": "2026-11-28T10:00:00.000000Z",
                    "regarding": {"kind": "ConfigMap", "name": "a", "namespace": "{ns}"},
                    "reason": "Tested", "note": "written as events.k8s.io/v1", "type": "Warning",
                    "action": "Testing", "reportingController": "example.com/differential",
                    "reportingInstance": "differential-1"})),
                Observe::Status,
            )
            .http(
                "GET",
                "/api/v1/namespaces/{ns}/events/events-made",
                None,
                fields(&[
                    "/apiVersion",
                    "/message",
                    "/involvedObject/name",
                    "/reportingComponent",
                    "/action",
                ]),
            ),
        Case::new("watch-events")
            .http("POST", CM, Some(configmap("a")), Observe::Status)
            .http(
                "GET",
                // By name: a real cluster also publishes `kube-root-ca.crt` in each namespace.
                // From resourceVersion 0 ("any"): without one, kube-apiserver waits for its
                // watch cache to reach etcd's newest revision and, on a loaded machine, answers
                // ERROR "Timeout" after three seconds instead (seen twice in this suite).
                &format!(
                    "{CM}?watch=true&timeoutSeconds=1&resourceVersion=0&fieldSelector=metadata.name%3Da"
                ),
                None,
                Observe::WatchEvents,
            )
            .http(
                "GET",
                &format!("{CM}?watch=true&timeoutSeconds=1&resourceVersion=1"),
                None,
                Observe::Status,
            ),
        Case::new("table-of-configmaps")
            .http("POST", CM, Some(configmap("a")), Observe::Status)
            .get_with(CM, vec![TABLE], Observe::Columns)
            .get_with(
                &format!("{CM}/a"),
                vec![TABLE],
                Observe::Keys(vec!["", "/rows/0"]),
            ),
    ]
}

/// The built-in kinds users place, applied as kubectl applies them.
fn builtin_kinds() -> Vec<Case> {
    let documents: &[(&str, &str)] = &[
        (
            "resourcequota",
            "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard: {pods: \"10\", requests.cpu: \"4\"}\n",
        ),
        (
            "limitrange",
            "apiVersion: v1\nkind: LimitRange\nmetadata: {name: l}\nspec:\n  limits:\n  - type: Container\n    default: {cpu: 500m}\n",
        ),
        (
            "networkpolicy",
            "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: n}\nspec:\n  podSelector: {matchLabels: {app: web}}\n  policyTypes: [Ingress]\n",
        ),
        (
            "ingress",
            "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}\nspec:\n  rules:\n  - host: web.example.com\n    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}\n",
        ),
        (
            "cronjob",
            "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec:\n  schedule: \"*/5 * * * *\"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: OnFailure\n          containers: [{name: c, image: busybox}]\n",
        ),
        (
            "persistentvolumeclaim",
            "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: p}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n",
        ),
        (
            "endpointslice",
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e}\naddressType: IPv4\nports: [{name: http, port: 80, protocol: TCP}]\nendpoints: [{addresses: [10.1.2.3]}]\n",
        ),
        (
            "validatingwebhookconfiguration",
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: \"{ns}-v\"}\nwebhooks:\n- name: v.example.com\n  admissionReviewVersions: [v1]\n  sideEffects: None\n  failurePolicy: Ignore\n  clientConfig: {url: \"https://127.0.0.1:9/validate\"}\n  rules: [{operations: [CREATE], apiGroups: [example.com], apiVersions: [v1], resources: [widgets]}]\n",
        ),
        (
            "mutatingwebhookconfiguration",
            "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: \"{ns}-m\"}\nwebhooks:\n- name: m.example.com\n  admissionReviewVersions: [v1]\n  sideEffects: None\n  failurePolicy: Ignore\n  clientConfig: {url: \"https://127.0.0.1:9/mutate\"}\n  rules: [{operations: [CREATE], apiGroups: [example.com], apiVersions: [v1], resources: [widgets]}]\n",
        ),
        (
            "priorityclass",
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: \"{ns}-high\"}\nvalue: 1000\ndescription: high\n",
        ),
        (
            "storageclass",
            "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: \"{ns}-fast\"}\nprovisioner: example.com/fast\nreclaimPolicy: Retain\n",
        ),
        (
            "horizontalpodautoscaler",
            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 1\n  maxReplicas: 5\n  metrics:\n  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}\n",
        ),
    ];
    documents
        .iter()
        .map(|(id, yaml)| {
            Case::new(format!("apply-{id}"))
                .kubectl(&["apply", "-n", "{ns}", "-f", "-"], yaml, Observe::Stdout)
                .kubectl(&["apply", "-n", "{ns}", "-f", "-"], yaml, Observe::Stdout)
                .kubectl(
                    &["get", "-n", "{ns}", "-f", "-", "-o", "name"],
                    yaml,
                    Observe::Stdout,
                )
                .kubectl(&["delete", "-n", "{ns}", "-f", "-"], yaml, Observe::Stdout)
        })
        .collect()
}

fn kubectl_flows() -> Vec<Case> {
    let web = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, labels: {app: web}}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: nginx}]\n";
    vec![
        Case::new("kubectl-scale-and-autoscale")
            .kubectl(&["apply", "-n", "{ns}", "-f", "-"], web, Observe::Stdout)
            .kubectl(
                &["scale", "-n", "{ns}", "deployment", "web", "--replicas=3"],
                "",
                Observe::Stdout,
            )
            .kubectl(
                &[
                    "get",
                    "-n",
                    "{ns}",
                    "deployment",
                    "web",
                    "-o",
                    "jsonpath={.spec.replicas}",
                ],
                "",
                Observe::Stdout,
            )
            .kubectl(
                &[
                    "scale",
                    "-n",
                    "{ns}",
                    "deployment",
                    "web",
                    "--replicas=2",
                    "--current-replicas=5",
                ],
                "",
                Observe::Stderr,
            )
            .kubectl(
                &[
                    "autoscale",
                    "-n",
                    "{ns}",
                    "deployment",
                    "web",
                    "--min=2",
                    "--max=5",
                    "--cpu-percent=80",
                ],
                "",
                Observe::Stderr,
            )
            .kubectl(
                &[
                    "get",
                    "-n",
                    "{ns}",
                    "hpa",
                    "web",
                    "-o",
                    "jsonpath={.spec.minReplicas} {.spec.maxReplicas} {.spec.scaleTargetRef.name}",
                ],
                "",
                Observe::Stdout,
            ),
        // kubectl validates the items of a List against /openapi/v2 before sending them.
        Case::new("kubectl-create-and-apply-a-list")
            .kubectl(
                &["create", "-f", "-"],
                "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: l1, namespace: \"{ns}\"}\n  data: {a: b}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: l2, namespace: \"{ns}\"}\n",
                Observe::Stdout,
            )
            .kubectl(
                &["apply", "-f", "-"],
                "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: l1, namespace: \"{ns}\"}\n  data: {a: c}\n",
                Observe::Stdout,
            )
            .kubectl(
                &["create", "-f", "-"],
                "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: l3, namespace: \"{ns}\"}\n  data: {a: 1}\n  bogus: true\n",
                Observe::Exit,
            ),
        Case::new("kubectl-label-annotate-patch")
            .kubectl(
                &[
                    "create",
                    "configmap",
                    "-n",
                    "{ns}",
                    "c",
                    "--from-literal=k=v",
                ],
                "",
                Observe::Stdout,
            )
            .kubectl(
                &["label", "-n", "{ns}", "configmap", "c", "tier=front"],
                "",
                Observe::Stdout,
            )
            .kubectl(
                &["label", "-n", "{ns}", "configmap", "c", "tier=back"],
                "",
                Observe::Stderr,
            )
            .kubectl(
                &[
                    "label",
                    "-n",
                    "{ns}",
                    "configmap",
                    "c",
                    "tier=back",
                    "--overwrite",
                ],
                "",
                Observe::Stdout,
            )
            .kubectl(
                &["annotate", "-n", "{ns}", "configmap", "c", "note=hi"],
                "",
                Observe::Stdout,
            )
            .kubectl(
                &[
                    "patch",
                    "-n",
                    "{ns}",
                    "configmap",
                    "c",
                    "-p",
                    "{\"data\":{\"k\":\"w\"}}",
                ],
                "",
                Observe::Stdout,
            )
            .kubectl(
                &[
                    "patch",
                    "-n",
                    "{ns}",
                    "configmap",
                    "c",
                    "--type=json",
                    "-p",
                    "[{\"op\":\"remove\",\"path\":\"/data/k\"}]",
                ],
                "",
                Observe::Stdout,
            )
            .kubectl(
                &[
                    "get",
                    "-n",
                    "{ns}",
                    "configmap",
                    "c",
                    "-o",
                    "jsonpath={.metadata.labels} {.metadata.annotations.note} {.data}",
                ],
                "",
                Observe::Stdout,
            ),
        Case::new("kubectl-server-side-apply")
            .kubectl(
                &["apply", "--server-side", "-n", "{ns}", "-f", "-"],
                web,
                Observe::Stdout,
            )
            .kubectl(
                &[
                    "apply",
                    "--server-side",
                    "--field-manager=other",
                    "-n",
                    "{ns}",
                    "-f",
                    "-",
                ],
                &web.replace("replicas: 1", "replicas: 4"),
                Observe::Stderr,
            )
            .kubectl(
                &[
                    "apply",
                    "--server-side",
                    "--force-conflicts",
                    "--field-manager=other",
                    "-n",
                    "{ns}",
                    "-f",
                    "-",
                ],
                &web.replace("replicas: 1", "replicas: 4"),
                Observe::Stdout,
            )
            .kubectl(
                &["diff", "-n", "{ns}", "-f", "-"],
                &web.replace("image: nginx", "image: nginx:2"),
                Observe::Exit,
            ),
        Case::new("kubectl-delete-propagation")
            .kubectl(
                &["create", "configmap", "-n", "{ns}", "a"],
                "",
                Observe::Stdout,
            )
            .kubectl(
                &["create", "configmap", "-n", "{ns}", "b"],
                "",
                Observe::Stdout,
            )
            .kubectl(
                &["create", "configmap", "-n", "{ns}", "c"],
                "",
                Observe::Stdout,
            )
            .kubectl(
                &["delete", "-n", "{ns}", "configmap", "a", "--cascade=orphan"],
                "",
                Observe::Stdout,
            )
            .kubectl(
                &[
                    "delete",
                    "-n",
                    "{ns}",
                    "configmap",
                    "b",
                    "--cascade=foreground",
                ],
                "",
                Observe::Stdout,
            )
            .kubectl(
                &[
                    "delete",
                    "-n",
                    "{ns}",
                    "configmap",
                    "c",
                    "--cascade=background",
                    "--dry-run=server",
                ],
                "",
                Observe::Stdout,
            )
            .kubectl(
                &[
                    "get",
                    "-n",
                    "{ns}",
                    "configmaps",
                    "a",
                    "b",
                    "c",
                    "-o",
                    "name",
                    "--ignore-not-found",
                ],
                "",
                Observe::Stdout,
            ),
        Case::new("kubectl-get-missing-and-wait")
            .kubectl(
                &["get", "-n", "{ns}", "configmap", "nope"],
                "",
                Observe::Stderr,
            )
            .kubectl(
                &["create", "configmap", "-n", "{ns}", "w"],
                "",
                Observe::Stdout,
            )
            .kubectl(
                &[
                    "wait",
                    "-n",
                    "{ns}",
                    "--for=jsonpath={.metadata.name}=w",
                    "configmap/w",
                    "--timeout=10s",
                ],
                "",
                Observe::Stdout,
            )
            .kubectl(
                &["delete", "-n", "{ns}", "configmap", "w", "--wait"],
                "",
                Observe::Stdout,
            ),
        Case::new("kubectl-explain")
            .kubectl(&["explain", "resourcequota.spec.hard"], "", Observe::Exit)
            .kubectl(&["explain", "deployment.spec.replicas"], "", Observe::Exit),
        Case::new("kubectl-auth-can-i")
            .kubectl(
                &["auth", "can-i", "create", "deployments", "-n", "{ns}"],
                "",
                Observe::Stdout,
            )
            .kubectl(
                &[
                    "auth",
                    "can-i",
                    "scale",
                    "deployments",
                    "--subresource=scale",
                    "-n",
                    "{ns}",
                ],
                "",
                Observe::Stdout,
            ),
    ]
}

/// One case per built-in resource the real kube-apiserver serves: is it served (discovery,
/// scope, kind, verbs, short names, subresources), and what columns does its Table have.
async fn per_resource(kube: &Target) -> Vec<Case> {
    let mut paths = vec!["/api/v1".to_string()];
    let groups = kube.request("GET", "/apis", "", b"", &[]).await.body;
    for group in groups["groups"].as_array().into_iter().flatten() {
        for version in group["versions"].as_array().into_iter().flatten() {
            if let Some(gv) = version["groupVersion"].as_str() {
                paths.push(format!("/apis/{gv}"));
            }
        }
    }
    let mut cases = Vec::new();
    for base in paths {
        let list = kube.request("GET", &base, "", b"", &[]).await.body;
        for resource in list["resources"].as_array().into_iter().flatten() {
            let name = resource["name"].as_str().unwrap_or_default();
            let verbs = &resource["verbs"];
            if name.contains('/')
                || !verbs
                    .as_array()
                    .is_some_and(|v| v.iter().any(|v| v == "list"))
            {
                continue;
            }
            let namespaced = resource["namespaced"].as_bool() == Some(true);
            let collection = if namespaced {
                format!("{base}/namespaces/{{ns}}/{name}")
            } else {
                format!("{base}/{name}")
            };
            cases.push(
                Case::new(format!(
                    "resource {}{}",
                    base.trim_start_matches("/api").trim_start_matches('s'),
                    format_args!("/{name}")
                ))
                .get_with(&base, vec![], resource_entry(name))
                .get_with(&collection, vec![TABLE], Observe::Columns),
            );
        }
    }
    cases
}

/// The discovery entries of `resource` and its subresources within a group-version document.
fn resource_entry(resource: &str) -> Observe {
    Observe::Discovery(resource.to_string())
}
