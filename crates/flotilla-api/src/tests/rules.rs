//! Table tests of every rule in `validate`: each case mutates a valid object and lists the
//! exact messages expected.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::served;
use crate::validate;

const PLACEMENT: &str = "placement.kubernetes-fleet.io";

fn messages(group: &str, kind: &str, new: &Value, old: Option<&Value>) -> Vec<String> {
    validate(group, kind, new, old, served())
        .iter()
        .map(|e| e.message())
        .collect()
}

/// Merges `patch` into `base` (JSON merge patch: null deletes).
fn merged(base: &Value, patch: &Value) -> Value {
    let mut out = base.clone();
    merge(&mut out, patch);
    out
}

fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                if value.is_null() {
                    target.remove(key);
                } else {
                    merge(target.entry(key.clone()).or_insert(Value::Null), value);
                }
            }
        }
        (target, patch) => *target = patch.clone(),
    }
}

fn crp(spec: Value) -> Value {
    merged(
        &json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": "crp"},
            "spec": {"resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "app"}]}
        }),
        &json!({"spec": spec}),
    )
}

/// A `ResourcePlacement` in namespace `app` selecting Deployment `web`, with `spec` merged in.
fn rp(spec: Value) -> Value {
    merged(
        &json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ResourcePlacement",
            "metadata": {"name": "rp", "namespace": "app"},
            "spec": {"resourceSelectors": [{"group": "apps", "version": "v1", "kind": "Deployment", "name": "web"}]}
        }),
        &json!({"spec": spec}),
    )
}

/// Builds a valid placement with a spec patch merged in.
type Build = fn(Value) -> Value;

/// Both placement kinds, each with the object builder of a valid placement of it: every rule
/// not about scope holds for both alike.
const PLACEMENT_KINDS: [(&str, Build); 2] =
    [("ClusterResourcePlacement", crp), ("ResourcePlacement", rp)];

/// Runs `(spec patch, expected messages)` cases against a create of each placement kind.
fn check_placement_cases(cases: &[(Value, &[&str])]) {
    for (kind, build) in PLACEMENT_KINDS {
        for (spec, expected) in cases {
            assert_eq!(
                messages(PLACEMENT, kind, &build(spec.clone()), None),
                *expected,
                "{kind}: {spec}"
            );
        }
    }
}

/// Runs `(spec patch, expected messages)` cases against a `ResourcePlacement` create.
fn check_rp_cases(cases: &[(Value, &[&str])]) {
    for (spec, expected) in cases {
        assert_eq!(
            messages(PLACEMENT, "ResourcePlacement", &rp(spec.clone()), None),
            *expected,
            "{spec}"
        );
    }
}

const AFFINITY: &str = "spec.policy.affinity.clusterAffinity";

#[test]
fn placement_policy_rules() {
    check_placement_cases(&[
        (json!({}), &[]),
        (
            json!({"policy": {"placementType": "PickFixed", "clusterNames": ["a", "b"]}}),
            &[],
        ),
        (
            json!({"policy": {"placementType": "PickFixed"}}),
            &[
                "spec.policy.clusterNames: Required value: must be set when placementType is PickFixed",
            ],
        ),
        (
            json!({"policy": {
                "placementType": "PickFixed", "clusterNames": ["a"], "numberOfClusters": 1,
                "affinity": {"clusterAffinity": {}}, "topologySpreadConstraints": [{"topologyKey": "zone"}],
                "tolerations": [{"key": "k", "operator": "Exists"}]
            }}),
            &[
                "spec.policy.numberOfClusters: Forbidden: only valid for placementType PickN, not PickFixed",
                "spec.policy.affinity: Forbidden: only valid for placementType PickAll and PickN, not PickFixed",
                "spec.policy.topologySpreadConstraints: Forbidden: only valid for placementType PickN, not PickFixed",
                "spec.policy.tolerations: Forbidden: only valid for placementType PickAll and PickN, not PickFixed",
            ],
        ),
        (
            json!({"policy": {"placementType": "PickFixed", "clusterNames": ["a", "Bad_Name", "a"]}}),
            &[
                "spec.policy.clusterNames[1]: Invalid value: \"Bad_Name\": must be a valid member cluster name (a DNS-1123 subdomain of at most 63 characters)",
                "spec.policy.clusterNames[2]: Duplicate value: \"a\"",
            ],
        ),
        (
            json!({"policy": {"clusterNames": ["a"], "numberOfClusters": 2, "topologySpreadConstraints": [{"topologyKey": "zone"}]}}),
            &[
                "spec.policy.clusterNames: Forbidden: only valid for placementType PickFixed, not PickAll",
                "spec.policy.numberOfClusters: Forbidden: only valid for placementType PickN, not PickAll",
                "spec.policy.topologySpreadConstraints: Forbidden: only valid for placementType PickN, not PickAll",
            ],
        ),
        (
            json!({"policy": {"placementType": "PickN"}}),
            &[
                "spec.policy.numberOfClusters: Required value: must be set when placementType is PickN",
            ],
        ),
        (
            json!({"policy": {"placementType": "PickN", "numberOfClusters": 0, "clusterNames": ["a"]}}),
            &[
                "spec.policy.clusterNames: Forbidden: only valid for placementType PickFixed, not PickN",
            ],
        ),
        (
            json!({"policy": {"placementType": "PickN", "numberOfClusters": 3, "topologySpreadConstraints": [{"topologyKey": "zone"}]}}),
            &[],
        ),
    ]);
}

