//! Node auto-provisioning scenarios on a simulated member and a manual clock, through kube-rs:
//! pending pods launch nodes; a scale-down consolidates them within the budget and never
//! strands a pod; a node image change drifts nodes out one at a time; a `do-not-disrupt` pod
//! holds its node until the termination grace period forces it; expiration replaces nodes
//! even under a zero budget; deleting a NodePool or a Node terminates its claims and nodes
//! through the finalizers; a PodDisruptionBudget blocks consolidation until it is relaxed;
//! pods leaving during a command's validation restart consolidateAfter; a business-hours
//! budget holds empty nodes until its window closes; pool weights and limits decide where
//! new nodes come from.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use flotilla_api::nodes::{AKSNodeClass, NodeClaim, NodeOverlay, NodePool};
use flotilla_apiserver::registry::Registry;
use flotilla_apiserver::{Clock, ManualClock};
use flotilla_nodes::consolidation::ConsolidationOptions;
use flotilla_sim::cluster::{SimCluster, SimOptions};
use flotilla_sim::fleet::MemberSpec;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Container, Event, Node, Pod, PodSpec, PodTemplateSpec, ResourceRequirements,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};

mod differential;
mod race;

const START: &str = "2026-01-05T12:00:00Z";

struct Member {
    sim: SimCluster,
    clock: ManualClock,
    client: kube::Client,
}

fn kinds() -> &'static Arc<Registry> {
    static KINDS: OnceLock<Arc<Registry>> = OnceLock::new();
    KINDS.get_or_init(SimCluster::member_kinds)
}

/// A member with no agent pool: every workload node comes from Karpenter.
async fn member() -> Member {
    member_at(START).await
}

/// A member (as [`member`]) whose clock starts at `start`.
async fn member_at(start: &str) -> Member {
    member_with(start, ConsolidationOptions::default()).await
}

/// A member (as [`member_at`]) whose Karpenter consolidates with `consolidation`.
async fn member_with(start: &str, consolidation: ConsolidationOptions) -> Member {
    let clock = ManualClock::new(start.parse().unwrap());
    let spec = MemberSpec {
        name: "member-1".into(),
        region: "eastus".into(),
        labels: BTreeMap::new(),
        kubernetes_version: "1.30.3".into(),
        node_pools: vec![],
        properties: BTreeMap::new(),
        maintenance_windows: vec![],
        stopped: false,
        upgrade: None,
    };
    let options = SimOptions {
        readiness_delay: Duration::from_secs(5),
        job_duration: Duration::from_secs(10),
        clock: Arc::new(clock.clone()),
        consolidation,
    };
    let sim = SimCluster::start(&spec, options, kinds())
        .await
        .expect("member starts");
    let client = sim.client();
    Member { sim, clock, client }
}

impl Member {
    /// Waits (in real time) until the member's machinery stops writing.
    async fn settle(&self) {
        let store = self.sim.engine().store().clone();
        let mut last = store.current_revision();
        let mut quiet = 0;
        for _ in 0..2000 {
            tokio::time::sleep(Duration::from_millis(10)).await;
            let now = store.current_revision();
            if now == last {
                quiet += 1;
                if quiet == 5 {
                    return;
                }
            } else {
                quiet = 0;
                last = now;
            }
        }
        panic!("the member never settled");
    }

    /// Moves the clock `total` forward in `step`s, settling and checking `invariant` after each.
    async fn run(&self, total: Duration, step: Duration, invariant: &mut dyn FnMut(&Snapshot)) {
        let mut elapsed = Duration::ZERO;
        self.settle().await;
        while elapsed < total {
            self.clock.advance(step);
            elapsed += step;
            self.settle().await;
            invariant(&self.snapshot().await);
        }
    }

    async fn apply<K>(&self, yaml: &str)
    where
        K: kube::Resource<DynamicType = ()>
            + Clone
            + serde::de::DeserializeOwned
            + serde::Serialize
            + std::fmt::Debug,
    {
        let obj: K = serde_saphyr::from_str(yaml).expect("test YAML parses");
        Api::<K>::all(self.client.clone())
            .create(&PostParams::default(), &obj)
            .await
            .expect("created");
    }

    async fn snapshot(&self) -> Snapshot {
        let list = ListParams::default();
        Snapshot {
            nodes: Api::<Node>::all(self.client.clone())
                .list(&list)
                .await
                .unwrap()
                .items,
            claims: Api::<NodeClaim>::all(self.client.clone())
                .list(&list)
                .await
                .unwrap()
                .items,
            pods: Api::<Pod>::namespaced(self.client.clone(), "default")
                .list(&list)
                .await
                .unwrap()
                .items,
            pools: Api::<NodePool>::all(self.client.clone())
                .list(&list)
                .await
                .unwrap()
                .items,
        }
    }

    async fn events(&self) -> Vec<Event> {
        Api::<Event>::all(self.client.clone())
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
    }

    /// Every version of every `K` written from now on, as a watch sees them (for states that
    /// last less than a step).
    async fn record<K>(&self) -> Arc<Mutex<Vec<K>>>
    where
        K: kube::Resource<DynamicType = ()>
            + Clone
            + serde::de::DeserializeOwned
            + std::fmt::Debug
            + Send
            + 'static,
    {
        let api = Api::<K>::all(self.client.clone());
        let version = api
            .list_metadata(&ListParams::default())
            .await
            .unwrap()
            .metadata
            .resource_version
            .unwrap_or_default();
        let mut stream = api
            .watch(&WatchParams::default(), &version)
            .await
            .unwrap()
            .boxed();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        tokio::spawn(async move {
            while let Some(Ok(event)) = stream.next().await {
                if let WatchEvent::Added(obj) | WatchEvent::Modified(obj) = event {
                    sink.lock().unwrap().push(obj);
                }
            }
        });
        seen
    }

    async fn scale(&self, name: &str, replicas: i32) {
        Api::<Deployment>::namespaced(self.client.clone(), "default")
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(serde_json::json!({"spec": {"replicas": replicas}})),
            )
            .await
            .unwrap();
    }
}

/// What the scenarios look at after each step.
struct Snapshot {
    nodes: Vec<Node>,
    claims: Vec<NodeClaim>,
    pods: Vec<Pod>,
    pools: Vec<NodePool>,
}

