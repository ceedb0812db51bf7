//! Resource placement end to end with the real kubectl on the simulated fleet: a placement
//! of a namespace with a Deployment reaches Available on every selected member, changes roll
//! out, drift is reported, overrides change one cluster, and deleting the placement cleans
//! every member.

mod common;

use common::{
    HubProcess, PICK_ALL_APP, PLACEMENT_COLUMNS, app, current_condition, eventually, fleet,
    member_kubeconfig, on_member, settings,
};

/// The status of the placement's condition `type_` (without the prefix), if observed for the
/// current generation.
fn placement_condition(hub: &HubProcess, name: &str, type_: &str) -> Option<String> {
    current_condition(
        hub,
        &["crp", name],
        &format!("ClusterResourcePlacement{type_}"),
    )
}

/// `flotilla preview -f FILE` against the hub.
fn preview(hub: &HubProcess, file: &std::path::Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["preview", "-f"])
        .arg(file)
        .arg("--kubeconfig")
        .arg(hub.kubeconfig())
        .output()
        .expect("flotilla preview")
}

/// Waits until placement `name` is Available for its current generation.
fn wait_available(hub: &HubProcess, name: &str) {
    eventually("the placement Available", 120, || {
        (placement_condition(hub, name, "Available").as_deref() == Some("True")).then_some(())
    });
}

/// Namespace `app` with a two-replica Deployment `web` and a ConfigMap `settings`.
fn app_with_settings() -> String {
    format!("{}{}", app("app", 2), settings("app"))
}