#[test]
fn affinity_term_rules() {
    let required = |term: Value| json!({"policy": {"affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": [term]}}}}});
    let preferred = |kind: &str, term: Value| {
        json!({"policy": {"placementType": kind, "numberOfClusters": 2, "affinity": {"clusterAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "preference": term}]
        }}}})
    };
    let expression = |name: &str, values: Value| json!({"propertySelector": {"matchExpressions": [{"name": name, "operator": "Ge", "values": values}]}});
    let sorter = json!({"name": "kubernetes-fleet.io/node-count", "sortOrder": "Ascending"});
    let req = format!(
        "{AFFINITY}.requiredDuringSchedulingIgnoredDuringExecution.clusterSelectorTerms[0]"
    );
    let pref = format!("{AFFINITY}.preferredDuringSchedulingIgnoredDuringExecution");
    let cases: Vec<(Value, Vec<String>)> = vec![
        (
            required(expression(
                "resources.kubernetes-fleet.io/available-cpu",
                json!(["500m"]),
            )),
            vec![],
        ),
        (
            required(expression(
                "kubernetes-fleet.io/node-count",
                json!(["5", "6"]),
            )),
            vec![format!(
                "{req}.propertySelector.matchExpressions[0].values: Invalid value: [\"5\",\"6\"]: must have exactly one value"
            )],
        ),
        (
            required(expression("kubernetes-fleet.io/node-count", json!([]))),
            vec![format!(
                "{req}.propertySelector.matchExpressions[0].values: Invalid value: []: must have exactly one value"
            )],
        ),
        (
            required(expression(
                "kubernetes-fleet.io/node-count",
                json!(["five"]),
            )),
            vec![format!(
                "{req}.propertySelector.matchExpressions[0].values[0]: Invalid value: \"five\": must be a Kubernetes quantity (e.g. 5, 1.5, 100m, 2Gi)"
            )],
        ),
        (
            required(expression(
                "resources.kubernetes-fleet.io/used-cpu",
                json!(["1"]),
            )),
            vec![format!(
                "{req}.propertySelector.matchExpressions[0].name: Invalid value: \"resources.kubernetes-fleet.io/used-cpu\": must be a property name such as kubernetes-fleet.io/node-count or resources.kubernetes-fleet.io/<total|allocatable|available>-<resource>"
            )],
        ),
        (
            required(json!({"propertySorter": sorter.clone(), "metricSorter": sorter.clone()})),
            vec![
                format!(
                    "{req}.propertySorter: Forbidden: only valid in preferredDuringSchedulingIgnoredDuringExecution terms"
                ),
                format!(
                    "{req}.metricSorter: Forbidden: only valid in preferredDuringSchedulingIgnoredDuringExecution terms"
                ),
            ],
        ),
        (
            required(json!({"labelSelector": {"matchExpressions": [
                {"key": "env", "operator": "In"},
                {"key": "env", "operator": "Exists", "values": ["x"]},
                {"key": "env", "operator": "Near"}
            ]}})),
            vec![
                format!(
                    "{req}.labelSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
                ),
                format!(
                    "{req}.labelSelector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                ),
                format!(
                    "{req}.labelSelector.matchExpressions[2].operator: Unsupported value: \"Near\": supported values: \"DoesNotExist\", \"Exists\", \"In\", \"NotIn\""
                ),
            ],
        ),
        (
            preferred("PickN", json!({"propertySorter": sorter.clone()})),
            vec![],
        ),
        (
            preferred("PickN", json!({"metricSorter": sorter.clone()})),
            vec![],
        ),
        (
            preferred(
                "PickN",
                json!({"propertySorter": sorter.clone(), "metricSorter": sorter.clone()}),
            ),
            vec![format!(
                "{pref}[0].preference.metricSorter: Forbidden: may not be set together with propertySorter (metricSorter is its deprecated alias)"
            )],
        ),
        (
            preferred(
                "PickN",
                expression("kubernetes-fleet.io/node-count", json!(["1"])),
            ),
            vec![format!(
                "{pref}[0].preference.propertySelector: Forbidden: only valid in requiredDuringSchedulingIgnoredDuringExecution terms"
            )],
        ),
        (
            merged(
                &preferred("PickAll", json!({"propertySorter": sorter})),
                &json!({"policy": {"numberOfClusters": null}}),
            ),
            vec![format!(
                "{pref}: Forbidden: only valid for placementType PickN: PickAll picks every matching cluster regardless of score"
            )],
        ),
    ];
    for (kind, build) in PLACEMENT_KINDS {
        for (spec, expected) in &cases {
            assert_eq!(
                messages(PLACEMENT, kind, &build(spec.clone()), None),
                *expected,
                "{kind}: {spec}"
            );
        }
    }
}