impl Snapshot {
    /// Nodes on their way out: tainted for disruption or deleting.
    fn disrupting(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| flotilla_nodes::pool_status::node_leaving(n))
            .count()
    }

    /// The hourly price of the member's nodes, from the catalog.
    fn price(&self) -> f64 {
        let catalog = flotilla_sim::karpenter::cloud::instance_types("eastus");
        self.nodes
            .iter()
            .filter_map(|n| {
                let labels = n.metadata.labels.as_ref()?;
                let it = catalog
                    .iter()
                    .find(|t| Some(&t.name) == labels.get("node.kubernetes.io/instance-type"))?;
                let capacity = labels.get("karpenter.sh/capacity-type")?;
                let zone = labels.get("topology.kubernetes.io/zone")?;
                it.offerings
                    .iter()
                    .find(|o| o.capacity_type.label() == capacity && &o.zone == zone)
                    .map(|o| o.price)
            })
            .sum()
    }

    /// Pods the scheduler has marked unschedulable.
    fn unschedulable(&self) -> Vec<String> {
        self.pods
            .iter()
            .filter(|p| {
                p.status
                    .as_ref()
                    .and_then(|s| s.conditions.as_ref())
                    .is_some_and(|c| {
                        c.iter().any(|c| {
                            c.type_ == "PodScheduled"
                                && c.reason.as_deref() == Some("Unschedulable")
                        })
                    })
            })
            .filter_map(|p| p.metadata.name.clone())
            .collect()
    }

    /// Pods running on a node.
    fn running(&self) -> usize {
        self.pods
            .iter()
            .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_some())
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .count()
    }

    /// Each node's instance type, in the listing's order.
    fn instance_types(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter_map(|n| {
                n.metadata
                    .labels
                    .as_ref()?
                    .get("node.kubernetes.io/instance-type")
                    .cloned()
            })
            .collect()
    }

    fn node_names(&self) -> BTreeSet<String> {
        self.nodes
            .iter()
            .filter_map(|n| n.metadata.name.clone())
            .collect()
    }

    /// The CPU capacity (millicores) of the nodes labelled for `pool`.
    fn pool_cpu_millis(&self, pool: &str) -> i128 {
        self.nodes
            .iter()
            .filter(|n| {
                n.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("karpenter.sh/nodepool"))
                    .is_some_and(|p| p == pool)
            })
            .filter_map(|n| {
                let cpu = n.status.as_ref()?.capacity.as_ref()?.get("cpu")?;
                flotilla_apimachinery::quantity::parse_milli(&cpu.0)
            })
            .sum()
    }

    /// The nodes labelled for `pool`.
    fn pool_nodes(&self, pool: &str) -> usize {
        self.nodes
            .iter()
            .filter(|n| {
                n.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("karpenter.sh/nodepool"))
                    .is_some_and(|p| p == pool)
            })
            .count()
    }

    /// What pool `pool`'s status says may be disrupted now for `reason`.
    fn allowed(&self, pool: &str, reason: &str) -> Option<i64> {
        self.pools
            .iter()
            .find(|p| p.metadata.name.as_deref() == Some(pool))?
            .status
            .as_ref()?
            .allowed_disruptions
            .iter()
            .find(|a| a.reason == reason)
            .map(|a| a.allowed)
    }

    /// The CPU capacity (millicores) the claims of `pool` launched, including those whose
    /// node has not registered yet.
    fn pool_claimed_cpu_millis(&self, pool: &str) -> i128 {
        self.claims
            .iter()
            .filter(|c| {
                c.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("karpenter.sh/nodepool"))
                    .is_some_and(|p| p == pool)
            })
            .filter_map(|c| {
                let cpu = c.status.as_ref()?.capacity.get("cpu")?;
                flotilla_apimachinery::quantity::parse_milli(&cpu.0)
            })
            .sum()
    }

    /// The node each live pod of `app` runs on, by pod name.
    fn placements(&self, app: &str) -> BTreeMap<String, String> {
        self.pods
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .filter(|p| {
                p.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("app"))
                    .is_some_and(|a| a == app)
            })
            .filter_map(|p| {
                Some((
                    p.metadata.name.clone()?,
                    p.spec.as_ref()?.node_name.clone()?,
                ))
            })
            .collect()
    }

    /// The image label of every node.
    fn images(&self) -> BTreeSet<String> {
        self.nodes
            .iter()
            .filter_map(|n| {
                n.metadata
                    .labels
                    .as_ref()?
                    .get("kubernetes.azure.com/node-image-version")
                    .cloned()
            })
            .collect()
    }
}

fn deployment(name: &str, replicas: i32, cpu: &str, annotations: &[(&str, &str)]) -> Deployment {
    let labels: BTreeMap<String, String> = [("app".to_string(), name.to_string())].into();
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: DeploymentSpec {
            replicas: Some(replicas),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    annotations: Some(
                        annotations
                            .iter()
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                            .collect(),
                    ),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "app".into(),
                        image: Some("nginx:1.27".into()),
                        resources: Some(ResourceRequirements {
                            requests: Some([("cpu".to_string(), Quantity(cpu.into()))].into()),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        status: None,
    }
}

/// The events with `reason`.
fn with_reason<'e>(events: &'e [Event], reason: &str) -> Vec<&'e Event> {
    events
        .iter()
        .filter(|e| e.reason.as_deref() == Some(reason))
        .collect()
}

/// Whether `node` carries a taint with `key`.
/// Whether an event of `reason` says `text`.
fn says(events: &[Event], reason: &str, text: &str) -> bool {
    with_reason(events, reason)
        .iter()
        .any(|e| e.message.as_deref().is_some_and(|m| m.contains(text)))
}

fn has_taint(node: &Node, key: &str) -> bool {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|t| t.iter().any(|t| t.key == key))
}

async fn create_deployment(m: &Member, d: &Deployment) {
    Api::<Deployment>::namespaced(m.client.clone(), "default")
        .create(&PostParams::default(), d)
        .await
        .unwrap();
}