#[test]
fn a_namespace_with_a_deployment_is_placed_rolled_out_and_cleaned_up() {
    let hub = fleet("1");
    hub.create(&app_with_settings());
    hub.create(PICK_ALL_APP);
    wait_available(&hub, "app");

    // The rollout told as events on the placement, once each (deduplicated), as `kubectl
    // describe` shows them.
    let described = eventually("the rollout's events", 30, || {
        let out = hub.kubectl_ok(&["describe", "crp", "app"]);
        out.contains("PlacementRolloutCompleted").then_some(out)
    });
    for reason in [
        "PlacementScheduled",
        "PlacementRolloutStarted",
        "PlacementWorkSynchronized",
        "PlacementApplied",
        "PlacementAvailable",
        "PlacementRolloutCompleted",
    ] {
        assert!(described.contains(reason), "{reason} missing:\n{described}");
    }
    let events: serde_json::Value =
        serde_json::from_str(&hub.kubectl_ok(&["get", "events.events.k8s.io", "-A", "-o", "json"]))
            .expect("events JSON");
    let mut seen: Vec<String> = events["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|e| e["regarding"]["kind"] == "ClusterResourcePlacement")
        .filter(|e| e["regarding"]["name"] == "app")
        .filter_map(|e| e["reason"].as_str().map(str::to_string))
        .collect();
    let reasons = seen.join(", ");
    let total = seen.len();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), total, "one event per reason: {reasons}");

    // Every member runs the Deployment.
    let members: Vec<String> = (1..=6).map(|i| format!("member-cluster-0{i}")).collect();
    for member in &members {
        let config = member_kubeconfig(&hub, member);
        let ready = on_member(
            &hub,
            &config,
            &[
                "get",
                "deployment",
                "web",
                "-n",
                "app",
                "-o",
                "jsonpath={.status.readyReplicas}",
            ],
        );
        assert_eq!(ready.as_deref(), Some("2"), "{member}");
        let data = on_member(
            &hub,
            &config,
            &[
                "get",
                "configmap",
                "settings",
                "-n",
                "app",
                "-o",
                "jsonpath={.data.greeting}",
            ],
        );
        assert_eq!(data.as_deref(), Some("hello"), "{member}");
    }

    // The placement explains itself: columns, per-cluster statuses, selected resources.
    let table = hub.kubectl_ok(&["get", "crp", "app"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, PLACEMENT_COLUMNS);
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(&row[..6], ["app", "1", "True", "1", "True", "1"], "{table}");
    let statuses = hub.kubectl_ok(&[
        "get",
        "crp",
        "app",
        "-o",
        "jsonpath={range .status.placementStatuses[*]}{.clusterName}{\"\\n\"}{end}",
    ]);
    assert_eq!(statuses.lines().count(), 6, "{statuses}");
    let selected = hub.kubectl_ok(&[
        "get",
        "crp",
        "app",
        "-o",
        "jsonpath={range .status.selectedResources[*]}{.kind}/{.name} {end}",
    ]);
    assert_eq!(
        selected.trim(),
        "Namespace/app ConfigMap/settings Deployment/web"
    );
    let snapshots = hub.kubectl_ok(&[
        "get",
        "clusterresourcesnapshots",
        "-l",
        "kubernetes-fleet.io/parent-CRP=app,kubernetes-fleet.io/is-latest-snapshot=true",
        "-o",
        "name",
    ]);
    assert_eq!(
        snapshots.trim(),
        "clusterresourcesnapshot.placement.kubernetes-fleet.io/app-0-snapshot"
    );
    // A new placement's bindings were created Bound (generation 1: no spec patch followed),
    // each with its RolloutStarted condition.
    let bindings = hub.kubectl_ok(&[
        "get",
        "clusterresourcebindings",
        "-l",
        "kubernetes-fleet.io/parent-CRP=app",
        "-o",
        "jsonpath={range .items[*]}{.spec.state} {.metadata.generation} {.status.conditions[?(@.type==\"RolloutStarted\")].status}{\"\\n\"}{end}",
    ]);
    assert_eq!(
        bindings.lines().collect::<Vec<_>>(),
        ["Bound 1 True"; 6],
        "{bindings}"
    );

    // A change on the hub is a new resource snapshot, rolled out to every member.
    hub.kubectl_ok(&[
        "patch",
        "deployment",
        "web",
        "-n",
        "app",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":3}}"#,
    ]);
    eventually("the new index rolled out", 120, || {
        let index = hub.kubectl_ok(&[
            "get",
            "crp",
            "app",
            "-o",
            "jsonpath={.status.observedResourceIndex}",
        ]);
        (index == "1" && placement_condition(&hub, "app", "Available").as_deref() == Some("True"))
            .then_some(())
    });
    for member in &members {
        let config = member_kubeconfig(&hub, member);
        let replicas = on_member(
            &hub,
            &config,
            &[
                "get",
                "deployment",
                "web",
                "-n",
                "app",
                "-o",
                "jsonpath={.spec.replicas}",
            ],
        );
        assert_eq!(replicas.as_deref(), Some("3"), "{member}");
    }

    // Deleting the placement removes what it placed from every member, and its records,
    // even when the garbage collector is told to orphan them.
    hub.kubectl_ok(&["delete", "crp", "app", "--cascade=orphan", "--timeout=120s"]);
    for member in &members {
        let config = member_kubeconfig(&hub, member);
        eventually("the namespace gone from the member", 60, || {
            on_member(&hub, &config, &["get", "namespace", "app"])
                .is_none()
                .then_some(())
        });
    }
    let bindings = hub.kubectl_ok(&["get", "clusterresourcebindings", "-o", "name"]);
    assert!(bindings.trim().is_empty(), "{bindings}");
    // Its snapshots went before it did (orphaned ones would stay forever), so a new
    // placement of the same name never finds them.
    let snapshots = hub.kubectl_ok(&[
        "get",
        "clusterschedulingpolicysnapshots,clusterresourcesnapshots",
        "-l",
        "kubernetes-fleet.io/parent-CRP=app",
        "-o",
        "name",
    ]);
    assert!(snapshots.trim().is_empty(), "{snapshots}");
}

const OVERRIDE: &str = r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ResourceOverride
metadata:
  name: fewer-on-staging
  namespace: app