#[test]
fn toleration_rules() {
    check_placement_cases(&[
        (
            json!({"policy": {"tolerations": [{"key": "gpu", "value": "true"}, {"operator": "Exists"}]}}),
            &[],
        ),
        (
            json!({"policy": {"tolerations": [
                {"key": "bad key", "value": "v"},
                {"value": "v"},
                {"key": "k", "operator": "Exists", "value": "v"},
                {"key": "k", "value": "not a label value"},
                {"key": "gpu"},
                {"key": "gpu"}
            ]}}),
            &[
                "spec.policy.tolerations[0].key: Invalid value: \"bad key\": must be a qualified name",
                "spec.policy.tolerations[1].key: Required value: must be set when operator is Equal",
                "spec.policy.tolerations[2].value: Invalid value: \"v\": must be empty when operator is Exists",
                "spec.policy.tolerations[3].value: Invalid value: \"not a label value\": must be a valid label value",
                "spec.policy.tolerations[5]: Duplicate value: {\"key\":\"gpu\"}",
            ],
        ),
    ]);
}

#[test]
fn resource_selector_and_scope_rules() {
    let ns = |name: &str| json!({"group": "", "version": "v1", "kind": "Namespace", "name": name});
    let cases: [(Value, &[&str]); 4] = [
        (
            json!({"resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "app", "labelSelector": {"matchLabels": {"a": "b"}}}]}),
            &[
                "spec.resourceSelectors[0].labelSelector: Forbidden: may not be set together with name: a selector picks one resource by name or many by labels",
            ],
        ),
        (
            json!({"resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "labelSelector": {}}]}),
            &[],
        ),
        (json!({"statusReportingScope": "NamespaceAccessible"}), &[]),
        (
            json!({"statusReportingScope": "NamespaceAccessible", "resourceSelectors": [ns("a"), ns("b")]}),
            &[
                "spec.statusReportingScope: Invalid value: \"NamespaceAccessible\": requires exactly one resourceSelector of kind Namespace",
            ],
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(
            messages(
                PLACEMENT,
                "ClusterResourcePlacement",
                &crp(spec.clone()),
                None
            ),
            expected,
            "{spec}"
        );
    }
    for (kind, build) in PLACEMENT_KINDS {
        let long = merged(
            &build(json!({})),
            &json!({"metadata": {"name": "x".repeat(64)}}),
        );
        assert_eq!(
            messages(PLACEMENT, kind, &long, None),
            ["metadata.name: Too long: may not be more than 63 bytes"],
            "{kind}"
        );
    }
}

/// The error of `statusReportingScope: NamespaceAccessible` in a `ResourcePlacement`.
const NAMESPACE_ACCESSIBLE_IN_RP: &str = "spec.statusReportingScope: Invalid value: \"NamespaceAccessible\": only valid for a ClusterResourcePlacement: a ResourcePlacement's status is already in its namespace";

/// What a `ResourcePlacement`'s scope implies: it selects namespaced kinds only (any the hub
/// serves namespaced, its own fleet kinds and user CRDs included; unknown kinds are left to its
/// status), a selection scope other than the default means nothing and is rejected, and so is
/// `NamespaceAccessible` status reporting.
#[test]
fn resource_placement_scope_rules() {
    let selector = |group: &str, kind: &str| {
        json!({"resourceSelectors": [
            {"group": "apps", "version": "v1", "kind": "Deployment", "name": "web"},
            {"group": group, "version": "v1", "kind": kind}
        ]})
    };
    let kind_error = |kind: &str| {
        format!(
            "spec.resourceSelectors[1].kind: Invalid value: \"{kind}\": must be a namespaced kind: a ResourcePlacement selects resources in its own namespace (place namespaces and other cluster-scoped resources with a ClusterResourcePlacement)"
        )
    };
    let scope_error = |scope: &str| {
        format!(
            "spec.resourceSelectors[0].selectionScope: Invalid value: \"{scope}\": only NamespaceWithResources (the default) is valid in a ResourcePlacement: a selection scope applies to namespace selectors, which a ResourcePlacement cannot have"
        )
    };
    let accepted = [
        selector("", "ConfigMap"),
        selector("rbac.authorization.k8s.io", "Role"),
        selector("placement.kubernetes-fleet.io", "ResourceOverride"),
        selector("example.com", "NotServedYet"),
        json!({"resourceSelectors": [{"group": "apps", "version": "v1", "kind": "Deployment", "labelSelector": {"matchLabels": {"tier": "web"}}, "selectionScope": "NamespaceWithResources"}]}),
        json!({"statusReportingScope": "ClusterScopeOnly"}),
    ];
    for spec in accepted {
        assert_eq!(
            messages(PLACEMENT, "ResourcePlacement", &rp(spec.clone()), None),
            Vec::<String>::new(),
            "{spec}"
        );
    }
    for (group, kind) in [
        ("", "Namespace"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("placement.kubernetes-fleet.io", "ClusterResourcePlacement"),
        ("cluster.kubernetes-fleet.io", "MemberCluster"),
    ] {
        assert_eq!(
            messages(
                PLACEMENT,
                "ResourcePlacement",
                &rp(selector(group, kind)),
                None
            ),
            [kind_error(kind)],
            "{group}/{kind}"
        );
    }
    let deployment = |scope: &str| json!({"resourceSelectors": [{"group": "apps", "version": "v1", "kind": "Deployment", "name": "web", "selectionScope": scope}]});
    let namespace_only = scope_error("NamespaceOnly");
    let with_selectors = scope_error("NamespaceWithResourceSelectors");
    let namespace_kind = kind_error("Namespace").replace("[1]", "[0]");
    check_rp_cases(&[
        (deployment("NamespaceOnly"), &[&namespace_only]),
        (
            deployment("NamespaceWithResourceSelectors"),
            &[&with_selectors],
        ),
        (
            json!({"statusReportingScope": "NamespaceAccessible"}),
            &[NAMESPACE_ACCESSIBLE_IN_RP],
        ),
        // A namespace selector a CRP accepts is wrong twice over in an RP: kind and scope.
        (
            json!({"resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "app", "selectionScope": "NamespaceOnly"}]}),
            &[&namespace_kind, &namespace_only],
        ),
    ]);
    // A kind the hub serves namespaced through a user CRD is accepted, cluster-scoped rejected.
    let user = |scope: &str| {
        let mut crd = <crate::placement::ResourcePlacement as kube::CustomResourceExt>::crd();
        crd.spec.group = "example.com".into();
        crd.spec.names.kind = "Widget".into();
        crd.spec.scope = scope.into();
        vec![crd]
    };
    let widget = rp(selector("example.com", "Widget"));
    assert!(
        validate(
            PLACEMENT,
            "ResourcePlacement",
            &widget,
            None,
            &user("Namespaced")
        )
        .is_empty()
    );
    assert_eq!(
        validate(
            PLACEMENT,
            "ResourcePlacement",
            &widget,
            None,
            &user("Cluster")
        )
        .iter()
        .map(|e| e.message())
        .collect::<Vec<_>>(),
        [kind_error("Widget")]
    );
}

#[test]
fn rollout_strategy_rules() {
    check_placement_cases(&[
        (json!({"strategy": {"type": "External"}}), &[]),
        (
            json!({"strategy": {"type": "External", "resourceSnapshotIndex": "1", "rollingUpdate": {"maxSurge": 1}}}),
            &[
                "spec.strategy.rollingUpdate: Forbidden: only valid for type RollingUpdate",
                "spec.strategy.resourceSnapshotIndex: Forbidden: only valid for type RollingUpdate",
            ],
        ),
        (
            json!({"strategy": {"rollingUpdate": {"maxUnavailable": -1, "maxSurge": -2, "unavailablePeriodSeconds": -5}}}),
            &[
                "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: -1: must be greater than or equal to 0",
                "spec.strategy.rollingUpdate.maxSurge: Invalid value: -2: must be greater than or equal to 0",
                "spec.strategy.rollingUpdate.unavailablePeriodSeconds: Invalid value: -5: must be greater than or equal to 0",
            ],
        ),
        (
            json!({"strategy": {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": "0%"}}}),
            &[
                "spec.strategy.rollingUpdate.maxSurge: Invalid value: \"0%\": may not be 0 when maxUnavailable is 0",
            ],
        ),
        (
            json!({"strategy": {"applyStrategy": {"type": "ClientSideApply", "serverSideApplyConfig": {"force": true}}}}),
            &[
                "spec.strategy.applyStrategy.serverSideApplyConfig: Forbidden: only valid for type ServerSideApply",
            ],
        ),
        (
            json!({"strategy": {"applyStrategy": {"type": "ServerSideApply", "serverSideApplyConfig": {"force": true}}}}),
            &[],
        ),
        (
            json!({"strategy": {"reportBackStrategy": {"type": "Mirror"}}}),
            &[
                "spec.strategy.reportBackStrategy.destination: Required value: must be set when type is Mirror",
            ],
        ),
        (
            json!({"strategy": {"reportBackStrategy": {"type": "Mirror", "destination": "WorkAPI"}}}),
            &[],
        ),
    ]);
}

#[test]
fn placement_update_rules() {
    for (kind, build) in PLACEMENT_KINDS {
        placement_update_rules_of(kind, build);
    }
}

fn placement_update_rules_of(kind: &str, build: Build) {
    let update = |old: Value, new: Value| messages(PLACEMENT, kind, &build(new), Some(&build(old)));
    assert_eq!(
        update(json!({}), json!({"policy": {"placementType": "PickAll"}})),
        Vec::<String>::new()
    );
    assert_eq!(
        update(
            json!({}),
            json!({"policy": {"placementType": "PickN", "numberOfClusters": 1}})
        ),
        ["spec.policy.placementType: Invalid value: \"PickN\": field is immutable"]
    );
    assert_eq!(
        update(
            json!({"policy": {"placementType": "PickAll"}}),
            json!({"policy": null})
        ),
        ["spec.policy: Forbidden: may not be removed once set"]
    );
    assert_eq!(
        update(
            json!({"strategy": {"type": "External"}}),
            json!({"strategy": {"type": "RollingUpdate"}})
        ),
        [
            "spec.strategy.type: Forbidden: may not change from External: staged update runs own this placement's rollout"
        ]
    );
    assert_eq!(
        update(json!({}), json!({"strategy": {"type": "External"}})),
        Vec::<String>::new()
    );
    let immutable =
        "spec.statusReportingScope: Invalid value: \"NamespaceAccessible\": field is immutable";
    let expected: &[&str] = if kind == "ResourcePlacement" {
        &[NAMESPACE_ACCESSIBLE_IN_RP, immutable]
    } else {
        &[immutable]
    };
    assert_eq!(
        update(
            json!({"statusReportingScope": "ClusterScopeOnly"}),
            json!({"statusReportingScope": "NamespaceAccessible"})
        ),
        expected
    );
    let toleration = json!({"key": "gpu", "value": "true"});
    assert_eq!(
        update(
            json!({"policy": {"tolerations": [toleration.clone()]}}),
            json!({"policy": {"tolerations": [toleration.clone(), {"key": "zone", "operator": "Exists"}]}})
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        update(
            json!({"policy": {"tolerations": [toleration]}}),
            json!({"policy": {"tolerations": [{"key": "gpu", "value": "false"}]}})
        ),
        [
            "spec.policy.tolerations: Forbidden: tolerations may only be added; an existing toleration was changed or removed"
        ]
    );
}

fn strategy(stages: Value) -> Value {
    json!({"metadata": {"name": "s"}, "spec": {"stages": stages}})
}

/// The staged-update kinds: each cluster-scoped kind and its namespaced twin share rules.
const STRATEGY_KINDS: [&str; 2] = ["ClusterStagedUpdateStrategy", "StagedUpdateStrategy"];
const RUN_KINDS: [&str; 2] = ["ClusterStagedUpdateRun", "StagedUpdateRun"];
const APPROVAL_REQUEST_KINDS: [&str; 2] = ["ClusterApprovalRequest", "ApprovalRequest"];

#[test]
fn staged_update_strategy_rules() {
    let cases: &[(Value, &[&str])] = &[
        (
            json!([{"name": "a", "maxConcurrency": 3}, {"name": "b", "maxConcurrency": "50%"}]),
            &[],
        ),
        (
            json!([{"name": "a"}, {"name": "b"}, {"name": "a"}]),
            &["spec.stages[2].name: Duplicate value: \"a\""],
        ),
        (
            json!([{"name": "a", "maxConcurrency": 0}, {"name": "b", "maxConcurrency": "0%"}, {"name": "c", "maxConcurrency": "101%"}, {"name": "d", "maxConcurrency": "100%"}]),
            &[
                "spec.stages[0].maxConcurrency: Invalid value: 0: must be an integer of at least 1 or a percentage between 1% and 100%",
                "spec.stages[1].maxConcurrency: Invalid value: \"0%\": must be an integer of at least 1 or a percentage between 1% and 100%",
                "spec.stages[2].maxConcurrency: Invalid value: \"101%\": must be an integer of at least 1 or a percentage between 1% and 100%",
            ],
        ),
        (
            json!([{"name": "a", "afterStageTasks": [{"type": "TimedWait"}, {"type": "Approval", "waitTime": "1h"}]}]),
            &[
                "spec.stages[0].afterStageTasks[0].waitTime: Required value: must be set when type is TimedWait",
                "spec.stages[0].afterStageTasks[1].waitTime: Forbidden: may not be set when type is Approval",
            ],
        ),
        (
            json!([{"name": "a", "afterStageTasks": [{"type": "Approval"}, {"type": "Approval"}]}]),
            &["spec.stages[0].afterStageTasks[1].type: Duplicate value: \"Approval\""],
        ),
        (
            json!([{"name": "a"}, {"name": "b", "afterStageTasks": [{"type": "TimedWait", "waitTime": "1h"}, {"type": "TimedWait", "waitTime": "2h"}]}]),
            &["spec.stages[1].afterStageTasks[1].type: Duplicate value: \"TimedWait\""],
        ),
        (
            json!([{"name": "a", "beforeStageTasks": [{"type": "TimedWait", "waitTime": "1h"}]}]),
            &[
                "spec.stages[0].beforeStageTasks[0].type: Unsupported value: \"TimedWait\": supported values: \"Approval\"",
            ],
        ),
        (
            json!([{"name": "a", "beforeStageTasks": [{"type": "Approval"}]}]),
            &[],
        ),
        (
            json!([{"name": "a", "labelSelector": {"matchExpressions": [{"key": "env", "operator": "NotIn"}]}}]),
            &[
                "spec.stages[0].labelSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
            ],
        ),
    ];
    for kind in STRATEGY_KINDS {
        for (stages, expected) in cases {
            assert_eq!(
                messages(PLACEMENT, kind, &strategy(stages.clone()), None),
                *expected,
                "{kind} {stages}"
            );
        }
    }
}

fn run(spec: Value) -> Value {
    merged(
        &json!({"metadata": {"name": "run"}, "spec": {"placementName": "crp", "resourceSnapshotIndex": "0", "stagedRolloutStrategyName": "s"}}),
        &json!({"spec": spec}),
    )
}

#[test]
fn staged_update_run_rules() {
    for kind in RUN_KINDS {
        staged_update_run_rules_of(kind);
    }
}

fn staged_update_run_rules_of(kind: &str) {
    assert_eq!(
        messages(PLACEMENT, kind, &run(json!({})), None),
        Vec::<String>::new()
    );
    assert_eq!(
        messages(
            PLACEMENT,
            kind,
            &run(json!({"resourceSnapshotIndex": "latest"})),
            None
        ),
        [
            "spec.resourceSnapshotIndex: Invalid value: \"latest\": must be a non-negative integer (a resource snapshot index)"
        ]
    );
    let update = |old: Value, new: Value| messages(PLACEMENT, kind, &run(new), Some(&run(old)));
    assert_eq!(
        update(json!({}), json!({"state": "Run"})),
        Vec::<String>::new()
    );
    assert_eq!(
        update(json!({"state": "Run"}), json!({"state": "Stop"})),
        Vec::<String>::new()
    );
    assert_eq!(
        update(json!({"state": "Stop"}), json!({"state": "Run"})),
        Vec::<String>::new()
    );
    assert_eq!(
        update(json!({"state": "Initialize"}), json!({"state": "Stop"})),
        [
            "spec.state: Invalid value: \"Stop\": invalid state transition: cannot transition from Initialize to Stop"
        ]
    );
    // An unset state is Run (seed 004's runs start at once), so it may stop.
    assert_eq!(
        update(json!({}), json!({"state": "Stop"})),
        Vec::<String>::new()
    );
    assert_eq!(
        update(json!({"state": "Run"}), json!({"state": "Initialize"})),
        [
            "spec.state: Invalid value: \"Initialize\": invalid state transition: cannot transition from Run to Initialize"
        ]
    );
    assert_eq!(
        update(json!({"state": "Stop"}), json!({"state": "Initialize"})),
        [
            "spec.state: Invalid value: \"Initialize\": invalid state transition: cannot transition from Stop to Initialize"
        ]
    );
    assert_eq!(
        update(
            json!({}),
            json!({"placementName": "other", "resourceSnapshotIndex": "1", "stagedRolloutStrategyName": "t"})
        ),
        [
            "spec.placementName: Invalid value: \"other\": field is immutable",
            "spec.resourceSnapshotIndex: Invalid value: \"1\": field is immutable",
            "spec.stagedRolloutStrategyName: Invalid value: \"t\": field is immutable",
        ]
    );
    assert_eq!(
        update(
            json!({"state": "Run"}),
            json!({"state": "Run", "placementName": "other"})
        ),
        ["spec.placementName: Invalid value: \"other\": field is immutable"],
        "{kind}"
    );
}

#[test]
fn approval_request_spec_is_immutable() {
    let request = |stage: &str| json!({"metadata": {"name": "r"}, "spec": {"parentStageRollout": "run", "targetStage": stage}});
    for kind in APPROVAL_REQUEST_KINDS {
        assert_eq!(
            messages(PLACEMENT, kind, &request("canary"), None),
            Vec::<String>::new()
        );
        let approved = merged(
            &request("canary"),
            &json!({"status": {"conditions": [{"type": "Approved", "status": "True"}]}}),
        );
        assert_eq!(
            messages(PLACEMENT, kind, &approved, Some(&request("canary"))),
            Vec::<String>::new()
        );
        assert_eq!(
            messages(PLACEMENT, kind, &request("prod"), Some(&request("canary"))),
            [
                "spec: Invalid value: {\"parentStageRollout\":\"run\",\"targetStage\":\"prod\"}: field is immutable"
            ]
        );
    }
}

#[test]
fn eviction_and_disruption_budget_rules() {
    let eviction = |cluster: &str| json!({"metadata": {"name": "e"}, "spec": {"placementName": "crp", "clusterName": cluster}});
    let kind = "ClusterResourcePlacementEviction";
    let executed = merged(
        &eviction("m1"),
        &json!({"status": {"conditions": [{"type": "Executed", "status": "True"}]}}),
    );
    assert_eq!(
        messages(PLACEMENT, kind, &executed, Some(&eviction("m1"))),
        Vec::<String>::new()
    );
    assert_eq!(
        messages(PLACEMENT, kind, &eviction("m2"), Some(&eviction("m1"))),
        ["spec.clusterName: Invalid value: \"m2\": field is immutable"]
    );
    let budget = |spec: Value| json!({"metadata": {"name": "crp"}, "spec": spec});
    let kind = "ClusterResourcePlacementDisruptionBudget";
    assert_eq!(
        messages(PLACEMENT, kind, &budget(json!({"minAvailable": 2})), None),
        Vec::<String>::new()
    );
    assert_eq!(
        messages(
            PLACEMENT,
            kind,
            &budget(json!({"maxUnavailable": -1, "minAvailable": 1})),
            None
        ),
        [
            "spec.maxUnavailable: Invalid value: -1: must be greater than or equal to 0",
            "spec.minAvailable: Forbidden: may not be set together with maxUnavailable",
        ]
    );
}

#[test]
fn member_cluster_rules() {
    let member = |spec: Value| {
        merged(
            &json!({"metadata": {"name": "member-1"}, "spec": {"identity": {"kind": "ServiceAccount", "name": "agent", "namespace": "fleet-system"}}}),
            &json!({"spec": spec}),
        )
    };
    let check = |spec: Value| {
        messages(
            "cluster.kubernetes-fleet.io",
            "MemberCluster",
            &member(spec),
            None,
        )
    };
    assert_eq!(
        check(json!({"taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]})),
        Vec::<String>::new()
    );
    assert_eq!(
        check(json!({"identity": {"kind": "User", "name": "alice", "namespace": null}})),
        Vec::<String>::new()
    );
    assert_eq!(
        check(json!({"identity": {"namespace": null}})),
        ["spec.identity.namespace: Required value: must be set for a ServiceAccount"]
    );
    assert_eq!(
        check(json!({"identity": {"kind": "Robot"}})),
        [
            "spec.identity.kind: Unsupported value: \"Robot\": supported values: \"Group\", \"ServiceAccount\", \"User\""
        ]
    );
    assert_eq!(
        check(json!({"taints": [
            {"key": "bad key", "value": "bad value", "effect": "NoSchedule"},
            {"key": "gpu", "effect": "NoSchedule"},
            {"key": "gpu", "value": "x", "effect": "NoSchedule"}
        ]})),
        [
            "spec.taints[0].key: Invalid value: \"bad key\": must be a qualified name",
            "spec.taints[0].value: Invalid value: \"bad value\": must be a valid label value",
            "spec.taints[2]: Duplicate value: {\"key\":\"gpu\",\"effect\":\"NoSchedule\"}: taints must be unique by key and effect",
        ]
    );
    let named = |name: &str| {
        let mut m = member(json!({}));
        m["metadata"]["name"] = json!(name);
        messages("cluster.kubernetes-fleet.io", "MemberCluster", &m, None)
    };
    assert_eq!(named("member-cluster-01"), Vec::<String>::new());
    assert_eq!(named(&"m".repeat(50)), Vec::<String>::new());
    assert_eq!(
        named("west.eu"),
        [
            "metadata.name: Invalid value: \"west.eu\": a member cluster name must be a DNS-1123 label: lower case alphanumeric characters or '-', starting and ending with an alphanumeric character (e.g. 'member-1', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        ]
    );
    assert_eq!(named("Member_1").len(), 1);
    assert_eq!(
        named(&"m".repeat(51)),
        [
            "metadata.name: Too long: may not be more than 50 bytes (the member's namespace fleet-member-<name> must be a DNS label)"
        ]
    );
}

fn user_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "integer"},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                    }}
                }}},
                "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]
            }]
        }
    })
}

#[test]
fn user_crd_rules() {
    let kind = "CustomResourceDefinition";
    let group = "apiextensions.k8s.io";
    let check = |patch: Value| messages(group, kind, &merged(&user_crd(), &patch), None);
    assert_eq!(check(json!({})), Vec::<String>::new());
    assert_eq!(
        check(json!({"metadata": {"name": "widgets.example.org"}})),
        [
            "metadata.name: Invalid value: \"widgets.example.org\": must be spec.names.plural+\".\"+spec.group (\"widgets.example.com\")"
        ]
    );
    assert_eq!(
        check(json!({"metadata": {"name": "widgets.example"}, "spec": {"group": "example"}})),
        ["spec.group: Invalid value: \"example\": should be a domain with at least one dot"]
    );
    assert_eq!(
        check(json!({"spec": {"group": null}})),
        ["spec.group: Required value"]
    );
    assert_eq!(
        check(
            json!({"spec": {"names": {"plural": null, "kind": null, "singular": "Widget", "shortNames": ["w d"]}}})
        ),
        [
            "spec.names.plural: Required value",
            "spec.names.singular: Invalid value: \"Widget\": a lowercase RFC 1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            "spec.names.kind: Required value",
            "spec.names.shortNames[0]: Invalid value: \"w d\": must be a lowercase RFC 1035 label",
        ]
    );
    assert_eq!(
        check(json!({"spec": {"scope": null}})),
        ["spec.scope: Required value"]
    );
    assert_eq!(
        check(json!({"spec": {"scope": "Global"}})),
        [
            "spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\""
        ]
    );
    assert_eq!(
        check(json!({"spec": {"versions": []}})),
        ["spec.versions: Required value: must have at least one version"]
    );

    let mut two = user_crd();
    let v1 = two["spec"]["versions"][0].clone();
    two["spec"]["versions"] = json!([v1.clone(), v1.clone()]);
    assert_eq!(
        messages(group, kind, &two, None),
        [
            "spec.versions: Invalid value: 2: must have exactly one version marked as storage version",
            "spec.versions[1].name: Duplicate value: \"v1\"",
        ]
    );
    let mut none = user_crd();
    none["spec"]["versions"][0]["storage"] = json!(false);
    none["spec"]["versions"][0]["schema"] = json!(null);
    none["spec"]["versions"][0]["additionalPrinterColumns"] =
        json!([{"name": "", "type": "duration"}]);
    assert_eq!(
        messages(group, kind, &none, None),
        [
            "spec.versions: Invalid value: 0: must have exactly one version marked as storage version",
            "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required",
            "spec.versions[0].additionalPrinterColumns[0].name: Required value",
            "spec.versions[0].additionalPrinterColumns[0].jsonPath: Required value",
            "spec.versions[0].additionalPrinterColumns[0].type: Unsupported value: \"duration\": supported values: \"boolean\", \"date\", \"integer\", \"number\", \"string\"",
        ]
    );

    let old = user_crd();
    let changed = merged(&old, &json!({"spec": {"scope": "Cluster"}}));
    assert_eq!(
        messages(group, kind, &changed, Some(&old)),
        ["spec.scope: Invalid value: \"Cluster\": field is immutable"]
    );
}

#[test]
fn user_crd_schemas_must_be_structural() {
    let schema = |root: Value| {
        let mut crd = user_crd();
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = root;
        messages(
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            &crd,
            None,
        )
    };
    let at = "spec.versions[0].schema.openAPIV3Schema";
    assert_eq!(
        schema(json!({"type": "array", "items": {"type": "string"}})),
        [format!(
            "{at}.type: Invalid value: \"array\": must be object at the root"
        )]
    );
    assert_eq!(
        schema(json!({"type": "object", "properties": {
            "a": {"properties": {"b": {"type": "string"}}},
            "c": {"type": "array"},
            "d": {"$ref": "#/definitions/D", "type": "object"},
            "e": {"type": "map"},
            "f": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": {"type": "string"}},
            "g": {"type": "string", "anyOf": [{"type": "string", "description": "typed"}]}
        }})),
        [
            format!(
                "{at}.properties[a].type: Required value: must not be empty for specified fields"
            ),
            format!("{at}.properties[c].items: Required value: must be specified for arrays"),
            format!(
                "{at}.properties[d].$ref: Forbidden: must not be set: schemas must be self-contained"
            ),
            format!(
                "{at}.properties[e].type: Unsupported value: \"map\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\""
            ),
            format!(
                "{at}.properties[f].additionalProperties: Forbidden: additionalProperties and properties are mutually exclusive"
            ),
            format!(
                "{at}.properties[g].anyOf[0].type: Forbidden: must not be used inside allOf, anyOf, oneOf or not"
            ),
            format!(
                "{at}.properties[g].anyOf[0].description: Forbidden: must not be used inside allOf, anyOf, oneOf or not"
            ),
        ]
    );
}

#[test]
fn kinds_without_rules_are_accepted() {
    assert!(
        validate(
            "",
            "ConfigMap",
            &json!({"data": {"a": "b"}}),
            None,
            served()
        )
        .is_empty()
    );
    assert!(validate("example.com", "Widget", &json!({}), None, served()).is_empty());
}

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-zA-Z%0-9]{0,6}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let keys = prop_oneof![
            Just("spec".to_string()),
            Just("policy".to_string()),
            Just("stages".to_string()),
            Just("versions".to_string()),
            Just("placementType".to_string()),
            Just("tolerations".to_string()),
            Just("metadata".to_string()),
            "[a-z]{1,4}",
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(keys, inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Rules read untrusted JSON: whatever shape a write has, validation returns errors and
    /// never panics.
    #[test]
    fn validation_never_panics(new in arbitrary_json(), old in arbitrary_json()) {
        for (group, kind) in [
            (PLACEMENT, "ClusterResourcePlacement"),
            (PLACEMENT, "ResourcePlacement"),
            (PLACEMENT, "ClusterStagedUpdateStrategy"),
            (PLACEMENT, "StagedUpdateStrategy"),
            (PLACEMENT, "ClusterStagedUpdateRun"),
            (PLACEMENT, "StagedUpdateRun"),
            (PLACEMENT, "ClusterApprovalRequest"),
            (PLACEMENT, "ApprovalRequest"),
            ("cluster.kubernetes-fleet.io", "MemberCluster"),
            ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ] {
            validate(group, kind, &new, Some(&old), served());
            validate(group, kind, &new, None, served());
        }
    }
}