const SECOND: Duration = Duration::from_secs(1);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_pods_launch_nodes_and_a_scale_down_consolidates_them_within_the_budget() {
    let m = member().await;
    m.apply::<NodePool>(
        r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      - {key: karpenter.azure.com/sku-family, operator: In, values: [D]}
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
      - {key: karpenter.azure.com/sku-cpu, operator: Lt, values: ["5"]}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 30s
    budgets:
    - nodes: "1"
"#,
    )
    .await;
    create_deployment(&m, &deployment("web", 9, "1", &[])).await;
    m.run(Duration::from_secs(60), 5 * SECOND, &mut |_| {})
        .await;
    let up = m.snapshot().await;
    assert_eq!(up.running(), 9, "every pod runs on a launched node");
    assert!(up.unschedulable().is_empty() || up.running() == 9);
    assert!(
        up.nodes.len() >= 3,
        "9 one-CPU pods need at least three 4-vCPU nodes"
    );
    for claim in &up.claims {
        let status = claim.status.as_ref().unwrap();
        for condition in ["Launched", "Registered", "Initialized", "Ready"] {
            assert!(
                flotilla_api::conditions::is_true(&status.conditions, condition),
                "{condition} on {:?}",
                claim.metadata.name
            );
        }
    }
    for node in &up.nodes {
        let labels = node.metadata.labels.as_ref().unwrap();
        assert_eq!(labels["karpenter.sh/nodepool"], "default");
        assert_eq!(labels["karpenter.sh/initialized"], "true");
        assert_eq!(labels["karpenter.sh/capacity-type"], "on-demand");
        assert_eq!(labels["karpenter.azure.com/sku-family"], "D");
        let taints = node
            .spec
            .as_ref()
            .and_then(|s| s.taints.clone())
            .unwrap_or_default();
        assert!(!taints.iter().any(|t| t.key == "karpenter.sh/unregistered"));
    }
    let before = up.price();
    let before_nodes = up.node_names();
    // Karpenter's families on the member's /metrics, with Karpenter's names.
    let metrics = || m.sim.engine().metrics().render(0, 0);
    let sample = |text: &str, series: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {series} in\n{text}"))
    };
    let text = metrics();
    let created = sample(
        &text,
        r#"karpenter_nodeclaims_created_total{reason="provisioning",nodepool="default"}"#,
    );
    assert!(created >= up.claims.len() as f64, "{text}");
    assert_eq!(
        sample(
            &text,
            r#"karpenter_nodepools_usage{nodepool="default",resource_type="nodes"}"#
        ),
        up.nodes.len() as f64
    );
    assert_eq!(
        sample(
            &text,
            r#"karpenter_pods_state{phase="Running",nodepool="default"}"#
        ),
        9.0
    );
    assert_eq!(
        sample(
            &text,
            r#"operator_nodeclaim_status_condition_count{nodepool="default",type="Initialized",status="True",reason="Initialized"}"#
        ),
        up.claims.len() as f64
    );
    assert!(
        sample(
            &text,
            r#"karpenter_nodeclaims_initialization_duration_seconds_count{nodepool="default"}"#
        ) >= up.claims.len() as f64
    );
    assert!(text.contains("# TYPE karpenter_voluntary_disruption_decisions_total counter"));

    m.scale("web", 2).await;
    let mut worst = 0;
    let mut stranded = Vec::new();
    m.run(Duration::from_secs(600), 5 * SECOND, &mut |s| {
        worst = worst.max(s.disrupting());
        stranded.extend(s.unschedulable());
    })
    .await;
    let after = m.snapshot().await;
    assert_eq!(after.running(), 2);
    assert!(stranded.is_empty(), "pods left unschedulable: {stranded:?}");
    assert!(
        worst <= 1,
        "{worst} nodes disrupted at once under a budget of 1"
    );
    assert!(
        after.price() < before,
        "consolidation saves money: ${:.4}/h before, ${:.4}/h after",
        before,
        after.price()
    );
    assert!(after.nodes.len() < before_nodes.len());
    // The consolidation is counted: decisions, disrupted claims, released instances.
    let text = metrics();
    let decisions: f64 = text
        .lines()
        .filter(|l| l.starts_with("karpenter_voluntary_disruption_decisions_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert!(decisions >= 1.0, "{text}");
    let disrupted: f64 = text
        .lines()
        .filter(|l| l.starts_with("karpenter_nodeclaims_disrupted_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert!(
        disrupted >= (before_nodes.len() - after.nodes.len()) as f64,
        "{text}"
    );
    assert!(
        sample(
            &text,
            r#"karpenter_nodeclaims_terminated_total{nodepool="default"}"#
        ) >= 1.0
    );
    assert_eq!(
        sample(
            &text,
            r#"karpenter_nodepools_usage{nodepool="default",resource_type="nodes"}"#
        ),
        after.nodes.len() as f64
    );
    let events = m.events().await;
    let reasons: BTreeSet<&str> = events.iter().filter_map(|e| e.reason.as_deref()).collect();
    for reason in [
        "Provisioned",
        "Launched",
        "DisruptionProposed",
        "DisruptionLaunching",
        "DisruptionTerminating",
        "Evicted",
    ] {
        assert!(
            reasons.contains(reason),
            "no {reason} event among {reasons:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_image_change_drifts_nodes_out_ten_percent_at_a_time() {
    let m = member().await;
    m.apply::<NodePool>(
        r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      - {key: karpenter.azure.com/sku-cpu, operator: In, values: ["2"]}
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
  disruption:
    consolidateAfter: Never
"#,
    )
    .await;
    // One pod per 2-vCPU node: ten nodes, so the default 10% budget is one node at a time.
    create_deployment(&m, &deployment("web", 10, "1500m", &[])).await;
    m.run(Duration::from_secs(60), 5 * SECOND, &mut |_| {})
        .await;
    let up = m.snapshot().await;
    assert_eq!(up.nodes.len(), 10);
    assert_eq!(
        up.images(),
        BTreeSet::from(["AKSUbuntu-2204gen2containerd-202501.12.0".to_string()])
    );

    Api::<AKSNodeClass>::all(m.client.clone())
        .patch(
            "default",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"imageVersion": "202502.03.0"}})),
        )
        .await
        .unwrap();
    let mut worst = 0;
    m.run(Duration::from_secs(1800), 5 * SECOND, &mut |s| {
        worst = worst.max(s.disrupting());
    })
    .await;
    let after = m.snapshot().await;
    assert_eq!(
        after.images(),
        BTreeSet::from(["AKSUbuntu-2204gen2containerd-202502.03.0".to_string()]),
        "every node runs the new image"
    );
    assert_eq!(after.nodes.len(), 10);
    assert!(
        after.node_names().is_disjoint(&up.node_names()),
        "every node was replaced"
    );
    assert_eq!(after.running(), 10);
    assert_eq!(worst, 1, "drift replaced one node at a time (10% of 10)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_do_not_disrupt_pod_holds_its_node_until_the_grace_period_forces_it() {
    let m = member().await;
    m.apply::<NodePool>(
        r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      expireAfter: 1h
      terminationGracePeriod: 10m
      requirements:
      - {key: karpenter.azure.com/sku-cpu, operator: In, values: ["2"]}
"#,
    )
    .await;
    create_deployment(
        &m,
        &deployment("keep", 1, "1", &[("karpenter.sh/do-not-disrupt", "true")]),
    )
    .await;
    m.run(Duration::from_secs(60), 5 * SECOND, &mut |_| {})
        .await;
    let first = m.snapshot().await;
    assert_eq!(first.nodes.len(), 1);
    let pod = first.pods[0].metadata.name.clone().unwrap();
    // The claim expires after an hour; its pod is protected, so the node drains no further
    // until the ten-minute grace period runs out.
    m.run(Duration::from_secs(3600 + 5 * 60), 30 * SECOND, &mut |_| {})
        .await;
    let held = m.snapshot().await;
    assert!(
        held.pods
            .iter()
            .any(|p| p.metadata.name.as_deref() == Some(pod.as_str())),
        "the pod is still there five minutes into the grace period"
    );
    assert!(
        held.node_names().is_superset(&first.node_names()),
        "its node is still there"
    );
    m.run(Duration::from_secs(6 * 60), 30 * SECOND, &mut |_| {})
        .await;
    let after = m.snapshot().await;
    assert!(
        !after
            .pods
            .iter()
            .any(|p| p.metadata.name.as_deref() == Some(pod.as_str())),
        "the pod was forced out"
    );
    assert!(
        after.node_names().is_disjoint(&first.node_names()),
        "the old node is gone"
    );
    assert_eq!(after.running(), 1, "the replacement pod runs on a new node");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expiration_replaces_old_nodes_even_when_budgets_are_zero() {
    let m = member().await;
    m.apply::<NodePool>(
        r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.azure.com/sku-cpu, operator: In, values: ["2"]}
  disruption:
    expireAfter: 2h
    budgets:
    - nodes: "0"
"#,
    )
    .await;
    create_deployment(&m, &deployment("web", 3, "1500m", &[])).await;
    m.run(Duration::from_secs(60), 5 * SECOND, &mut |_| {})
        .await;
    let first = m.snapshot().await;
    assert_eq!(first.nodes.len(), 3);
    let pool: NodePool = Api::<NodePool>::all(m.client.clone())
        .get("default")
        .await
        .unwrap();
    let status = pool.status.unwrap();
    assert_eq!(
        status.expire_after_source.as_deref(),
        Some("spec.disruption.expireAfter")
    );
    assert!(status.allowed_disruptions.iter().all(|a| a.allowed == 0));
    m.run(
        Duration::from_secs(2 * 3600 + 120),
        60 * SECOND,
        &mut |_| {},
    )
    .await;
    let after = m.snapshot().await;
    assert_eq!(after.running(), 3);
    assert_eq!(after.nodes.len(), 3);
    assert!(
        after.node_names().is_disjoint(&first.node_names()),
        "every expired node was replaced"
    );
    let expired = m
        .events()
        .await
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("Expired"))
        .count();
    assert_eq!(expired, 3);
}

