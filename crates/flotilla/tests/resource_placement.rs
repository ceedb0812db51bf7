//! The namespaced ResourcePlacement end to end with the real kubectl on the simulated fleet:
//! a ClusterResourcePlacement places the namespace alone (`NamespaceOnly`) on every member,
//! then a ResourcePlacement in it places a Deployment and a ConfigMap on the two members its
//! policy picks, with a ResourceOverride for one of them; its snapshots and bindings live in
//! its namespace, its Works are `<namespace>.<placement>-work`, and deleting it cleans the
//! members it used (the namespace stays, the CRP's). A ResourcePlacement in a namespace that
//! no member has says why it cannot apply. A StagedUpdateRun rolls an External
//! ResourcePlacement out stage by stage, behind an ApprovalRequest in its namespace.

mod common;

use common::{
    HubProcess, PLACEMENT_COLUMNS, app, current_condition, eventually, fleet, get_json,
    member_kubeconfig, on_member, settings,
};
use serde_json::Value;

/// A ConfigMap of `shop` the ResourcePlacement does not select, and the CRP that places
/// namespace `shop` alone (`NamespaceOnly`), not its content.
const NAMESPACE_PLACEMENT: &str = r#"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: unselected
  namespace: shop
data:
  greeting: never placed
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: shop-namespace
spec:
  resourceSelectors:
    - group: ""
      kind: Namespace
      version: v1
      name: shop
      selectionScope: NamespaceOnly
"#;

/// Two members are labelled `fleet.azure.com/location: westus` in the default fleet: -02 (the
/// staging member) and -05. The override gives the staging member one replica.
const PLACEMENT_AND_OVERRIDE: &str = r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ResourceOverride
metadata:
  name: fewer-on-staging
  namespace: shop
spec:
  placement:
    name: web
    scope: Namespaced
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
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ResourcePlacement
metadata:
  name: web
  namespace: shop
spec:
  resourceSelectors:
    - group: apps
      kind: Deployment
      version: v1
      name: web
    - group: ""
      kind: ConfigMap
      version: v1
      name: settings
  policy:
    placementType: PickN
    numberOfClusters: 2
    affinity:
      clusterAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          clusterSelectorTerms:
            - labelSelector:
                matchLabels:
                  fleet.azure.com/location: westus
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 1
      maxSurge: 1
      unavailablePeriodSeconds: 1
"#;

const CHOSEN: [&str; 2] = ["member-cluster-02", "member-cluster-05"];
const OTHERS: [&str; 4] = [
    "member-cluster-01",
    "member-cluster-03",
    "member-cluster-04",
    "member-cluster-06",
];

/// The names of the listed objects, sorted.
fn names(list: &Value) -> Vec<String> {
    let mut names: Vec<String> = list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    names.sort();
    names
}

/// Waits until the ResourcePlacement `name` of `namespace` is Available for its generation.
/// Waits until the CRP `shop-namespace` placed namespace `shop` on every member.
fn wait_namespace_placed(hub: &HubProcess) {
    eventually("the namespace placed everywhere", 120, || {
        let available = current_condition(
            hub,
            &["crp", "shop-namespace"],
            "ClusterResourcePlacementAvailable",
        );
        (available.as_deref() == Some("True")).then_some(())
    });
}

fn wait_rp_available(hub: &HubProcess, namespace: &str, name: &str) {
    eventually("the ResourcePlacement Available", 120, || {
        let condition = current_condition(
            hub,
            &["rp", name, "-n", namespace],
            "ResourcePlacementAvailable",
        );
        (condition.as_deref() == Some("True")).then_some(())
    });
}

/// `JSONPATH` of Deployment `web` in `shop` on `member`, or `None` if it is not there.
fn member_web(hub: &HubProcess, member: &str, path: &str) -> Option<String> {
    let config = member_kubeconfig(hub, member);
    let jsonpath = format!("jsonpath={path}");
    on_member(
        hub,
        &config,
        &["get", "deployment", "web", "-n", "shop", "-o", &jsonpath],
    )
}

