//! A real Kubernetes cluster (kube-apiserver, controller-manager, scheduler, kwok nodes, from
//! `tools/kube/cluster`) joined to a Flotilla hub the way the README says: `flotilla join NAME
//! | kubectl apply -f -`, the agent running in the cluster as its service account. kwok runs no
//! containers, so the agent's Deployment is run as a local process with exactly what its pod
//! would get ([`flotilla_testkit::InClusterProcess`]): the Deployment's args and env, the
//! Secret mounted, a service account token from the TokenRequest API, the cluster's root CA
//! and the service host and port variables.

mod common;

use std::process::{Child, Command, Output, Stdio};

use common::{HubProcess, current_condition, eventually, get_json};
use flotilla_testkit::{ClusterOptions, RealCluster};
use serde_json::Value;

fn flotilla(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(args)
        .output()
        .expect("run flotilla")
}

/// The agent process, killed when dropped, and its mounted files.
struct Agent {
    child: Child,
    log: std::path::PathBuf,
    _mounts: flotilla_testkit::InClusterProcess,
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            eprintln!("== the agent's log\n{log}");
        }
    }
}

/// Starts the agent as the member's Deployment `fleet-system/flotilla-member-agent` runs it,
/// logging to `log`.
fn start_agent(cluster: &RealCluster, log: &std::path::Path) -> Agent {
    let mut process = cluster.in_cluster_process("fleet-system", "flotilla-member-agent");
    // The pod has its own network; here the metrics port must not collide with other tests.
    let at = process
        .args
        .iter()
        .position(|a| a == "--metrics-bind-address")
        .expect("the Deployment sets the metrics address");
    assert_eq!(process.args[at + 1], "0.0.0.0:8080");
    process.args[at + 1] = "127.0.0.1:0".into();
    let log_file = std::fs::File::create(log).expect("agent log");
    let child = process
        .command(std::path::Path::new(env!("CARGO_BIN_EXE_flotilla")))
        .arg("--service-account-dir")
        .arg(&process.service_account_dir)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log_file)
        .spawn()
        .expect("spawn the agent");
    Agent {
        child,
        log: log.to_path_buf(),
        _mounts: process,
    }
}

const MEMBER: &str = "apiVersion: cluster.kubernetes-fleet.io/v1
kind: MemberCluster
metadata:
  name: real-1
  labels: {environment: production}
spec:
  identity: {kind: ServiceAccount, name: flotilla-member-agent, namespace: fleet-system}
  heartbeatPeriodSeconds: 5
";

const PRICES: &str = "apiVersion: v1
kind: ConfigMap
metadata: {name: node-prices, namespace: fleet-system}
data:
  prices.yaml: |
    prices:
    - instanceType: Standard_D8s_v5
      region: eastus
      hourly: 0.384
";

/// What the placement carries: a namespace with a Deployment, a ConfigMap, a ResourceQuota
/// and a NetworkPolicy; a user CRD and an instance of it.
const WORKLOAD: &str = r#"apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        resources: {requests: {cpu: 100m, memory: 64Mi}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {greeting: hello}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: shop-quota, namespace: shop}
spec:
  hard: {pods: "20", requests.cpu: "4"}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: web-ingress, namespace: shop}
spec:
  podSelector: {matchLabels: {app: web}}
  policyTypes: [Ingress]
  ingress:
  - ports: [{port: 80, protocol: TCP}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
"#;

const WIDGET: &str = "apiVersion: example.com/v1
kind: Widget
metadata: {name: blue, namespace: shop}
spec: {size: 3}
";

const PLACEMENT: &str = "apiVersion: placement.kubernetes-fleet.io/v1
kind: ClusterResourcePlacement
metadata: {name: shop}
spec:
  resourceSelectors:
  - {group: '', version: v1, kind: Namespace, name: shop}
  - {group: apiextensions.k8s.io, version: v1, kind: CustomResourceDefinition, name: widgets.example.com}
  policy:
    placementType: PickAll
";

/// (status, reason, message) of condition `type_` in `status` (an object's `status`, or one
/// entry of a placement's per-cluster statuses); empty when it has none.
fn condition_in(status: &serde_json::Value, type_: &str) -> (String, String, String) {
    let found = status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == type_)
        .cloned()
        .unwrap_or_default();
    let text = |k: &str| found[k].as_str().unwrap_or_default().to_string();
    (text("status"), text("reason"), text("message"))
}