/// A pool of on-demand amd64 D-series nodes of at most four vCPUs.
const SMALL_D_POOL: &str = r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      - {key: karpenter.azure.com/sku-family, operator: In, values: [D]}
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
      - {key: karpenter.azure.com/sku-cpu, operator: Lt, values: ["5"]}
  disruption:
    consolidateAfter: Never
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_node_pool_terminates_its_claims_and_nodes() {
    let m = member().await;
    m.apply::<NodePool>(SMALL_D_POOL).await;
    create_deployment(&m, &deployment("web", 6, "1", &[])).await;
    m.run(Duration::from_secs(60), 5 * SECOND, &mut |_| {})
        .await;
    let up = m.snapshot().await;
    assert_eq!(up.running(), 6);
    assert!(up.nodes.len() >= 2, "six one-CPU pods need two nodes");
    assert_eq!(up.claims.len(), up.nodes.len());
    let pool: NodePool = Api::<NodePool>::all(m.client.clone())
        .get("default")
        .await
        .unwrap();
    for claim in &up.claims {
        let owners = claim.metadata.owner_references.clone().unwrap_or_default();
        assert!(
            owners
                .iter()
                .any(|o| o.kind == "NodePool" && o.uid == pool.metadata.uid.clone().unwrap()),
            "claim {:?} is owned by its pool",
            claim.metadata.name
        );
        assert!(
            claim
                .metadata
                .finalizers
                .iter()
                .flatten()
                .any(|f| f == "karpenter.sh/termination")
        );
    }

    let versions = m.record::<NodeClaim>().await;
    Api::<NodePool>::all(m.client.clone())
        .delete("default", &DeleteParams::default())
        .await
        .unwrap();
    m.run(Duration::from_secs(120), 5 * SECOND, &mut |_| {})
        .await;
    // Each claim says how its termination goes, in Karpenter's order: draining, drained and
    // volumes detached, then the instance terminating.
    let seen = versions.lock().unwrap().clone();
    let mut drained_some = false;
    for claim in &up.claims {
        let name = claim.metadata.name.clone();
        let states: Vec<Vec<(String, String)>> = seen
            .iter()
            .filter(|c| c.metadata.name == name)
            .map(|c| {
                c.status
                    .iter()
                    .flat_map(|s| &s.conditions)
                    .filter(|c| {
                        ["Drained", "VolumesDetached", "InstanceTerminating"]
                            .contains(&c.type_.as_str())
                    })
                    .map(|c| (c.type_.clone(), c.status.clone()))
                    .collect()
            })
            .collect();
        let first = |wanted: (&str, &str)| {
            states.iter().position(|conditions| {
                conditions
                    .iter()
                    .any(|(t, s)| (t.as_str(), s.as_str()) == wanted)
            })
        };
        let draining = first(("Drained", "False"));
        let drained = first(("Drained", "True"));
        let detached = first(("VolumesDetached", "True"));
        let terminating = first(("InstanceTerminating", "True"));
        assert!(
            drained.is_some()
                && draining.is_none_or(|d| Some(d) < drained)
                && drained <= detached
                && detached < terminating,
            "claim {name:?}: {states:?}"
        );
        drained_some |= draining.is_some();
    }
    assert!(drained_some, "a node with pods said it was draining");
    let after = m.snapshot().await;
    assert!(
        Api::<NodePool>::all(m.client.clone())
            .get_opt("default")
            .await
            .unwrap()
            .is_none(),
        "the pool is gone"
    );
    assert!(
        after.claims.is_empty(),
        "the pool's claims are gone: {:?}",
        after
            .claims
            .iter()
            .map(|c| &c.metadata.name)
            .collect::<Vec<_>>()
    );
    assert!(
        after.nodes.is_empty(),
        "the claims' nodes are gone: {:?}",
        after.node_names()
    );
    assert_eq!(after.running(), 0, "no node is left to run a pod");
    let events = m.events().await;
    assert_eq!(
        with_reason(&events, "Evicted").len(),
        6,
        "every pod was evicted"
    );
    assert_eq!(
        with_reason(&events, "InstanceTerminated").len(),
        up.claims.len(),
        "every instance was released"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_node_drains_it_and_its_pods_move_to_a_new_node() {
    let m = member().await;
    m.apply::<NodePool>(SMALL_D_POOL).await;
    create_deployment(&m, &deployment("web", 2, "1", &[])).await;
    m.run(Duration::from_secs(60), 5 * SECOND, &mut |_| {})
        .await;
    let up = m.snapshot().await;
    assert_eq!(up.running(), 2);
    assert_eq!(up.nodes.len(), 1, "two one-CPU pods share one node");
    let node = up.nodes[0].clone();
    let name = node.metadata.name.clone().unwrap();
    let claim = up.claims[0].metadata.name.clone().unwrap();
    assert!(
        node.metadata
            .finalizers
            .iter()
            .flatten()
            .any(|f| f == "karpenter.sh/termination"),
        "Karpenter's nodes carry its termination finalizer"
    );
    let pods_before: BTreeSet<String> = up.placements("web").into_keys().collect();
    let provisioned_before = with_reason(&m.events().await, "Provisioned").len();

    let nodes_seen = m.record::<Node>().await;
    let claims_seen = m.record::<NodeClaim>().await;
    // As `kubectl delete node` does.
    Api::<Node>::all(m.client.clone())
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
    m.run(Duration::from_secs(120), 5 * SECOND, &mut |_| {})
        .await;
    let after = m.snapshot().await;
    let versions: Vec<Node> = nodes_seen
        .lock()
        .unwrap()
        .iter()
        .filter(|n| n.metadata.name.as_deref() == Some(&name))
        .cloned()
        .collect();
    assert!(
        versions
            .iter()
            .any(|n| n.metadata.deletion_timestamp.is_some()
                && has_taint(n, "karpenter.sh/disrupted")),
        "the deleted node was tainted karpenter.sh/disrupted: {:#?}",
        versions
            .iter()
            .map(|n| (
                &n.metadata.deletion_timestamp,
                n.spec.as_ref().and_then(|s| s.taints.clone())
            ))
            .collect::<Vec<_>>()
    );
    assert!(
        claims_seen.lock().unwrap().iter().any(|c| {
            c.metadata.name.as_deref() == Some(&claim) && c.metadata.deletion_timestamp.is_some()
        }),
        "its NodeClaim was deleted with it"
    );
    assert!(!after.node_names().contains(&name), "the node is gone");
    assert!(
        !after
            .claims
            .iter()
            .any(|c| c.metadata.name.as_deref() == Some(&claim)),
        "its claim is gone"
    );
    assert_eq!(after.running(), 2, "the pods run again");
    assert_eq!(after.nodes.len(), 1, "on one new node");
    let placements = after.placements("web");
    assert!(
        placements.values().all(|n| n != &name),
        "no pod runs on the deleted node"
    );
    assert!(
        placements.keys().all(|p| !pods_before.contains(p)),
        "the pods were evicted and replaced"
    );
    let events = m.events().await;
    assert_eq!(with_reason(&events, "Evicted").len(), 2);
    assert!(
        with_reason(&events, "Provisioned").len() > provisioned_before,
        "a new claim was provisioned for the evicted pods"
    );
}

/// A pool of on-demand amd64 4-vCPU D-series nodes that consolidates 30 s after the last pod
/// event, with no budget in the way.
const FOUR_VCPU_POOL: &str = r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      - {key: karpenter.azure.com/sku-family, operator: In, values: [D]}
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
      - {key: karpenter.azure.com/sku-cpu, operator: In, values: ["4"]}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 30s
    budgets:
    - nodes: "100%"
"#;

/// Three 4-vCPU nodes (of [`FOUR_VCPU_POOL`]), each running one 1-CPU `web` pod and one
/// 2.5-CPU `filler` pod: the filler leaves room for one web pod per node. Leaves the clock
/// 30 s after the web pods arrived, so that the nodes have just become consolidatable.
async fn spread_one_web_pod_per_node(m: &Member) {
    create_deployment(m, &deployment("filler", 3, "2500m", &[])).await;
    m.run(Duration::from_secs(60), 5 * SECOND, &mut |_| {})
        .await;
    assert_eq!(m.snapshot().await.nodes.len(), 3, "one node per filler pod");
    create_deployment(m, &deployment("web", 3, "1", &[])).await;
    m.run(Duration::from_secs(30), 5 * SECOND, &mut |_| {})
        .await;
    let s = m.snapshot().await;
    assert_eq!(s.running(), 6);
    let placed = s.placements("web");
    assert_eq!(
        placed.values().collect::<BTreeSet<_>>().len(),
        3,
        "one web pod per node: {placed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_disruption_budget_blocks_consolidation_until_it_is_relaxed() {
    let m = member().await;
    m.apply::<NodePool>(FOUR_VCPU_POOL).await;
    let pdbs = Api::<PodDisruptionBudget>::namespaced(m.client.clone(), "default");
    let pdb: PodDisruptionBudget = serde_saphyr::from_str(
        r#"
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec:
  maxUnavailable: 0
  selector:
    matchLabels: {app: web}
"#,
    )
    .unwrap();
    pdbs.create(&PostParams::default(), &pdb).await.unwrap();
    spread_one_web_pod_per_node(&m).await;
    m.scale("filler", 0).await;
    m.run(Duration::from_secs(30), 5 * SECOND, &mut |_| {})
        .await;
    let under_used = m.snapshot().await;
    let placed = under_used.placements("web");
    assert_eq!(placed.len(), 3, "three web pods run: {placed:?}");
    assert_eq!(
        placed.values().collect::<BTreeSet<_>>().len(),
        3,
        "one web pod per node: {placed:?}"
    );
    assert_eq!(under_used.nodes.len(), 3);

    let mut lost_nodes = BTreeSet::new();
    m.run(Duration::from_secs(600), 10 * SECOND, &mut |s| {
        lost_nodes.extend(under_used.node_names().difference(&s.node_names()).cloned());
        lost_nodes.extend(
            s.nodes
                .iter()
                .filter(|n| flotilla_nodes::pool_status::node_leaving(n))
                .filter_map(|n| n.metadata.name.clone()),
        );
    })
    .await;
    let held = m.snapshot().await;
    assert!(
        lost_nodes.is_empty(),
        "nodes disrupted despite the budget: {lost_nodes:?}"
    );
    assert_eq!(held.placements("web"), placed, "no web pod moved");
    let events = m.events().await;
    assert!(with_reason(&events, "Evicted").is_empty());
    let blocked = with_reason(&events, "DisruptionBlocked");
    assert!(
        blocked.iter().any(|e| e
            .message
            .as_deref()
            .is_some_and(|m| m.contains("PodDisruptionBudget default/web"))),
        "a DisruptionBlocked event names the budget: {:?}",
        blocked.iter().map(|e| &e.message).collect::<Vec<_>>()
    );
    let status = pdbs.get("web").await.unwrap().status.unwrap();
    assert_eq!(status.disruptions_allowed, Some(0));
    assert_eq!(status.current_healthy, Some(3));
    assert_eq!(status.expected_pods, Some(3));

    pdbs.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"spec": {"maxUnavailable": 1}})),
    )
    .await
    .unwrap();
    m.run(Duration::from_secs(600), 10 * SECOND, &mut |_| {})
        .await;
    let after = m.snapshot().await;
    assert_eq!(after.running(), 3, "every web pod runs");
    assert!(
        after.nodes.len() < held.nodes.len(),
        "consolidation proceeds once the budget allows a disruption: {} nodes",
        after.nodes.len()
    );
    assert!(!with_reason(&m.events().await, "Evicted").is_empty());
    let status = pdbs.get("web").await.unwrap().status.unwrap();
    assert_eq!(status.disruptions_allowed, Some(1));
}

