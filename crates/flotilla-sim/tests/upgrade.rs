//! Member upgrades end to end: an in-process hub running the membership controller, a
//! simulated member, and its member agent with the simulated provider, all on a manual clock.
//! A MemberUpgrade created on the hub is carried out step by step on simulated time (and
//! resumed by a new agent after the old one stops); a simulated failure or a stopped cluster
//! makes it fail with the provider's message.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::updates::MemberUpgrade;
use flotilla_apiserver::{Clock, Hub, HubOptions, ManualClock};
use flotilla_member::upgrade::{Executor, Provider};
use flotilla_member::{Agent, PriceSource, membership};
use flotilla_sim::cluster::{SimCluster, SimOptions};
use flotilla_sim::fleet::{MemberSpec, NodePoolSpec, UpgradeBehaviour};
use flotilla_sim::upgrade::{
    Faults, SIMULATE_FAILURE_ANNOTATION, SIMULATE_STOPPED_ANNOTATION, SimProvider,
    follow_annotations,
};
use flotilla_store::MemoryStore;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use kube::{Api, Client};
use serde_json::json;

const MEMBER: &str = "m1";
const NAMESPACE: &str = "fleet-member-m1";
const UBUNTU_OLD: &str = "AKSUbuntu-2204gen2containerd-202510.13.0";
const UBUNTU_NEW: &str = "AKSUbuntu-2204gen2containerd-202511.03.0";
const ARM: &str = "AKSUbuntu-2204gen2arm64containerd-202510.13.0";

struct NoPrices;
impl PriceSource for NoPrices {
    fn hourly_price(&self, _: &str, _: &str, _: &str) -> Option<f64> {
        None
    }
}

fn member_spec() -> MemberSpec {
    let pool = |name: &str, count, image: &str| NodePoolSpec {
        name: name.into(),
        instance_type: "Standard_D4s_v5".into(),
        count,
        node_image_version: image.into(),
    };
    MemberSpec {
        name: MEMBER.into(),
        region: "eastus".into(),
        labels: BTreeMap::new(),
        kubernetes_version: "1.30.6".into(),
        node_pools: vec![pool("system", 2, UBUNTU_OLD), pool("arm", 1, ARM)],
        properties: BTreeMap::new(),
        maintenance_windows: vec![],
        stopped: false,
        upgrade: Some(UpgradeBehaviour {
            control_plane_minutes: Some(10),
            node_minutes: Some(4),
            ..UpgradeBehaviour::default()
        }),
    }
}