spec:
  placement:
    name: app
  resourceSelectors:
    - group: apps
      kind: Deployment
      version: v1
      name: web
  policy:
    overrideRules:
      - clusterSelector:
          clusterSelectorTerms:
            - labelSelector:
                matchLabels:
                  environment: staging
        jsonPatchOverrides:
          - op: replace
            path: /spec/replicas
            value: 1
          - op: add
            path: /metadata/labels/placed-on
            value: "${MEMBER-CLUSTER-NAME}"
"#;

const GUARDED_PLACEMENT: &str = r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: app
spec:
  resourceSelectors:
    - group: ""
      kind: Namespace
      version: v1
      name: app
  strategy:
    applyStrategy:
      whenToApply: IfNotDrifted
"#;

/// The JSON of the placement status of `cluster` in placement `name`.
fn cluster_status(hub: &HubProcess, name: &str, cluster: &str) -> serde_json::Value {
    let out = hub.kubectl_ok(&["get", "crp", name, "-o", "json"]);
    let crp: serde_json::Value = serde_json::from_str(&out).unwrap();
    crp["status"]["placementStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["clusterName"] == cluster)
        .cloned()
        .unwrap_or_default()
}

#[test]
fn an_override_changes_one_cluster_and_member_edits_are_reported_as_drift() {
    // Simulated time runs 20x, so the applier's once-a-minute drift check comes every 3 s.
    let hub = fleet("20");
    hub.create(&app_with_settings());
    hub.create(OVERRIDE);
    hub.create(GUARDED_PLACEMENT);
    wait_available(&hub, "app");

    // member-cluster-02 is the staging member: one replica, labelled with its name.
    let staging = member_kubeconfig(&hub, "member-cluster-02");
    let got = on_member(
        &hub,
        &staging,
        &[
            "get",
            "deployment",
            "web",
            "-n",
            "app",
            "-o",
            "jsonpath={.spec.replicas} {.metadata.labels.placed-on}",
        ],
    );
    assert_eq!(got.as_deref(), Some("1 member-cluster-02"));
    let canary = member_kubeconfig(&hub, "member-cluster-01");
    let got = on_member(
        &hub,
        &canary,
        &[
            "get",
            "deployment",
            "web",
            "-n",
            "app",
            "-o",
            "jsonpath={.spec.replicas}",
        ],
    );
    assert_eq!(got.as_deref(), Some("2"));
    let status = cluster_status(&hub, "app", "member-cluster-02");
    assert_eq!(
        status["applicableResourceOverrides"][0]["name"], "fewer-on-staging-0",
        "{status}"
    );
    assert!(
        cluster_status(&hub, "app", "member-cluster-01")["applicableResourceOverrides"].is_null()
    );

    // An edit on a member is drift: reported, and (IfNotDrifted) not overwritten.
    on_member(
        &hub,
        &canary,
        &[
            "patch",
            "configmap",
            "settings",
            "-n",
            "app",
            "--type=merge",
            "-p",
            r#"{"data":{"greeting":"changed by hand"}}"#,
        ],
    )
    .expect("edit on the member");
    let drifted = eventually("the drift reported", 60, || {
        let status = cluster_status(&hub, "app", "member-cluster-01");
        status["driftedPlacements"]
            .as_array()
            .and_then(|d| d.first().cloned())
    });
    assert_eq!(drifted["kind"], "ConfigMap", "{drifted}");
    assert_eq!(drifted["name"], "settings", "{drifted}");
    let paths: Vec<&str> = drifted["observedDrifts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["path"].as_str())
        .collect();
    assert!(paths.contains(&"/data/greeting"), "{drifted}");
    let kept = on_member(
        &hub,
        &canary,
        &[
            "get",
            "configmap",
            "settings",
            "-n",
            "app",
            "-o",
            "jsonpath={.data.greeting}",
        ],
    );
    assert_eq!(kept.as_deref(), Some("changed by hand"));
}

#[test]
fn evictions_budgets_empty_selections_and_previews_explain_themselves() {
    let hub = fleet("1");
    hub.create(&app_with_settings());
    hub.create(PICK_ALL_APP);
    wait_available(&hub, "app");

    // A budget that allows no disruption blocks the eviction, and says why.
    hub.create(
        r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementDisruptionBudget
metadata:
  name: app
spec:
  minAvailable: 6
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementEviction
metadata:
  name: leave-01
spec:
  placementName: app
  clusterName: member-cluster-01
"#,
    );
    let verdict = eventually("the eviction judged", 60, || {
        let out = hub.kubectl_ok(&[
            "get",
            "crpe",
            "leave-01",
            "-o",
            r#"jsonpath={.status.conditions[?(@.type=="Valid")].status} {.status.conditions[?(@.type=="Executed")].status} {.status.conditions[?(@.type=="Executed")].message}"#,
        ]);
        (!out.trim().is_empty()).then_some(out)
    });
    assert!(verdict.starts_with("True False "), "{verdict}");
    assert!(verdict.contains("minAvailable 6"), "{verdict}");
    let bindings = hub.kubectl_ok(&["get", "crb", "-o", "name"]);
    assert_eq!(bindings.lines().count(), 6, "the binding stays: {bindings}");

    // A placement whose selectors match nothing says so instead of failing.
    hub.create(
        r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: nothing
spec:
  resourceSelectors:
    - group: ""
      kind: Namespace
      version: v1
      name: absent
"#,
    );
    let selected = eventually("the selection condition", 60, || {
        let out = hub.kubectl_ok(&[
            "get",
            "crp",
            "nothing",
            "-o",
            r#"jsonpath={.status.conditions[?(@.type=="ClusterResourcePlacementResourcesSelected")].reason}"#,
        ]);
        (!out.is_empty()).then_some(out)
    });
    assert_eq!(selected, "NoResourcesSelected");

    // Preview: every cluster's verdict, score and reason, nothing created.
    let file = hub.dir().join("pick-two.yaml");
    std::fs::write(
        &file,
        r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: pick-two
spec:
  resourceSelectors:
    - group: ""
      kind: Namespace
      version: v1
      name: app
  policy:
    placementType: PickN
    numberOfClusters: 2
    affinity:
      clusterAffinity:
        preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            preference:
              propertySorter:
                name: resources.kubernetes-fleet.io/available-cpu
                sortOrder: Descending
"#,
    )
    .unwrap();
    let out = preview(&hub, &file);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.starts_with("Placement pick-two (PickN, 2 wanted) on 6 member clusters: 2 selected."),
        "{text}"
    );
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("member-cluster-"))
        .collect();
    assert_eq!(rows.len(), 6, "{text}");
    assert_eq!(
        rows.iter().filter(|r| r.contains(" selected ")).count(),
        2,
        "{text}"
    );
    // member-cluster-06 has the most available CPU in the default fleet: full weight.
    let best = rows
        .iter()
        .find(|r| r.starts_with("member-cluster-06"))
        .unwrap();
    assert!(
        best.contains(" selected ") && best.contains(" 100 "),
        "{text}"
    );
    // A new placement may bind N + maxSurge at once: both picked clusters in the first wave.
    assert!(
        text.contains("Rollout order")
            && text.contains("  1. member-cluster-04, member-cluster-06"),
        "{text}"
    );
    let created = hub.kubectl(&["get", "crp", "pick-two"]);
    assert!(!created.status.success(), "preview created the placement");

    // A bad placement gets the hub's validation error, naming the field.
    std::fs::write(
        &file,
        r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: bad
spec:
  resourceSelectors:
    - {group: "", kind: Namespace, version: v1, name: app}
  policy:
    placementType: PickFixed
    numberOfClusters: 2
"#,
    )
    .unwrap();
    let out = preview(&hub, &file);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("spec.policy"), "{err}");
}