/// The first event with `reason`'s time.
fn first_time(events: &[Event], reason: &str) -> Option<jiff::Timestamp> {
    with_reason(events, reason)
        .iter()
        .filter_map(|e| e.last_timestamp.as_ref().map(|t| t.0))
        .min()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_leaving_while_a_command_waits_for_validation_restart_consolidate_after() {
    let m = member().await;
    m.apply::<NodePool>(FOUR_VCPU_POOL).await;
    spread_one_web_pod_per_node(&m).await;
    // The nodes have just become consolidatable when the filler pods leave: consolidation
    // proposes at once, from the condition as it stood, but the pods leaving restart each
    // node's consolidateAfter, so the proposal must not survive its validation.
    let left = m.clock.now();
    m.scale("filler", 0).await;
    m.run(Duration::from_secs(120), 5 * SECOND, &mut |_| {})
        .await;
    let events = m.events().await;
    assert_eq!(
        first_time(&events, "DisruptionProposed"),
        Some(left),
        "the premise: a consolidation was proposed as the pods left"
    );
    let launched = first_time(&events, "DisruptionLaunching").expect("consolidation proceeds");
    assert!(
        launched >= left + jiff::SignedDuration::from_secs(30),
        "a node was disrupted at {launched}, within consolidateAfter (30s) of pods leaving at {left}"
    );
    let after = m.snapshot().await;
    assert_eq!(after.running(), 3);
    assert!(
        after.nodes.len() < 3,
        "the under-used nodes were consolidated"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_business_hours_budget_holds_empty_nodes_until_the_window_closes() {
    // Monday 10:00 UTC: inside the 09:00–17:00 weekday window.
    let m = member_at("2026-01-05T10:00:00Z").await;
    m.apply::<NodePool>(
        r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      - {key: karpenter.azure.com/sku-family, operator: In, values: [D]}
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
      - {key: karpenter.azure.com/sku-cpu, operator: Lt, values: ["5"]}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 30s
    expireAfter: 168h
    budgets:
    - nodes: "10%"
    - nodes: "0"
      schedule: "0 9 * * 1-5"
      duration: 8h
"#,
    )
    .await;
    create_deployment(&m, &deployment("web", 9, "1", &[])).await;
    m.run(Duration::from_secs(60), 5 * SECOND, &mut |_| {})
        .await;
    let up = m.snapshot().await;
    assert_eq!(up.running(), 9);
    assert!(up.nodes.len() >= 3);
    assert_eq!(up.allowed("default", "Empty"), Some(0));

    m.scale("web", 0).await;
    // Until 16:41, in ten-minute steps: every node is empty, none is disrupted.
    let mut disrupted = BTreeSet::new();
    let mut allowances = BTreeSet::new();
    m.run(
        Duration::from_secs(6 * 3600 + 40 * 60),
        600 * SECOND,
        &mut |s| {
            disrupted.extend(up.node_names().difference(&s.node_names()).cloned());
            disrupted.extend(
                s.nodes
                    .iter()
                    .filter(|n| flotilla_nodes::pool_status::node_leaving(n))
                    .filter_map(|n| n.metadata.name.clone()),
            );
            allowances.insert(s.allowed("default", "Empty"));
        },
    )
    .await;
    let held = m.snapshot().await;
    assert_eq!(
        m.clock.now(),
        "2026-01-05T16:41:00Z".parse().unwrap(),
        "the window is still open"
    );
    assert_eq!(held.running(), 0);
    assert!(
        disrupted.is_empty(),
        "nodes disrupted inside the window: {disrupted:?}"
    );
    assert_eq!(held.node_names(), up.node_names(), "the empty nodes stay");
    assert_eq!(allowances, BTreeSet::from([Some(0)]));
    assert!(
        held.claims
            .iter()
            .all(|c| flotilla_api::conditions::is_true(
                &c.status.as_ref().unwrap().conditions,
                "Consolidatable"
            )),
        "the nodes are consolidatable; only the budget holds them"
    );

    // Past 17:00 the window closes; emptiness removes the nodes within the 10% budget.
    let mut worst = 0;
    let mut opened = None;
    m.run(Duration::from_secs(20 * 60), 10 * SECOND, &mut |s| {
        worst = worst.max(s.disrupting());
        opened = opened.max(s.allowed("default", "Empty"));
    })
    .await;
    let after = m.snapshot().await;
    assert!(
        after.nodes.is_empty(),
        "the empty nodes are gone after 17:00: {:?}",
        after.node_names()
    );
    assert!(worst <= 1, "{worst} nodes disrupted at once under 10%");
    assert_eq!(
        opened,
        Some(1),
        "once the window closed the status allowed 10% of the nodes (one)"
    );
    let events = m.events().await;
    let first = first_time(&events, "DisruptionLaunching").expect("emptiness disrupted nodes");
    assert!(
        first >= "2026-01-05T17:00:00Z".parse().unwrap(),
        "the first disruption at {first} is after the window"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_go_to_the_heaviest_pool_until_its_limit_then_to_the_next() {
    let m = member().await;
    for (name, weight, cpu) in [("spare", 10, "8"), ("preferred", 50, "4")] {
        m.apply::<NodePool>(&format!(
            r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: {name}}}
spec:
  weight: {weight}
  limits: {{cpu: "{cpu}"}}
  template:
    spec:
      requirements:
      - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
      - {{key: karpenter.azure.com/sku-family, operator: In, values: [D]}}
      - {{key: kubernetes.io/arch, operator: In, values: [amd64]}}
      - {{key: karpenter.azure.com/sku-cpu, operator: In, values: ["2"]}}
  disruption:
    consolidateAfter: Never
"#
        ))
        .await;
    }
    let mut over = Vec::new();
    let mut within_limits = |s: &Snapshot| {
        for (pool, limit) in [("preferred", 4000), ("spare", 8000)] {
            let nodes = s.pool_cpu_millis(pool);
            let claimed = s.pool_claimed_cpu_millis(pool);
            if nodes > limit || claimed > limit {
                over.push(format!(
                    "{pool}: nodes {nodes}m, claims {claimed}m > {limit}m"
                ));
            }
        }
    };
    // One 1.5-CPU pod per 2-vCPU node: five pods need five nodes.
    create_deployment(&m, &deployment("web", 5, "1500m", &[])).await;
    m.run(Duration::from_secs(60), 5 * SECOND, &mut within_limits)
        .await;
    let first = m.snapshot().await;
    assert_eq!(first.running(), 5);
    assert_eq!(
        (first.pool_nodes("preferred"), first.pool_nodes("spare")),
        (2, 3),
        "the weight-50 pool fills its 4 CPUs first"
    );
    assert_eq!(first.pool_cpu_millis("preferred"), 4000);

    // Three more: one fits the spare pool's last 2 CPUs; two stay pending.
    m.scale("web", 8).await;
    m.run(Duration::from_secs(120), 5 * SECOND, &mut within_limits)
        .await;
    let after = m.snapshot().await;
    assert!(over.is_empty(), "a pool exceeded its limit: {over:?}");
    assert_eq!(after.running(), 6);
    assert_eq!(after.unschedulable().len(), 2);
    assert_eq!(
        (
            after.pool_cpu_millis("preferred"),
            after.pool_cpu_millis("spare")
        ),
        (4000, 8000)
    );
    let events = m.events().await;
    assert!(
        says(&events, "FailedScheduling", "limits"),
        "the pending pods say the pools' limits hold them"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_limit_caps_how_many_nodes_a_pool_launches() {
    let m = member().await;
    m.apply::<NodePool>(
        r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: capped}
spec:
  limits: {nodes: "2"}
  template:
    spec:
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      - {key: karpenter.azure.com/sku-cpu, operator: In, values: ["2"]}
  disruption:
    consolidateAfter: Never
"#,
    )
    .await;
    // One 1.5-CPU pod per 2-vCPU node: four pods would need four nodes.
    create_deployment(&m, &deployment("web", 4, "1500m", &[])).await;
    m.run(Duration::from_secs(120), 5 * SECOND, &mut |s| {
        assert!(s.pool_nodes("capped") <= 2, "the pool stays within 2 nodes");
    })
    .await;
    let s = m.snapshot().await;
    assert_eq!(s.pool_nodes("capped"), 2);
    assert_eq!((s.running(), s.unschedulable().len()), (2, 2));
    // Its nodes registered: the pool says its launches and registrations are healthy.
    let pool = Api::<NodePool>::all(m.client.clone())
        .get("capped")
        .await
        .unwrap();
    let health = pool
        .status
        .iter()
        .flat_map(|s| &s.conditions)
        .find(|c| c.type_ == "NodeRegistrationHealthy")
        .map(|c| c.status.clone());
    assert_eq!(health.as_deref(), Some("True"));
    let events = m.events().await;
    assert!(
        says(&events, "FailedScheduling", "limits.nodes"),
        "the pending pods say the node limit holds them"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_scale_resizes_a_static_pool() {
    let m = member().await;
    m.apply::<NodePool>(
        r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: fixed}
spec:
  replicas: 1
  limits: {nodes: "3"}
  template:
    spec:
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      - {key: karpenter.azure.com/sku-cpu, operator: In, values: ["2"]}
"#,
    )
    .await;
    m.run(Duration::from_secs(60), 5 * SECOND, &mut |_| {})
        .await;
    let pools = Api::<NodePool>::all(m.client.clone());
    let scale = pools.get_scale("fixed").await.unwrap();
    let replicas = |s: &k8s_openapi::api::autoscaling::v1::Scale| {
        (
            s.spec.as_ref().and_then(|s| s.replicas),
            s.status.as_ref().map(|s| s.replicas),
        )
    };
    assert_eq!(replicas(&scale), (Some(1), Some(1)), "one node, as asked");
    // `kubectl scale nodepool fixed --replicas 5` writes the scale subresource; limits.nodes
    // stops the pool at three.
    pools
        .patch_scale(
            "fixed",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"replicas": 5}})),
        )
        .await
        .unwrap();
    m.run(Duration::from_secs(60), 5 * SECOND, &mut |s| {
        assert!(s.pool_nodes("fixed") <= 3, "limits.nodes holds");
    })
    .await;
    assert_eq!(m.snapshot().await.pool_nodes("fixed"), 3);
    assert_eq!(
        replicas(&pools.get_scale("fixed").await.unwrap()),
        (Some(5), Some(3))
    );
    let events = m.events().await;
    assert!(says(
        &events,
        "Provisioned",
        "hold the static pool at 5 node(s)"
    ));
}

/// A spot-only pool that consolidates underutilized nodes at once.
const SPOT_POOL: &str = r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
    budgets:
    - nodes: "100%"
"#;

/// A spot node left running one small pod, on a member whose Karpenter consolidates with
/// `consolidation`: the snapshot before and after three simulated minutes, and the events.
async fn underutilized_spot_node(
    consolidation: ConsolidationOptions,
) -> (Snapshot, Snapshot, Vec<Event>) {
    let m = member_with(START, consolidation).await;
    m.apply::<NodePool>(SPOT_POOL).await;
    create_deployment(&m, &deployment("big", 1, "30", &[])).await;
    create_deployment(&m, &deployment("small", 1, "500m", &[])).await;
    m.run(Duration::from_secs(60), 5 * SECOND, &mut |_| {})
        .await;
    let before = m.snapshot().await;
    assert_eq!(
        (before.running(), before.nodes.len()),
        (2, 1),
        "one big spot node for both"
    );
    m.scale("big", 0).await;
    m.run(Duration::from_secs(180), 5 * SECOND, &mut |_| {})
        .await;
    (before, m.snapshot().await, m.events().await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spot_nodes_are_replaced_by_spot_nodes_only_with_the_feature_gate() {
    let (before, after, events) = underutilized_spot_node(ConsolidationOptions::default()).await;
    assert_eq!(
        after.node_names(),
        before.node_names(),
        "without the gate the node stays"
    );
    assert!(
        says(
            &events,
            "Unconsolidatable",
            "spot-to-spot consolidation is disabled"
        ),
        "the claim says why it is not consolidated"
    );

    let gate = ConsolidationOptions::from_feature_gates("SpotToSpotConsolidation=true").unwrap();
    let (before, after, events) = underutilized_spot_node(gate).await;
    let why: Vec<_> = with_reason(&events, "Unconsolidatable")
        .iter()
        .map(|e| e.message.clone())
        .collect();
    assert_eq!(after.running(), 1, "{why:?}");
    assert_eq!(after.nodes.len(), 1);
    assert!(
        after.node_names().is_disjoint(&before.node_names()),
        "with the gate the node is replaced: {why:?}"
    );
    assert!(after.price() < before.price(), "by a cheaper spot node");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_balanced_pool_replaces_only_when_the_savings_pay_for_the_disruption() {
    let m = member().await;
    m.apply::<NodePool>(
        r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      - {key: node.kubernetes.io/instance-type, operator: In,
         values: [Standard_D2s_v5, Standard_E4s_v5, Standard_D8s_v5]}
  disruption:
    consolidationPolicy: Balanced
    consolidateAfter: 0s
"#,
    )
    .await;
    create_deployment(&m, &deployment("web", 4, "1500m", &[])).await;
    m.run(Duration::from_secs(60), 5 * SECOND, &mut |_| {})
        .await;
    assert_eq!(m.snapshot().await.instance_types(), ["Standard_D8s_v5"]);

    // Two pods fit an E4 at $0.134/h: 43 % of the D8's cost for all the pool's disruption.
    m.scale("web", 2).await;
    m.run(Duration::from_secs(120), 5 * SECOND, &mut |_| {})
        .await;
    assert_eq!(m.snapshot().await.instance_types(), ["Standard_D8s_v5"]);
    let events = m.events().await;
    assert!(
        says(
            &events,
            "Unconsolidatable",
            "has consolidation policy Balanced and the move saves too little for its disruption: score 0.43 < threshold 0.50"
        ),
        "{:?}",
        with_reason(&events, "Unconsolidatable")
    );
    let metrics = m.sim.engine().metrics().render(0, 0);
    assert!(
        metrics.contains(
            r#"karpenter_consolidation_moves_total{decision="rejected",nodepool="default",policy="Balanced"}"#
        ),
        "{metrics}"
    );

    // One pod fits a D2: 75 % of the cost, approved.
    m.scale("web", 1).await;
    m.run(Duration::from_secs(120), 5 * SECOND, &mut |_| {})
        .await;
    assert_eq!(m.snapshot().await.instance_types(), ["Standard_D2s_v5"]);
    let events = m.events().await;
    assert!(
        says(
            &events,
            "ConsolidationApproved",
            "score 0.75 >= threshold 0.50 (k: 2, savings 75.0%, disruption 100.0%)"
        ),
        "{:?}",
        with_reason(&events, "ConsolidationApproved")
    );
}

/// The `type` condition of overlay `name` as `(status, reason)`.
async fn overlay_condition(m: &Member, name: &str, type_: &str) -> Option<(String, String)> {
    let c = overlay_conditions(m, name)
        .await
        .into_iter()
        .find(|c| c.type_ == type_)?;
    Some((c.status, c.reason))
}

/// The overlay's conditions (none if it is gone).
async fn overlay_conditions(
    m: &Member,
    name: &str,
) -> Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition> {
    Api::<NodeOverlay>::all(m.client.clone())
        .get(name)
        .await
        .ok()
        .and_then(|o| o.status)
        .map(|s| s.conditions)
        .unwrap_or_default()
}

/// The message of the overlay's Ready condition.
async fn overlay_message(m: &Member, name: &str) -> Option<String> {
    overlay_conditions(m, name)
        .await
        .into_iter()
        .find(|c| c.type_ == "Ready")
        .map(|c| c.message)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_overlays_change_what_consolidation_saves_and_say_when_they_conflict() {
    let m = member().await;
    m.apply::<NodePool>(
        r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      - {key: node.kubernetes.io/instance-type, operator: In,
         values: [Standard_D2s_v5, Standard_D8s_v5]}
  disruption:
    consolidateAfter: 0s
"#,
    )
    .await;
    // Same weight, same offerings: "committed-d8" goes first (the later name), "a-clash"
    // conflicts and changes nothing.
    for (name, price) in [
        ("committed-d8", r#"price: "0.01""#),
        ("a-clash", r#"priceAdjustment: "+50%""#),
    ] {
        m.apply::<NodeOverlay>(&format!(
            r#"
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {{name: {name}}}
spec:
  requirements:
  - {{key: node.kubernetes.io/instance-type, operator: In, values: [Standard_D8s_v5]}}
  {price}
  weight: 10
"#
        ))
        .await;
    }
    create_deployment(&m, &deployment("web", 4, "1500m", &[])).await;
    m.run(Duration::from_secs(60), 5 * SECOND, &mut |_| {})
        .await;
    let up = m.snapshot().await;
    assert_eq!(up.instance_types(), ["Standard_D8s_v5"]);
    let annotations = up.claims[0]
        .metadata
        .annotations
        .clone()
        .unwrap_or_default();
    assert_eq!(
        annotations
            .get("karpenter.sh/price-overlay-applied")
            .map(String::as_str),
        Some("true")
    );
    assert_eq!(
        overlay_condition(&m, "committed-d8", "Ready").await,
        Some(("True".into(), "Ready".into()))
    );
    // Ready says what an overlay prices: the D8's six offerings (three zones, on-demand and
    // spot) for the one pool; an overlay naming a type no pool offers prices nothing.
    m.apply::<NodeOverlay>(
        r#"
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: typo}
spec:
  requirements:
  - {key: node.kubernetes.io/instance-type, operator: In, values: [Standard_D8_v5]}
  priceAdjustment: "-10%"
"#,
    )
    .await;
    m.run(Duration::from_secs(10), 5 * SECOND, &mut |_| {})
        .await;
    assert_eq!(
        overlay_message(&m, "committed-d8").await.as_deref(),
        Some("changes the price of 6 offering(s) across the NodePools")
    );
    assert_eq!(
        overlay_message(&m, "typo").await.as_deref(),
        Some("matches no offering of any NodePool's instance types: it changes no price")
    );
    Api::<NodeOverlay>::all(m.client.clone())
        .delete("typo", &Default::default())
        .await
        .unwrap();
    assert_eq!(
        overlay_condition(&m, "a-clash", "ValidationSucceeded").await,
        Some(("False".into(), "Conflict".into()))
    );

    // One pod left: a D2 at $0.059/h is no saving on a D8 the overlay prices at $0.01/h.
    m.scale("web", 1).await;
    m.run(Duration::from_secs(120), 5 * SECOND, &mut |_| {})
        .await;
    assert_eq!(m.snapshot().await.instance_types(), ["Standard_D8s_v5"]);

    // Without it, "a-clash" applies (D8 at 1.5 × $0.234/h) and the D2 replaces the D8.
    Api::<NodeOverlay>::all(m.client.clone())
        .delete("committed-d8", &Default::default())
        .await
        .unwrap();
    m.run(Duration::from_secs(120), 5 * SECOND, &mut |_| {})
        .await;
    assert_eq!(m.snapshot().await.instance_types(), ["Standard_D2s_v5"]);
    assert_eq!(
        overlay_condition(&m, "a-clash", "ValidationSucceeded").await,
        Some(("True".into(), "ValidationSucceeded".into()))
    );
}

/// One zone of a node-local DNS list.
const DNS_ZONE: &str = "queryLogging: Error, protocol: PreferUDP, forwardPolicy: Sequential, maxConcurrent: 1000, cacheDuration: 1h, serveStaleDuration: 1h, serveStale: Immediate";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_class_shapes_its_pools_nodes_and_resolves_local_dns_for_the_version() {
    let m = member().await;
    m.apply::<AKSNodeClass>(&format!(
        r#"
apiVersion: karpenter.azure.com/v1beta1
kind: AKSNodeClass
metadata: {{name: streaming}}
spec:
  artifactStreaming: {{enabled: true}}
  maxPods: 20
  localDNS:
    mode: Preferred
    vnetDNSOverrides:
    - {{zone: ".", forwardDestination: VnetDNS, {DNS_ZONE}}}
    - {{zone: cluster.local, forwardDestination: ClusterCoreDNS, {DNS_ZONE}}}
    kubeDNSOverrides:
    - {{zone: ".", forwardDestination: ClusterCoreDNS, {DNS_ZONE}}}
    - {{zone: cluster.local, forwardDestination: ClusterCoreDNS, {DNS_ZONE}}}
"#
    ))
    .await;
    for (pool, class) in [("plain", "default"), ("streaming", "streaming")] {
        m.apply::<NodePool>(&format!(
            r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: {pool}}}
spec:
  template:
    spec:
      nodeClassRef: {{group: karpenter.azure.com, kind: AKSNodeClass, name: {class}}}
      requirements:
      - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
      - {{key: kubernetes.io/arch, operator: In, values: [amd64, arm64]}}
  disruption:
    consolidateAfter: Never
"#
        ))
        .await;
        let mut d = deployment(pool, 2, "1500m", &[]);
        if let Some(spec) = d.spec.template.spec.as_mut() {
            spec.node_selector =
                Some([("karpenter.sh/nodepool".to_string(), pool.to_string())].into());
        }
        create_deployment(&m, &d).await;
    }
    m.run(Duration::from_secs(120), 5 * SECOND, &mut |_| {})
        .await;
    let s = m.snapshot().await;
    assert_eq!(s.unschedulable().len(), 0);
    let arch_of = |pool: &str| -> BTreeSet<String> {
        s.nodes
            .iter()
            .filter_map(|n| n.metadata.labels.as_ref())
            .filter(|l| l.get("karpenter.sh/nodepool").map(String::as_str) == Some(pool))
            .filter_map(|l| l.get("kubernetes.io/arch").cloned())
            .collect()
    };
    // Equal prices: without the class's restriction the arm64 twin is launched.
    assert_eq!(arch_of("plain"), BTreeSet::from(["arm64".to_string()]));
    assert_eq!(arch_of("streaming"), BTreeSet::from(["amd64".to_string()]));
    // maxPods replaces the type's own pod capacity (16 per vCPU: both pods share a 4-vCPU
    // node).
    let pods_of = |pool: &str| -> BTreeSet<String> {
        s.nodes
            .iter()
            .filter(|n| {
                n.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("karpenter.sh/nodepool"))
                    == Some(&pool.to_string())
            })
            .filter_map(|n| n.status.as_ref()?.capacity.as_ref()?.get("pods").cloned())
            .map(|q| q.0)
            .collect()
    };
    assert_eq!(pods_of("plain"), BTreeSet::from(["64".to_string()]));
    assert_eq!(pods_of("streaming"), BTreeSet::from(["20".to_string()]));
    // `Preferred` runs the node-local DNS proxy from Kubernetes 1.35; this member runs 1.30.
    let class = Api::<AKSNodeClass>::all(m.client.clone())
        .get("streaming")
        .await
        .unwrap();
    assert_eq!(
        class.status.and_then(|s| s.local_dns_state),
        Some(flotilla_api::nodes::LocalDnsState::Disabled)
    );
}
