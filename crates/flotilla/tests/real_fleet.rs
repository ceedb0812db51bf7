//! Seed 001 and seed 004 on three real clusters (kube-apiserver, controller-manager, scheduler
//! and kwok nodes from `tools/kube/cluster`), each joined by `flotilla member` with a price
//! table: properties from the real nodes, PickN by cost, a per-cluster override, drift
//! corrected, a member's kube-apiserver crashing mid-rollout, an eviction under a disruption
//! budget, a staged update run with a timed wait and an approval, and leaving. Each runs twice:
//! with Flotilla's hub (`flotilla up`), and with a real kube-apiserver as the hub (Flotilla's
//! CRDs installed, `flotilla controllers` against it).

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::logged::LoggedChild;
use common::{HubProcess, eventually};
use flotilla_testkit::{ClusterOptions, RealCluster};
use serde_json::Value;

/// The hub: Flotilla's own (`flotilla up`), or a real kube-apiserver with Flotilla's CRDs
/// (`flotilla crds | kubectl apply -f -`) and `flotilla controllers`.
enum Hub {
    Flotilla(HubProcess),
    Kubernetes {
        cluster: RealCluster,
        _controllers: LoggedChild,
    },
}

impl Hub {
    /// A real kube-apiserver with Flotilla's CRDs and its controllers running against it.
    fn kubernetes() -> Hub {
        let cluster = RealCluster::start();
        let crds = Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .arg("crds")
            .output()
            .expect("flotilla crds");
        let applied = cluster.kubectl_stdin(
            &["apply", "-f", "-"],
            &String::from_utf8_lossy(&crds.stdout),
        );
        assert!(
            applied.status.success(),
            "{}",
            String::from_utf8_lossy(&applied.stderr)
        );
        eventually("the fleet kinds served", 30, || {
            cluster
                .kubectl(&["get", "memberclusters"])
                .status
                .success()
                .then_some(())
        });
        let mut controllers = Command::new(env!("CARGO_BIN_EXE_flotilla"));
        controllers
            .args(["controllers", "--log-json", "--kubeconfig"])
            .arg(cluster.kubeconfig())
            .args(["--metrics-bind-address", "0"])
            .env("RUST_LOG", "info")
            .env_remove("KUBECONFIG");
        Hub::Kubernetes {
            _controllers: LoggedChild::spawn(controllers),
            cluster,
        }
    }

    fn kubeconfig(&self) -> PathBuf {
        match self {
            Hub::Flotilla(hub) => hub.kubeconfig(),
            Hub::Kubernetes { cluster, .. } => cluster.kubeconfig(),
        }
    }

    fn server(&self) -> String {
        match self {
            Hub::Flotilla(hub) => hub.server(),
            Hub::Kubernetes { cluster, .. } => cluster.server(),
        }
    }

    /// The hub's CA certificate.
    fn ca(&self) -> PathBuf {
        match self {
            Hub::Flotilla(hub) => hub.dir().join("ca.crt"),
            Hub::Kubernetes { cluster, .. } => cluster.ca(),
        }
    }

    fn kubectl_stdin(&self, args: &[&str], stdin: &str) -> Output {
        match self {
            Hub::Flotilla(hub) => hub.kubectl_stdin(args, stdin),
            Hub::Kubernetes { cluster, .. } => cluster.kubectl_stdin(args, stdin),
        }
    }

    fn kubectl_ok(&self, args: &[&str]) -> String {
        let out = self.kubectl_stdin(args, "");
        flotilla_testkit::kubectl::ok(args, out)
    }

