//! Node auto-provisioning scenarios on a simulated member and a manual clock, through kube-rs:
//! pending pods launch nodes; a scale-down consolidates them within the budget and never
//! strands a pod; a node image change drifts nodes out one at a time; a `do-not-disrupt` pod
//! holds its node until the termination grace period forces it; expiration replaces nodes
//! even under a zero budget.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use flotilla_api::nodes::{AKSNodeClass, NodeClaim, NodePool};
use flotilla_apiserver::ManualClock;
use flotilla_apiserver::registry::Registry;
use flotilla_sim::cluster::{SimCluster, SimOptions};
use flotilla_sim::fleet::MemberSpec;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Container, Event, Node, Pod, PodSpec, PodTemplateSpec, ResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};

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
    let clock = ManualClock::new(START.parse().unwrap());
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
        }
    }

    async fn events(&self) -> Vec<Event> {
        Api::<Event>::all(self.client.clone())
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
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

    fn node_names(&self) -> BTreeSet<String> {
        self.nodes
            .iter()
            .filter_map(|n| n.metadata.name.clone())
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