#[test]
fn a_resource_placement_places_namespaced_resources_on_the_picked_members() {
    let hub = fleet("1");
    hub.create(&format!(
        "{}{}{NAMESPACE_PLACEMENT}",
        app("shop", 2),
        settings("shop")
    ));
    wait_namespace_placed(&hub);
    hub.create(PLACEMENT_AND_OVERRIDE);
    wait_rp_available(&hub, "shop", "web");

    // `kubectl get rp` shows the placement's state at a glance.
    let table = hub.kubectl_ok(&["get", "rp", "-n", "shop"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, PLACEMENT_COLUMNS);
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(&row[..6], ["web", "1", "True", "1", "True", "1"], "{table}");

    // Its records live in its namespace, named and labelled as KubeFleet's, owned by it.
    let policy = get_json(&hub, &["sps", "-n", "shop"]);
    assert_eq!(names(&policy), ["web-0"]);
    let labels = &policy["items"][0]["metadata"]["labels"];
    assert_eq!(labels["kubernetes-fleet.io/parent-CRP"], "web", "{labels}");
    assert_eq!(labels["kubernetes-fleet.io/policy-index"], "0", "{labels}");
    assert_eq!(labels["kubernetes-fleet.io/is-latest-snapshot"], "true");
    let owner = &policy["items"][0]["metadata"]["ownerReferences"][0];
    assert_eq!(
        (owner["kind"].as_str(), owner["name"].as_str()),
        (Some("ResourcePlacement"), Some("web"))
    );
    // (`rs` is kubectl's short name of ReplicaSets; KubeFleet's `rs` loses to it.)
    let resources = get_json(
        &hub,
        &[
            "resourcesnapshots",
            "-n",
            "shop",
            "-l",
            "kubernetes-fleet.io/parent-CRP=web,kubernetes-fleet.io/is-latest-snapshot=true",
        ],
    );
    assert_eq!(names(&resources), ["web-0-snapshot"]);
    assert_eq!(
        resources["items"][0]["metadata"]["labels"]["kubernetes-fleet.io/resource-index"],
        "0"
    );
    let bindings = get_json(&hub, &["rb", "-n", "shop"]);
    let mut targets: Vec<&str> = bindings["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            assert_eq!(
                b["metadata"]["labels"]["kubernetes-fleet.io/parent-CRP"],
                "web"
            );
            assert_eq!(b["spec"]["state"], "Bound", "{b}");
            assert_eq!(b["spec"]["resourceSnapshotName"], "web-0-snapshot", "{b}");
            b["spec"]["targetCluster"].as_str().unwrap()
        })
        .collect();
    targets.sort();
    assert_eq!(targets, CHOSEN);
    // The CRP's bindings are its own: one per member, none of them the RP's.
    let cluster_bindings = get_json(&hub, &["crb"]);
    assert_eq!(names(&cluster_bindings).len(), 6);
    let works = get_json(&hub, &["works", "-n", "fleet-member-member-cluster-05"]);
    assert_eq!(names(&works), ["shop-namespace-work", "shop.web-work"]);
    let work = &works["items"][1];
    assert_eq!(
        work["metadata"]["labels"]["kubernetes-fleet.io/parent-placement-namespace"],
        "shop"
    );

    // Status: the selected resources, the override on the staging member only.
    let rp = get_json(&hub, &["rp", "web", "-n", "shop"]);
    let selected: Vec<String> = rp["status"]["selectedResources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{}/{}/{}", r["kind"], r["namespace"], r["name"]))
        .collect();
    assert_eq!(
        selected,
        [
            r#""ConfigMap"/"shop"/"settings""#,
            r#""Deployment"/"shop"/"web""#
        ]
    );
    let statuses = rp["status"]["placementStatuses"].as_array().unwrap();
    let status_of = |cluster: &str| {
        statuses
            .iter()
            .find(|s| s["clusterName"] == cluster)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(
        status_of("member-cluster-02")["applicableResourceOverrides"][0]["name"],
        "fewer-on-staging-0"
    );
    assert!(status_of("member-cluster-05")["applicableResourceOverrides"].is_null());

    // The Deployment runs on exactly the picked members, overridden on the staging one.
    for (member, replicas) in [("member-cluster-02", "1/1"), ("member-cluster-05", "2/2")] {
        let running = member_web(&hub, member, "{.spec.replicas}/{.status.readyReplicas}");
        assert_eq!(running.as_deref(), Some(replicas), "{member}");
    }
    for member in OTHERS {
        assert_eq!(
            member_web(&hub, member, "{.metadata.name}"),
            None,
            "{member}"
        );
    }
    let picked = member_kubeconfig(&hub, "member-cluster-05");
    let configmaps = on_member(
        &hub,
        &picked,
        &["get", "configmaps", "-n", "shop", "-o", "name"],
    )
    .unwrap();
    assert!(configmaps.contains("configmap/settings"), "{configmaps}");
    assert!(!configmaps.contains("unselected"), "{configmaps}");

    // Deleting the placement cleans what it placed; the namespace (the CRP's) stays.
    hub.kubectl_ok(&["delete", "rp", "web", "-n", "shop", "--timeout=120s"]);
    for member in CHOSEN {
        eventually("the Deployment gone from the member", 60, || {
            member_web(&hub, member, "{.metadata.name}")
                .is_none()
                .then_some(())
        });
        let config = member_kubeconfig(&hub, member);
        assert!(on_member(&hub, &config, &["get", "namespace", "shop"]).is_some());
        let left = on_member(
            &hub,
            &config,
            &["get", "configmap", "settings", "-n", "shop"],
        );
        assert!(left.is_none(), "{member}: {left:?}");
    }
    assert!(names(&get_json(&hub, &["rb", "-n", "shop"])).is_empty());
    let works = get_json(&hub, &["works", "-n", "fleet-member-member-cluster-05"]);
    assert_eq!(names(&works), ["shop-namespace-work"]);
}