/// Condition `type_` of the object `kubectl get TARGET` names.
fn condition(hub: &HubProcess, target: &[&str], type_: &str) -> (String, String, String) {
    condition_in(&get_json(hub, target)["status"], type_)
}

/// The placement's per-cluster condition `type_` on `cluster`.
fn per_cluster(hub: &HubProcess, cluster: &str, type_: &str) -> (String, String, String) {
    let crp = get_json(hub, &["crp", "shop"]);
    let entry = crp["status"]["placementStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["clusterName"] == cluster)
        .cloned()
        .unwrap_or_default();
    condition_in(&entry, type_)
}

#[test]
fn a_real_cluster_joined_with_flotilla_join_gets_what_is_placed_and_says_why_when_it_cannot() {
    let hub = HubProcess::start();
    let cluster = RealCluster::start_with(&ClusterOptions {
        nodes: 2,
        node_labels: vec![
            "node.kubernetes.io/instance-type=Standard_D8s_v5".into(),
            "topology.kubernetes.io/region=eastus".into(),
        ],
        ..ClusterOptions::default()
    });
    hub.create(MEMBER);

    // `flotilla join` prints the manifests; kubectl applies them to the member as printed.
    let joined = flotilla(&[
        "join",
        "real-1",
        "--kubeconfig",
        hub.kubeconfig().to_str().unwrap(),
        "--image",
        "registry.example/flotilla:test",
        "--prices-configmap",
        "fleet-system/node-prices",
    ]);
    assert!(
        joined.status.success(),
        "{}",
        String::from_utf8_lossy(&joined.stderr)
    );
    let manifests = String::from_utf8(joined.stdout).unwrap();
    let applied = cluster.kubectl_stdin(&["apply", "-f", "-"], &manifests);
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
    let applied = cluster.kubectl_stdin(&["apply", "-f", "-"], PRICES);
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
    eventually(
        "the cluster publishes its root CA in fleet-system",
        30,
        || {
            cluster
                .kubectl(&["get", "configmap", "kube-root-ca.crt", "-n", "fleet-system"])
                .status
                .success()
                .then_some(())
        },
    );

    // First without the agent's ClusterRoleBindings: it may not install its
    // CustomResourceDefinition, and both the MemberCluster and the placement say so.
    cluster.kubectl_ok(&[
        "delete",
        "clusterrolebinding",
        "flotilla-member-agent",
        "flotilla-member-agent-placement",
    ]);
    let log = tempfile::NamedTempFile::new().unwrap();
    let agent = start_agent(&cluster, log.path());
    hub.kubectl_stdin(&["apply", "-f", "-"], WORKLOAD);
    hub.create(WIDGET);
    hub.create(PLACEMENT);
    let (status, reason, message) = eventually("Healthy=False on the MemberCluster", 60, || {
        let c = condition(&hub, &["membercluster", "real-1"], "Healthy");
        (c.0 == "False").then_some(c)
    });
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "MemberSetupFailed")
    );
    assert!(
        message.contains("customresourcedefinitions")
            || message.contains("CustomResourceDefinition"),
        "{message}"
    );
    assert!(message.contains("`flotilla join` prints"), "{message}");
    let (status, _, message) = eventually("the placement says why for real-1", 180, || {
        let c = per_cluster(&hub, "real-1", "Applied");
        (c.0 == "False" && c.2.contains("AppliedWork")).then_some(c)
    });
    assert_eq!(status, "False");
    assert!(message.contains("may not record this Work"), "{message}");
    assert!(message.contains("`flotilla join` prints"), "{message}");

    // The binding back: the agent installs its definition at its next heartbeat and the
    // placement arrives, every kind of it.
    let applied = cluster.kubectl_stdin(&["apply", "-f", "-"], &manifests);
    assert!(applied.status.success());
    eventually("placement Available", 180, || {
        (current_condition(&hub, &["crp", "shop"], "ClusterResourcePlacementAvailable").as_deref()
            == Some("True"))
        .then_some(())
    });
    let crd = cluster.kubectl_ok(&[
        "get",
        "crd",
        "appliedworks.placement.kubernetes-fleet.io",
        "-o",
        "jsonpath={.metadata.labels.app\\.kubernetes\\.io/part-of}",
    ]);
    assert_eq!(crd, "flotilla-member-agent");
    assert_eq!(
        cluster.kubectl_ok(&[
            "get",
            "deployment",
            "web",
            "-n",
            "shop",
            "-o",
            "jsonpath={.status.availableReplicas}"
        ]),
        "2"
    );
    for object in [
        ["configmap", "settings"],
        ["resourcequota", "shop-quota"],
        ["networkpolicy", "web-ingress"],
        ["widget", "blue"],
    ] {
        let out = cluster.kubectl(&["get", object[0], object[1], "-n", "shop"]);
        assert!(
            out.status.success(),
            "{object:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The member's real quota controller acts on the placed quota.
    eventually("the quota counts the placed pods", 60, || {
        let used = cluster.kubectl_ok(&[
            "get",
            "resourcequota",
            "shop-quota",
            "-n",
            "shop",
            "-o",
            "jsonpath={.status.used.pods}",
        ]);
        (used == "2").then_some(())
    });

    // Properties from the real nodes and pods, cost from the price ConfigMap.
    let properties = get_json(&hub, &["membercluster", "real-1"])["status"]["properties"].clone();
    let value = |name: &str| {
        properties[name]["value"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(value("kubernetes-fleet.io/node-count"), "2");
    assert_eq!(value("resources.kubernetes-fleet.io/allocatable-cpu"), "16");
    // 2 nodes × 0.384 an hour over 16 cores.
    assert_eq!(value("kubernetes.azure.com/per-cpu-core-cost"), "0.048");
    let (status, _, _) = condition(&hub, &["membercluster", "real-1"], "Healthy");
    assert_eq!(status, "True");

    // Leaving removes everything placed, and the agent says how to remove it.
    hub.kubectl_ok(&["delete", "membercluster", "real-1", "--timeout=120s"]);
    eventually("namespace shop gone from the member", 120, || {
        (!cluster
            .kubectl(&["get", "namespace", "shop"])
            .status
            .success())
        .then_some(())
    });
    assert!(
        !cluster
            .kubectl(&["get", "crd", "widgets.example.com"])
            .status
            .success()
    );
    let text = std::fs::read_to_string(log.path()).unwrap();
    assert!(
        text.contains("kubectl delete namespace,clusterrole,clusterrolebinding,customresourcedefinition -l app.kubernetes.io/part-of=flotilla-member-agent"),
        "{text}"
    );
    drop(agent);
}

/// A namespace `name` with a ConfigMap `settings` saying `greeting`.
fn namespace_with_settings(name: &str, greeting: &str) -> String {
    format!(
        "apiVersion: v1
kind: Namespace
metadata: {{name: {name}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: settings, namespace: {name}}}
data: {{greeting: {greeting}}}
"
    )
}

/// A PickAll placement `name` of namespace `name` with `strategy` as its apply strategy.
fn placement_with(name: &str, strategy: &str) -> String {
    format!(
        "apiVersion: placement.kubernetes-fleet.io/v1
kind: ClusterResourcePlacement
metadata: {{name: {name}}}
spec:
  resourceSelectors:
  - {{group: '', version: v1, kind: Namespace, name: {name}}}
  policy: {{placementType: PickAll}}
  strategy:
    applyStrategy: {strategy}
"
    )
}

/// The reason `real-1` reports for ConfigMap `settings` among the placement's `list`
/// (`failedPlacements`, `driftedPlacements`), if it is there.
fn reported(hub: &HubProcess, crp: &str, list: &str) -> Option<Value> {
    let json = get_json(hub, &["crp", crp]);
    json["status"]["placementStatuses"]
        .as_array()?
        .iter()
        .find(|s| s["clusterName"] == "real-1")?[list]
        .as_array()?
        .iter()
        .find(|r| r["kind"] == "ConfigMap" && r["name"] == "settings")
        .cloned()
}

#[test]
fn takeover_and_drift_on_a_real_cluster() {
    let hub = HubProcess::start();
    let cluster = RealCluster::start();
    hub.create(MEMBER);
    let token = common::issue_token(&hub.kubeconfig(), "real-1");
    let mut agent = common::member_agent(
        &hub.server(),
        &hub.dir().join("ca.crt"),
        &token,
        "real-1",
        &cluster.kubeconfig(),
    );
    agent.stdout(Stdio::null()).stderr(Stdio::null());
    let mut agent = agent.spawn().expect("flotilla member");

    // On the member before anything is placed: each namespace and ConfigMap already exists,
    // saying "old"; the hub's say "new".
    for mode in ["always", "ifnodiff", "never"] {
        let name = format!("take-{mode}");
        let out = cluster.kubectl_stdin(
            &["apply", "-f", "-"],
            &namespace_with_settings(&name, "old"),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = hub.kubectl_stdin(
            &["apply", "-f", "-"],
            &namespace_with_settings(&name, "new"),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    hub.create(&placement_with(
        "take-always",
        "{whenToTakeOver: Always, whenToApply: IfNotDrifted}",
    ));
    hub.create(&placement_with(
        "take-ifnodiff",
        "{whenToTakeOver: IfNoDiff}",
    ));
    hub.create(&placement_with("take-never", "{whenToTakeOver: Never}"));
    let greeting = |ns: &str| {
        cluster.kubectl_ok(&[
            "get",
            "configmap",
            "settings",
            "-n",
            ns,
            "-o",
            "jsonpath={.data.greeting}",
        ])
    };

    // Always: taken over, the hub's content applied, owned by the AppliedWork.
    eventually("take-always available", 120, || {
        (current_condition(
            &hub,
            &["crp", "take-always"],
            "ClusterResourcePlacementAvailable",
        )
        .as_deref()
            == Some("True"))
        .then_some(())
    });
    assert_eq!(greeting("take-always"), "new");
    let owners = cluster.kubectl_ok(&[
        "get",
        "configmap",
        "settings",
        "-n",
        "take-always",
        "-o",
        "jsonpath={.metadata.ownerReferences[*].kind}",
    ]);
    assert_eq!(owners, "AppliedWork");
    // IfNoDiff: the ConfigMap differs, so it is not taken over and the placement says so.
    let refused = eventually("take-ifnodiff reports its ConfigMap", 120, || {
        reported(&hub, "take-ifnodiff", "failedPlacements")
    });
    assert_eq!(
        refused["condition"]["reason"], "FailedToTakeOver",
        "{refused}"
    );
    assert_eq!(greeting("take-ifnodiff"), "old");
    // Never: not taken over.
    let refused = eventually("take-never reports its ConfigMap", 120, || {
        reported(&hub, "take-never", "failedPlacements")
    });
    assert_eq!(refused["condition"]["reason"], "NotTakenOver", "{refused}");
    assert_eq!(greeting("take-never"), "old");

    // Drift under IfNotDrifted: reported with the path, the member's value and the hub's,
    // and left alone; whenToApply: Always then puts it right.
    cluster.kubectl_ok(&[
        "patch",
        "configmap",
        "settings",
        "-n",
        "take-always",
        "--type=merge",
        "-p",
        r#"{"data":{"greeting":"edited"}}"#,
    ]);
    let drift = eventually("the drift reported", 120, || {
        reported(&hub, "take-always", "driftedPlacements")
    });
    let detail = &drift["observedDrifts"][0];
    assert_eq!(detail["path"], "/data/greeting", "{drift}");
    assert_eq!(detail["valueInMember"], "edited", "{drift}");
    assert_eq!(detail["valueInHub"], "new", "{drift}");
    assert_eq!(greeting("take-always"), "edited");
    hub.kubectl_ok(&[
        "patch",
        "crp",
        "take-always",
        "--type=merge",
        "-p",
        r#"{"spec":{"strategy":{"applyStrategy":{"whenToApply":"Always"}}}}"#,
    ]);
    eventually("the drift corrected", 120, || {
        (greeting("take-always") == "new").then_some(())
    });
    let _ = agent.kill();
    let _ = agent.wait();
}