    /// `kubectl apply -f -` of YAML documents, asserting success.
    fn apply(&self, yaml: &str) {
        let out = self.kubectl_stdin(&["apply", "-f", "-"], yaml);
        assert!(
            out.status.success(),
            "apply failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn get_json(&self, args: &[&str]) -> Value {
        let mut all = vec!["get"];
        all.extend_from_slice(args);
        all.extend(["-o", "json"]);
        serde_json::from_str(&self.kubectl_ok(&all)).expect("kubectl prints JSON")
    }

    /// The status of condition `type_` of `kubectl get TARGET`, if observed for the object's
    /// current generation.
    fn condition(&self, target: &[&str], type_: &str) -> Option<String> {
        let object = self.get_json(target);
        let generation = object["metadata"]["generation"].as_i64();
        object["status"]["conditions"]
            .as_array()?
            .iter()
            .find(|c| c["type"] == type_ && c["observedGeneration"].as_i64() == generation)
            .and_then(|c| c["status"].as_str().map(str::to_string))
    }
}

/// A real member cluster and its agent.
struct Member {
    name: &'static str,
    cluster: RealCluster,
    _agent: LoggedChild,
}

/// Hourly prices of the three clusters' one 8-core node: 0.1, 0.2 and 1.0 a core, as seed
/// 001's cost table.
const PRICES: &str = "prices:
- {instanceType: seed.small, hourly: 0.8}
- {instanceType: seed.medium, hourly: 1.6}
- {instanceType: seed.large, hourly: 8.0}
";

/// Starts cluster `name` (one node of `instance_type`), declares its MemberCluster with
/// `environment` and joins it with `flotilla member` and the price table.
fn join(
    hub: &Hub,
    prices: &std::path::Path,
    name: &'static str,
    instance_type: &str,
    environment: &str,
) -> Member {
    let cluster = RealCluster::start_with(&ClusterOptions {
        nodes: 1,
        node_labels: vec![
            format!("node.kubernetes.io/instance-type={instance_type}"),
            "topology.kubernetes.io/region=eastus".into(),
        ],
        ..ClusterOptions::default()
    });
    hub.apply(&format!(
        "apiVersion: cluster.kubernetes-fleet.io/v1
kind: MemberCluster
metadata:
  name: {name}
  labels: {{environment: {environment}, name: {name}}}
spec:
  identity: {{kind: ServiceAccount, name: fleet-member-agent, namespace: fleet-system}}
  heartbeatPeriodSeconds: 5
"
    ));
    let token = common::issue_token(&hub.kubeconfig(), name);
    let mut agent = common::member_agent(
        &hub.server(),
        &hub.ca(),
        &token,
        name,
        &cluster.kubeconfig(),
    );
    agent.arg("--prices").arg(prices);
    Member {
        name,
        cluster,
        _agent: LoggedChild::spawn(agent),
    }
}

/// Waits until condition `type_` of `kubectl get TARGET` is True for the object's generation;
/// on timeout, panics with the object.
fn wait_true(hub: &Hub, target: &[&str], type_: &str, secs: u64) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while hub.condition(target, type_).as_deref() != Some("True") {
        if std::time::Instant::now() > deadline {
            panic!(
                "{target:?} not {type_} within {secs} s: {:#}",
                hub.get_json(target)["status"]
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// Whether `kubectl get ARGS` finds the object on `member`.
fn has(member: &Member, args: &[&str]) -> bool {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    member.cluster.kubectl(&all).status.success()
}

/// The namespace seed 001's placement selects, with what a team places: a Deployment, a
/// ConfigMap, a ResourceQuota, a NetworkPolicy (all labelled, for the override's patch).
const NAMESPACE: &str = "apiVersion: v1
kind: Namespace
metadata: {name: test-namespace, labels: {app: test}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: test-namespace, labels: {app: test}}
data: {greeting: hello}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: test-namespace, labels: {app: test}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx:1.27, resources: {requests: {cpu: 100m, memory: 64Mi}}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: quota, namespace: test-namespace, labels: {app: test}}
spec: {hard: {pods: '10'}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: web, namespace: test-namespace, labels: {app: test}}
spec:
  podSelector: {matchLabels: {app: web}}
  policyTypes: [Ingress]
";

const OVERRIDE: &str = "apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourceOverride
metadata: {name: smartfish-tier}
spec:
  clusterResourceSelectors:
  - {group: '', kind: Namespace, version: v1, name: test-namespace}
  policy:
    overrideRules:
    - clusterSelector:
        clusterSelectorTerms:
        - labelSelector: {matchLabels: {name: smartfish}}
      jsonPatchOverrides:
      - {op: add, path: /metadata/labels/tier, value: fast}
";

const STAGED: &str = "apiVersion: v1
kind: Namespace
metadata: {name: staged}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: staged}
spec:
  resourceSelectors:
  - {group: '', kind: Namespace, version: v1, name: staged}
  policy: {placementType: PickAll}
  strategy: {type: External}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateStrategy
metadata: {name: three-stages}
spec:
  stages:
  - name: staging
    labelSelector: {matchLabels: {environment: staging}}
    afterStageTasks:
    - {type: TimedWait, waitTime: 5s}
  - name: canary
    labelSelector: {matchLabels: {environment: canary}}
    afterStageTasks:
    - {type: Approval}
  - name: production
    labelSelector: {matchLabels: {environment: production}}
";

const RUN: &str = "apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateRun
metadata: {name: staged-run}
spec:
  placementName: staged
  resourceSnapshotIndex: '0'
  stagedRolloutStrategyName: three-stages
";

#[test]
fn seeds_001_and_004_on_three_real_clusters_with_flotilla_s_hub() {
    seeds_001_and_004(&Hub::Flotilla(HubProcess::start()));
}

#[test]
fn seeds_001_and_004_on_three_real_clusters_with_a_kubernetes_hub() {
    seeds_001_and_004(&Hub::kubernetes());
}

fn seeds_001_and_004(hub: &Hub) {
    let scratch = tempfile::tempdir().unwrap();
    let prices = scratch.path().join("prices.yaml");
    std::fs::write(&prices, PRICES).unwrap();
    let fleet = [
        join(hub, &prices, "jumpingcat", "seed.small", "staging"),
        join(hub, &prices, "smartfish", "seed.medium", "canary"),
        join(hub, &prices, "bravelion", "seed.large", "production"),
    ];
    let [jumpingcat, smartfish, bravelion] = &fleet;

    // Properties from each cluster's real node, cost from the price table.
    for (member, cost) in [
        (jumpingcat, "0.100"),
        (smartfish, "0.200"),
        (bravelion, "1.000"),
    ] {
        let reported = eventually(&format!("{} reports its cost", member.name), 60, || {
            let mc = hub.get_json(&["membercluster", member.name]);
            let value =
                &mc["status"]["properties"]["kubernetes.azure.com/per-cpu-core-cost"]["value"];
            value.as_str().map(str::to_string)
        });
        assert_eq!(reported, cost, "{}", member.name);
        let mc = hub.get_json(&["membercluster", member.name]);
        assert_eq!(
            mc["status"]["properties"]["kubernetes-fleet.io/node-count"]["value"],
            "1"
        );
        assert_eq!(mc["status"]["resourceUsage"]["allocatable"]["cpu"], "8");
    }

    // Seed 001: PickN 2 by cost per core, ascending: jumpingcat and smartfish.
    hub.apply(NAMESPACE);
    hub.apply(OVERRIDE);
    let crp =
        std::fs::read_to_string(common::examples_dir().join("crp-pickn-cpu-cost.yaml")).unwrap();
    hub.apply(&crp);
    wait_true(
        hub,
        &["crp", "crp"],
        "ClusterResourcePlacementAvailable",
        120,
    );
    let placed: Vec<bool> = fleet
        .iter()
        .map(|m| has(m, &["configmap", "settings", "-n", "test-namespace"]))
        .collect();
    assert_eq!(
        placed,
        [true, true, false],
        "jumpingcat and smartfish, not bravelion"
    );
    // Every kind arrived, the Deployment available on kwok's pods, the quota enforced by the
    // member's own quota controller.
    for member in [jumpingcat, smartfish] {
        for object in [["resourcequota", "quota"], ["networkpolicy", "web"]] {
            assert!(
                has(member, &[object[0], object[1], "-n", "test-namespace"]),
                "{} has {object:?}",
                member.name
            );
        }
        let ready = member.cluster.kubectl_ok(&[
            "get",
            "deployment",
            "web",
            "-n",
            "test-namespace",
            "-o",
            "jsonpath={.status.availableReplicas}",
        ]);
        assert_eq!(ready, "2", "{}", member.name);
        eventually(
            &format!("the quota counts pods on {}", member.name),
            60,
            || {
                (member.cluster.kubectl_ok(&[
                    "get",
                    "resourcequota",
                    "quota",
                    "-n",
                    "test-namespace",
                    "-o",
                    "jsonpath={.status.used.pods}",
                ]) == "2")
                    .then_some(())
            },
        );
    }
    // The override reached smartfish only.
    let tier = |m: &Member| {
        m.cluster.kubectl_ok(&[
            "get",
            "namespace",
            "test-namespace",
            "-o",
            "jsonpath={.metadata.labels.tier}",
        ])
    };
    assert_eq!(tier(smartfish), "fast");
    assert_eq!(tier(jumpingcat), "");

    // Drift on a member is put right by the next apply (whenToApply: Always).
    jumpingcat.cluster.kubectl_ok(&[
        "patch",
        "configmap",
        "settings",
        "-n",
        "test-namespace",
        "--type=merge",
        "-p",
        r#"{"data":{"greeting":"edited"}}"#,
    ]);
    eventually("the drift corrected", 120, || {
        let greeting = jumpingcat.cluster.kubectl_ok(&[
            "get",
            "configmap",
            "settings",
            "-n",
            "test-namespace",
            "-o",
            "jsonpath={.data.greeting}",
        ]);
        (greeting == "hello").then_some(())
    });

    // smartfish's kube-apiserver crashes and comes back while a change rolls out: the
    // placement converges, and nothing is applied twice.
    let extra = "apiVersion: v1
kind: ConfigMap
metadata: {name: extra, namespace: test-namespace, labels: {app: test}}
data: {added: later}
";
    hub.apply(extra);
    smartfish.cluster.restart("kube-apiserver");
    for member in [jumpingcat, smartfish] {
        eventually(&format!("the change on {}", member.name), 120, || {
            has(member, &["configmap", "extra", "-n", "test-namespace"]).then_some(())
        });
    }
    wait_true(
        hub,
        &["crp", "crp"],
        "ClusterResourcePlacementAvailable",
        120,
    );
    let works = smartfish
        .cluster
        .kubectl_ok(&["get", "appliedworks", "-o", "name"]);
    assert_eq!(works.lines().count(), 1, "{works}");
    let maps = smartfish.cluster.kubectl_ok(&[
        "get",
        "configmaps",
        "-n",
        "test-namespace",
        "-l",
        "app=test",
        "-o",
        "name",
    ]);
    assert_eq!(maps.lines().count(), 2, "{maps}");

    // An eviction under a budget that allows none is refused and says why; without the
    // budget it is carried out.
    hub.apply(
        "apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementDisruptionBudget
metadata: {name: crp}
spec: {minAvailable: 2}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementEviction
metadata: {name: evict-smartfish}
spec: {placementName: crp, clusterName: smartfish}
",
    );
    let verdict = eventually("the eviction judged", 60, || {
        let out = hub.kubectl_ok(&[
            "get", "crpe", "evict-smartfish", "-o",
            r#"jsonpath={.status.conditions[?(@.type=="Executed")].status} {.status.conditions[?(@.type=="Executed")].message}"#,
        ]);
        (!out.trim().is_empty()).then_some(out)
    });
    assert!(verdict.starts_with("False "), "{verdict}");
    assert!(verdict.contains("minAvailable 2"), "{verdict}");
    assert!(has(
        smartfish,
        &["configmap", "settings", "-n", "test-namespace"]
    ));
    hub.kubectl_ok(&["delete", "crpdb", "crp"]);
    hub.apply(
        "apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementEviction
metadata: {name: evict-smartfish-again}
spec: {placementName: crp, clusterName: smartfish}
",
    );
    eventually("the eviction executed", 60, || {
        (hub.kubectl_ok(&[
            "get",
            "crpe",
            "evict-smartfish-again",
            "-o",
            r#"jsonpath={.status.conditions[?(@.type=="Executed")].status}"#,
        ]) == "True")
            .then_some(())
    });

    // Seed 004: a staged run across the three: staging, a timed wait, canary, an approval,
    // production.
    hub.apply(STAGED);
    hub.apply(RUN);
    eventually("staging rolled out", 120, || {
        has(jumpingcat, &["namespace", "staged"]).then_some(())
    });
    assert!(
        !has(bravelion, &["namespace", "staged"]),
        "production waits"
    );
    eventually("canary rolled out after the wait", 120, || {
        has(smartfish, &["namespace", "staged"]).then_some(())
    });
    let request = eventually("the approval requested", 120, || {
        let out = hub.kubectl_ok(&["get", "clusterapprovalrequests", "-o", "name"]);
        out.lines().next().map(str::to_string)
    });
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert!(
        !has(bravelion, &["namespace", "staged"]),
        "production waits for the approval"
    );
    let name = request.trim_start_matches("clusterapprovalrequest.placement.kubernetes-fleet.io/");
    let approved = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["approve", name, "--kubeconfig"])
        .arg(hub.kubeconfig())
        .output()
        .expect("flotilla approve");
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    eventually("production rolled out", 120, || {
        has(bravelion, &["namespace", "staged"]).then_some(())
    });
    wait_true(hub, &["csur", "staged-run"], "Succeeded", 120);

    // Leaving removes everything placed from each member.
    for member in &fleet {
        hub.kubectl_ok(&["delete", "membercluster", member.name, "--timeout=120s"]);
    }
    for member in &fleet {
        eventually(&format!("{} emptied", member.name), 120, || {
            (!has(member, &["namespace", "staged"])
                && !has(member, &["namespace", "test-namespace"]))
            .then_some(())
        });
    }
}