#[test]
fn a_resource_placement_whose_namespace_is_missing_on_a_member_says_so() {
    let hub = fleet("1");
    hub.create(
        r#"
apiVersion: v1
kind: Namespace
metadata:
  name: lonely
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: lonely
data:
  greeting: hello
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ResourcePlacement
metadata:
  name: settings
  namespace: lonely
spec:
  resourceSelectors:
    - group: ""
      kind: ConfigMap
      version: v1
      name: settings
  policy:
    placementType: PickFixed
    clusterNames: [member-cluster-01]
"#,
    );
    let failed = eventually("the apply failure reported", 120, || {
        let rp = get_json(&hub, &["rp", "settings", "-n", "lonely"]);
        rp["status"]["placementStatuses"][0]["failedPlacements"]
            .as_array()
            .and_then(|f| f.first().cloned())
    });
    assert_eq!(failed["kind"], "ConfigMap", "{failed}");
    let message = failed["condition"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(r#"namespaces "lonely" not found"#),
        "{failed}"
    );
    assert_eq!(
        current_condition(
            &hub,
            &["rp", "settings", "-n", "lonely"],
            "ResourcePlacementApplied"
        )
        .as_deref(),
        Some("False")
    );
}

/// A ResourcePlacement under the External strategy, a StagedUpdateStrategy (canary first, by
/// the `name` label, then an approval; every other member after) and a StagedUpdateRun, all
/// in namespace `shop`.
const STAGED_RESOURCE_PLACEMENT: &str = r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ResourcePlacement
metadata:
  name: settings
  namespace: shop
spec:
  resourceSelectors:
    - group: ""
      kind: ConfigMap
      version: v1
      name: settings
  policy:
    placementType: PickAll
  strategy:
    type: External
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: StagedUpdateStrategy
metadata:
  name: canary-first
  namespace: shop
spec:
  stages:
    - name: canary
      labelSelector:
        matchLabels:
          environment: canary
      sortingLabelKey: name
      afterStageTasks:
        - type: Approval
    - name: rest
      labelSelector:
        matchExpressions:
          - {key: environment, operator: NotIn, values: [canary]}
      maxConcurrency: 50%
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: StagedUpdateRun
metadata:
  name: roll
  namespace: shop
spec:
  placementName: settings
  stagedRolloutStrategyName: canary-first
"#;

/// Members of the default fleet holding ConfigMap `settings` of `shop`.
fn members_with_settings(hub: &HubProcess) -> Vec<String> {
    let members = get_json(hub, &["memberclusters"]);
    names(&members)
        .into_iter()
        .filter(|member| {
            let kubeconfig = member_kubeconfig(hub, member);
            on_member(
                hub,
                &kubeconfig,
                &["get", "configmap", "settings", "-n", "shop"],
            )
            .is_some()
        })
        .collect()
}

#[test]
fn a_staged_update_run_rolls_a_resource_placement_out_stage_by_stage() {
    let hub = fleet("1");
    let namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n";
    hub.create(&format!(
        "{namespace}{}{NAMESPACE_PLACEMENT}",
        settings("shop")
    ));
    wait_namespace_placed(&hub);
    hub.create(STAGED_RESOURCE_PLACEMENT);

    // The canary members get the ConfigMap, then the run waits for the approval request in
    // the run's namespace; nobody else has it yet.
    let request = "roll-after-canary";
    eventually("the canary approval request", 120, || {
        let out = hub.kubectl(&["get", "approvalrequests", "-n", "shop", request]);
        out.status.success().then_some(())
    });
    let canary: Vec<String> = names(&get_json(
        &hub,
        &["memberclusters", "-l", "environment=canary"],
    ));
    assert!(!canary.is_empty());
    assert_eq!(members_with_settings(&hub), canary);
    let run = get_json(&hub, &["stagedupdaterun", "-n", "shop", "roll"]);
    let progressing = run["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Progressing")
        .unwrap();
    assert_eq!(progressing["reason"], "UpdateRunWaiting", "{progressing}");
    let owner = &get_json(&hub, &["approvalrequests", "-n", "shop", request])["metadata"]["ownerReferences"]
        [0];
    assert_eq!(
        (owner["kind"].as_str(), owner["name"].as_str()),
        (Some("StagedUpdateRun"), Some("roll"))
    );

    // The run names the command that approves it, namespace included; it works.
    let hint = progressing["message"].as_str().unwrap_or_default();
    assert!(
        hint.contains("flotilla approve roll-after-canary -n shop"),
        "{hint}"
    );
    let approved = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["approve", request, "-n", "shop", "--kubeconfig"])
        .arg(hub.kubeconfig())
        .output()
        .unwrap();
    assert!(approved.status.success(), "{approved:?}");
    assert_eq!(
        String::from_utf8_lossy(&approved.stdout).trim(),
        format!("approvalrequest.placement.kubernetes-fleet.io/{request} approved")
    );
    eventually("the run succeeded", 120, || {
        let run = get_json(&hub, &["stagedupdaterun", "-n", "shop", "roll"]);
        run["status"]["conditions"]
            .as_array()?
            .iter()
            .any(|c| c["type"] == "Succeeded" && c["status"] == "True")
            .then_some(())
    });
    assert_eq!(members_with_settings(&hub).len(), 6);
    let table = hub.kubectl_ok(&["get", "sur", "-n", "shop"]);
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    // The resource snapshot index column shows the index the run uses (the latest, here).
    assert_eq!(
        row[..6],
        ["roll", "settings", "0", "0", "True", "True"],
        "{table}"
    );
}