/// A hub, a joined simulated member and its agent, on one manual clock.
struct Fleet {
    clock: ManualClock,
    _hub: Hub,
    hub: Client,
    sim: Arc<SimCluster>,
    faults: Faults,
    agent: tokio::task::JoinHandle<()>,
    /// Whether the agent carries out the member's upgrades.
    agent_upgrades: bool,
    _tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Fleet {
    /// The member of [`member_spec`] with an agent that carries out its upgrades.
    async fn start() -> Fleet {
        Fleet::start_with(member_spec(), true).await
    }

    /// A member of `spec` with an agent that carries out its upgrades if `agent_upgrades`.
    async fn start_with(spec: MemberSpec, agent_upgrades: bool) -> Fleet {
        let clock = ManualClock::new("2026-03-01T10:00:00Z".parse().unwrap());
        let shared: Arc<dyn Clock> = Arc::new(clock.clone());
        let hub = Hub::start(
            Arc::new(MemoryStore::new()),
            HubOptions {
                clock: shared.clone(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
        let options = SimOptions {
            clock: shared.clone(),
            ..SimOptions::default()
        };
        let sim = Arc::new(
            SimCluster::start(&spec, options, &SimCluster::member_kinds())
                .await
                .unwrap(),
        );
        let client = hub.client();
        let members: Api<MemberCluster> = Api::all(client.clone());
        let mc = serde_json::from_value(json!({
            "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
            "kind": "MemberCluster",
            "metadata": {"name": MEMBER},
            "spec": {"identity": {"kind": "ServiceAccount", "name": "agent", "namespace": "fleet-system"}},
        }))
        .unwrap();
        members.create(&PostParams::default(), &mc).await.unwrap();
        let faults = Faults::default();
        let tasks = vec![
            tokio::spawn(membership::run(client.clone(), shared.clone())),
            tokio::spawn(follow_annotations(
                client.clone(),
                HashMap::from([(MEMBER.to_string(), faults.clone())]),
            )),
        ];
        let mut fleet = Fleet {
            clock,
            _hub: hub,
            hub: client,
            sim,
            faults,
            agent: tokio::spawn(async {}),
            agent_upgrades,
            _tasks: tasks,
        };
        fleet.start_agent();
        fleet
    }

    /// The simulated provider of the member.
    fn provider(&self) -> Arc<SimProvider> {
        Arc::new(SimProvider::new(self.sim.clone(), self.faults.clone()))
    }

    /// Starts a member agent (replacing the running one).
    fn start_agent(&mut self) {
        self.agent.abort();
        let provider: Option<Arc<dyn Provider>> = match self.agent_upgrades {
            true => Some(self.provider()),
            false => None,
        };
        let agent = Agent {
            name: MEMBER.into(),
            hub: self.hub.clone(),
            member: self.sim.client(),
            clock: Arc::new(self.clock.clone()),
            prices: Arc::new(NoPrices),
            overrides: BTreeMap::new(),
            provider,
        };
        self.agent = tokio::spawn(agent.run());
    }

    fn upgrades(&self) -> Api<MemberUpgrade> {
        Api::namespaced(self.hub.clone(), NAMESPACE)
    }

    fn members(&self) -> Api<MemberCluster> {
        Api::all(self.hub.clone())
    }

    async fn create_upgrade(&self, name: &str, spec: serde_json::Value) {
        let upgrade = serde_json::from_value(json!({
            "apiVersion": "updates.flotilla.dev/v1beta1",
            "kind": "MemberUpgrade",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": spec,
        }))
        .unwrap();
        self.upgrades()
            .create(&PostParams::default(), &upgrade)
            .await
            .unwrap();
    }

    /// Polls `check` until it returns `Some`; with `advance`, moves the clock a minute on
    /// between polls, so steps waiting on simulated time finish.
    async fn until<T, F, Fut>(&self, what: &str, advance: bool, mut check: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Option<T>>,
    {
        for _ in 0..600 {
            if let Some(v) = check().await {
                return v;
            }
            if advance {
                self.clock.advance(Duration::from_secs(60));
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("timed out waiting for {what}");
    }

    async fn upgrade_status(
        &self,
        name: &str,
    ) -> Option<flotilla_api::updates::MemberUpgradeStatus> {
        self.upgrades().get(name).await.ok()?.status
    }

    /// The MemberCluster's reported versions as JSON, once they exist.
    async fn reported_versions(&self) -> Option<serde_json::Value> {
        let mc = self.members().get(MEMBER).await.ok()?;
        serde_json::to_value(mc.status?.versions?).ok()
    }

    async fn annotate(&self, annotations: serde_json::Value) {
        self.members()
            .patch(
                MEMBER,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"annotations": annotations}})),
            )
            .await
            .unwrap();
    }
}

/// Every distinct `(phase, progress, message)` the upgrade's status goes through, in order.
/// A Full upgrade to 1.31.2 with the new Ubuntu image: three steps on the test member.
fn full_upgrade() -> serde_json::Value {
    json!({"updateRun": "run-1", "type": "Full", "kubernetesVersion": "1.31.2", "nodeImages": [UBUNTU_NEW]})
}

fn record_statuses(
    api: Api<MemberUpgrade>,
    name: &str,
) -> Arc<Mutex<Vec<(String, String, String)>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
    let record = seen.clone();
    tokio::spawn(async move {
        let mut events = Box::pin(watcher(api, config));
        while let Some(event) = events.next().await {
            let (Ok(watcher::Event::Apply(u)) | Ok(watcher::Event::InitApply(u))) = event else {
                continue;
            };
            let Some(s) = u.status else { continue };
            let entry = (
                format!("{:?}", s.phase),
                s.progress.unwrap_or_default(),
                s.message.unwrap_or_default(),
            );
            let mut seen = record.lock().unwrap();
            if seen.last() != Some(&entry) {
                seen.push(entry);
            }
        }
    });
    seen
}

fn images(sim: &SimCluster) -> Vec<(String, String)> {
    sim.spec()
        .node_pools
        .iter()
        .map(|p| (p.name.clone(), p.node_image_version.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_upgrade_runs_step_by_step_and_resumes_after_an_agent_restart() {
    let mut fleet = Fleet::start().await;
    let versions = fleet
        .until("versions reported", true, || fleet.reported_versions())
        .await;
    assert_eq!(versions["kubernetesVersion"], "1.30.6");
    assert_eq!(versions["nodePools"][0]["image"], UBUNTU_OLD);
    assert_eq!(
        versions["nodePools"][0]["imageFamily"],
        "AKSUbuntu-2204gen2containerd"
    );
    assert_eq!(versions["nodePools"][0]["imageVersion"], "202510.13.0");
    assert_eq!(versions["nodePools"][0]["nodeCount"], 2);
    assert_eq!(versions["nodePools"][1]["image"], ARM);
    assert_eq!(
        versions["expectedDurations"],
        json!({"controlPlaneSeconds": 600, "nodeSeconds": 240})
    );

    let seen = record_statuses(fleet.upgrades(), "up-1");
    fleet.create_upgrade("up-1", full_upgrade()).await;
    // The control plane takes 10 simulated minutes: it is upgraded only once they pass.
    let started = fleet
        .until("the control plane step", false, || async {
            let s = fleet.upgrade_status("up-1").await?;
            (s.message.as_deref() == Some("upgrading control plane to 1.31.2")).then_some(s)
        })
        .await;
    assert_eq!(started.progress.as_deref(), Some("0/3"));
    assert_eq!(fleet.sim.kubernetes_version(), "1.30.6");
    let start_time = started.start_time.unwrap().0;

    // Once the first node is on its way, the agent stops; a new one resumes the upgrade.
    fleet
        .until("the first node step", true, || async {
            let s = fleet.upgrade_status("up-1").await?;
            (s.progress.as_deref() == Some("1/3")).then_some(())
        })
        .await;
    assert_eq!(fleet.sim.kubernetes_version(), "1.31.2");
    fleet.start_agent();

    let done = fleet
        .until("the upgrade to succeed", true, || async {
            let s = fleet.upgrade_status("up-1").await?;
            (format!("{:?}", s.phase) == "Succeeded").then_some(s)
        })
        .await;
    assert_eq!(done.progress.as_deref(), Some("3/3"));
    assert_eq!(
        done.message.as_deref(),
        Some(format!("done: control plane at 1.31.2; 2 node(s) on {UBUNTU_NEW}").as_str())
    );
    assert_eq!(
        done.start_time.unwrap().0,
        start_time,
        "kept across the restart"
    );
    let took = done.completed_time.unwrap().0.duration_since(start_time);
    assert!(took >= jiff::SignedDuration::from_mins(18), "{took}");

    // What the member runs: the arm pool keeps its image (no target for its family).
    assert_eq!(fleet.sim.kubernetes_version(), "1.31.2");
    assert_eq!(
        images(&fleet.sim),
        [
            ("system".into(), UBUNTU_NEW.into()),
            ("arm".into(), ARM.into())
        ]
    );
    let node_images: Vec<String> = fleet
        .sim
        .node_images()
        .await
        .unwrap()
        .into_iter()
        .map(|n| n.image)
        .collect();
    assert_eq!(node_images, [UBUNTU_NEW, UBUNTU_NEW, ARM]);
    let versions = fleet
        .until("the new versions reported", false, || async {
            let v = fleet.reported_versions().await?;
            (v["kubernetesVersion"] == "1.31.2" && v["nodePools"][0]["image"] == UBUNTU_NEW)
                .then_some(v)
        })
        .await;
    assert_eq!(versions["nodePools"][1]["image"], ARM);

    // One status write per step; the new agent's first write repeats the step in flight.
    let node = |n| format!("upgrading pool system node {n}/2 to {UBUNTU_NEW}");
    let expected: Vec<(String, String, String)> = [
        (
            "Running",
            "0/3",
            "upgrading control plane to 1.31.2".to_string(),
        ),
        ("Running", "1/3", node(1)),
        ("Running", "2/3", node(2)),
        (
            "Succeeded",
            "3/3",
            format!("done: control plane at 1.31.2; 2 node(s) on {UBUNTU_NEW}"),
        ),
    ]
    .into_iter()
    .map(|(phase, progress, message)| (phase.to_string(), progress.to_string(), message))
    .collect();
    assert_eq!(*seen.lock().unwrap(), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steps_that_take_no_time_are_not_announced_one_write_covers_them() {
    let spec = MemberSpec {
        upgrade: Some(UpgradeBehaviour {
            control_plane_minutes: Some(0),
            node_minutes: Some(0),
            ..UpgradeBehaviour::default()
        }),
        ..member_spec()
    };
    let fleet = Fleet::start_with(spec, false).await;
    // An announcement delay no instant step can reach however loaded the machine is.
    let executor = Executor {
        member_name: MEMBER.into(),
        hub: fleet.hub.clone(),
        provider: fleet.provider(),
        clock: Arc::new(fleet.clock.clone()),
        announce_after: Duration::from_secs(3600),
        version_reports: Default::default(),
    };
    let _running = executor.spawn();
    let namespaces: Api<Namespace> = Api::all(fleet.hub.clone());
    fleet
        .until("the member's hub namespace", false, || async {
            namespaces.get(NAMESPACE).await.ok()
        })
        .await;
    let seen = record_statuses(fleet.upgrades(), "instant");
    fleet.create_upgrade("instant", full_upgrade()).await;
    let done = fleet
        .until("the upgrade to succeed", false, || async {
            let s = fleet.upgrade_status("instant").await?;
            (format!("{:?}", s.phase) == "Succeeded").then_some(s)
        })
        .await;
    assert_eq!(done.progress.as_deref(), Some("3/3"));
    assert_eq!(fleet.sim.kubernetes_version(), "1.31.2");
    // The watch has seen the final write once the status it reads is final.
    fleet
        .until("the watch to see the final status", false, || async {
            let seen = seen.lock().unwrap();
            seen.last()
                .is_some_and(|(phase, ..)| phase == "Succeeded")
                .then_some(())
        })
        .await;
    let phases: Vec<String> = seen.lock().unwrap().iter().map(|s| s.0.clone()).collect();
    assert_eq!(
        phases,
        ["Succeeded"],
        "one status write for three instant steps"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulated_failures_and_stopped_clusters_fail_upgrades_with_their_message() {
    let fleet = Fleet::start().await;
    fleet
        .until("versions reported", true, || fleet.reported_versions())
        .await;

    fleet
        .annotate(json!({SIMULATE_FAILURE_ANNOTATION: "quota exceeded in eastus"}))
        .await;
    fleet
        .until("the failure switched on", false, || async {
            fleet.faults.failure().map(drop)
        })
        .await;
    fleet
        .create_upgrade(
            "images",
            json!({"updateRun": "run-1", "type": "NodeImageOnly", "nodeImages": [UBUNTU_NEW]}),
        )
        .await;
    let failed = fleet
        .until("the upgrade to fail", false, || async {
            let s = fleet.upgrade_status("images").await?;
            (format!("{:?}", s.phase) == "Failed").then_some(s)
        })
        .await;
    assert_eq!(failed.message.as_deref(), Some("quota exceeded in eastus"));
    assert_eq!(failed.progress.as_deref(), Some("0/2"));
    assert!(failed.start_time.is_some() && failed.completed_time.is_some());
    assert_eq!(images(&fleet.sim)[0].1, UBUNTU_OLD);

    fleet
        .annotate(json!({SIMULATE_FAILURE_ANNOTATION: null, SIMULATE_STOPPED_ANNOTATION: "true"}))
        .await;
    fleet
        .until("the cluster stopped", false, || async {
            (fleet.faults.stopped() && fleet.faults.failure().is_none()).then_some(())
        })
        .await;
    fleet
        .create_upgrade(
            "control-plane",
            json!({"updateRun": "run-2", "type": "ControlPlaneOnly", "kubernetesVersion": "1.31.2"}),
        )
        .await;
    let failed = fleet
        .until(
            "the upgrade of the stopped cluster to fail",
            false,
            || async {
                let s = fleet.upgrade_status("control-plane").await?;
                (format!("{:?}", s.phase) == "Failed").then_some(s)
            },
        )
        .await;
    assert_eq!(
        failed.message.as_deref(),
        Some(
            "cluster m1 is stopped: start it before upgrading (a stopped cluster cannot be upgraded)"
        )
    );
    assert_eq!(fleet.sim.kubernetes_version(), "1.30.6");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_image_upgrade_moves_the_node_class_and_drift_replaces_karpenter_nodes() {
    let fleet = Fleet::start().await;
    let member = fleet.sim.client();
    let pool: flotilla_api::nodes::NodePool = serde_json::from_value(json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "default"},
        "spec": {"template": {"spec": {"requirements": [
            {"key": "karpenter.azure.com/sku-cpu", "operator": "In", "values": ["2"]},
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}
        ]}}}
    }))
    .unwrap();
    Api::<flotilla_api::nodes::NodePool>::all(member.clone())
        .create(&PostParams::default(), &pool)
        .await
        .unwrap();
    let deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "nodeSelector": {"karpenter.sh/nodepool": "default"},
                    "containers": [{"name": "web", "image": "nginx",
                        "resources": {"requests": {"cpu": "1500m"}}}]
                }
            }
        }
    }))
    .unwrap();
    Api::<k8s_openapi::api::apps::v1::Deployment>::namespaced(member.clone(), "default")
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();
    let karpenter_nodes = || async {
        let pools = fleet.sim.auto_provisioned_pools().await.unwrap();
        pools.into_iter().find(|p| p.name == "nodepool/default")
    };
    let before = fleet
        .until("three Karpenter nodes", true, || async {
            karpenter_nodes().await.filter(|p| p.nodes.len() == 3)
        })
        .await;
    assert!(
        before
            .nodes
            .iter()
            .all(|n| n.image == "AKSUbuntu-2204gen2containerd-202501.12.0")
    );
    fleet
        .create_upgrade(
            "images",
            json!({"updateRun": "run-1", "type": "NodeImageOnly", "nodeImages": [UBUNTU_NEW]}),
        )
        .await;
    let done = fleet
        .until("the upgrade to finish", true, || async {
            let s = fleet.upgrade_status("images").await?;
            let phase = format!("{:?}", s.phase);
            if phase == "Running" {
                // Never reported done while an old Karpenter node remains.
                assert_ne!(s.progress.as_deref(), Some("5/5"));
            }
            (phase == "Succeeded").then_some(s)
        })
        .await;
    assert_eq!(done.progress.as_deref(), Some("5/5"), "{done:?}");
    let at_success = karpenter_nodes().await.unwrap();
    assert_eq!(
        at_success.image, UBUNTU_NEW,
        "the node class runs the new image"
    );
    assert!(
        at_success.nodes.iter().all(|n| n.image == UBUNTU_NEW),
        "reported done while a node still ran the old image: {at_success:?}"
    );
    let after = fleet
        .until("three nodes on the new image", true, || async {
            karpenter_nodes().await.filter(|p| p.nodes.len() == 3)
        })
        .await;
    assert!(
        after.nodes.iter().all(|n| n.image == UBUNTU_NEW),
        "{after:?}"
    );
    let old: std::collections::BTreeSet<_> = before.nodes.iter().map(|n| &n.node).collect();
    assert!(
        after.nodes.iter().all(|n| !old.contains(&n.node)),
        "drift replaced every node rather than reimaging it"
    );
    let class: flotilla_api::nodes::AKSNodeClass = Api::all(member).get("default").await.unwrap();
    assert_eq!(class.spec.image_version.as_deref(), Some("202511.03.0"));
}
