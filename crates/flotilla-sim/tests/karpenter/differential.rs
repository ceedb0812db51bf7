//! The same node auto-provisioning scenarios on real Karpenter and on Flotilla, compared.
//!
//! Real Karpenter (its kwok cloud provider, built from `sigs.k8s.io/karpenter` by
//! `tools/peers/build`) runs against a real cluster (`tools/kube/cluster`: kube-apiserver,
//! kube-scheduler, kwok) and offers exactly the simulated cloud's catalog: the same instance
//! types, zones, prices and allocatable resources. Flotilla runs each scenario on a simulated
//! member whose clock the test moves. Each scenario (`tests/fixtures/karpenter_scenarios.yaml`)
//! creates a NodePool and workloads and then changes them; after every step both sides settle
//! and what must match is compared: the nodes by instance type and capacity type (and zone
//! where the scenario pins zones), where each workload's pods run by node kind, and how many
//! are pending. A scenario whose outcome differs on purpose says why in `differs`; the test
//! then requires that it still differs, so a difference cannot outlive its explanation.
//!
//! CI runs the scenarios marked `ci: true`; `FLOTILLA_KARPENTER_SCENARIOS=all` runs them all.

use std::collections::BTreeMap;
use std::time::Duration;

use flotilla_testkit::{ClusterOptions, RealCluster, RealKarpenter};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams,
};
use kube::discovery::Scope;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Member, member};

/// The scenario file.
const SCENARIOS: &str = include_str!("../fixtures/karpenter_scenarios.yaml");

/// The simulated member's region; the real cluster's catalog uses its zones too.
pub(super) const REGION: &str = "eastus";

/// Karpenter's kwok provider subtracts this from every instance type's capacity (its fixed
/// kube-reserved), so the catalog it gets adds it back to match Flotilla's allocatable.
const KWOK_RESERVED_MILLICPU: i64 = 100;
const KWOK_RESERVED_MEMORY: i64 = 10 << 20;

/// While pods are pending a side counts as settled only after this long without change: the
/// kube-scheduler retries an unschedulable pod after a back-off of up to 10 s, and a
/// provisioner batches pods before it launches.
const PENDING_QUIET: Duration = Duration::from_secs(30);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    name: String,
    #[serde(default)]
    ci: bool,
    /// Compare node zones too (only meaningful where pods pin or spread zones: otherwise
    /// every zone costs the same and each side picks one arbitrarily).
    #[serde(default)]
    zones: bool,
    /// Why the two sides end differently, where they do on purpose.
    #[serde(default)]
    differs: Option<String>,
    /// The NodePool's `spec`, without `template.spec.nodeClassRef` (each side names its own).
    pool: Value,
    steps: Vec<Step>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Step {
    /// What the step does, for the report.
    say: String,
    /// Objects to create (a YAML stream; namespaced ones in `default`).
    #[serde(default)]
    apply: Option<String>,
    /// Deployments to scale, by name.
    #[serde(default)]
    scale: BTreeMap<String, i32>,
    /// A JSON merge patch to the NodePool's spec.
    #[serde(default)]
    pool: Option<Value>,
    /// Seconds of a side's clock with nothing changing before it counts as settled
    /// (Karpenter validates a consolidation for 15 s and polls every 10 s).
    quiet: u64,
}

/// What must match after a step.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Observation {
    /// Nodes by kind (`type capacity [zone]`).
    nodes: BTreeMap<String, usize>,
    /// Per workload, running pods by node kind.
    placement: BTreeMap<String, BTreeMap<String, usize>>,
    /// Per workload, pods no node holds.
    pending: BTreeMap<String, usize>,
    /// Nodes not Ready or being deleted, and pods bound to a node but not running yet:
    /// things in motion, which a settled side has none of.
    in_motion: usize,
}

/// One side of the comparison.
enum Side<'a> {
    Flotilla(&'a Member),
    Karpenter(kube::Client),
}

impl Side<'_> {
    fn client(&self) -> kube::Client {
        match self {
            Side::Flotilla(m) => m.client.clone(),
            Side::Karpenter(client) => client.clone(),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Side::Flotilla(_) => "Flotilla",
            Side::Karpenter(_) => "Karpenter",
        }
    }

    /// Moves the side's clock one tick: the simulated member's by five seconds, the real
    /// cluster's by sleeping one.
    async fn tick(&self) -> Duration {
        match self {
            Side::Flotilla(m) => {
                let step = Duration::from_secs(5);
                m.clock.advance(step);
                m.settle().await;
                step
            }
            Side::Karpenter(_) => {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Duration::from_secs(1)
            }
        }
    }

    fn pools(&self) -> Api<DynamicObject> {
        let resource = ApiResource {
            group: "karpenter.sh".into(),
            version: "v1".into(),
            api_version: "karpenter.sh/v1".into(),
            kind: "NodePool".into(),
            plural: "nodepools".into(),
        };
        Api::all_with(self.client(), &resource)
    }

    async fn create_pool(&self, spec: &Value) {
        let mut spec = spec.clone();
        if let Side::Karpenter(_) = self {
            spec["template"]["spec"]["nodeClassRef"] = json!({
                "group": "karpenter.kwok.sh",
                "kind": "KWOKNodeClass",
                "name": RealKarpenter::NODE_CLASS,
            });
        }
        let pool: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodePool",
            "metadata": {"name": "default"},
            "spec": spec,
        }))
        .expect("NodePool");
        self.pools()
            .create(&PostParams::default(), &pool)
            .await
            .unwrap_or_else(|e| panic!("{}: NodePool: {e}", self.name()));
    }

    async fn run(&self, step: &Step) {
        let client = self.client();
        let deployments = Api::<Deployment>::namespaced(client.clone(), "default");
        for doc in step.apply.iter().flat_map(|y| y.split("\n---\n")) {
            let object: DynamicObject = serde_saphyr::from_str(doc).expect("object YAML");
            let types = object.types.clone().expect("apiVersion and kind");
            let gvk = GroupVersionKind::try_from(&types).expect("apiVersion");
            let (resource, capabilities) = kube::discovery::pinned_kind(&client, &gvk)
                .await
                .unwrap_or_else(|e| panic!("{}: discover {}: {e}", self.name(), types.kind));
            let api: Api<DynamicObject> = match capabilities.scope {
                Scope::Namespaced => Api::namespaced_with(client.clone(), "default", &resource),
                Scope::Cluster => Api::all_with(client.clone(), &resource),
            };
            api.create(&PostParams::default(), &object)
                .await
                .unwrap_or_else(|e| panic!("{}: {} {e}", self.name(), types.kind));
        }
        for (name, replicas) in &step.scale {
            deployments
                .patch(
                    name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": {"replicas": replicas}})),
                )
                .await
                .unwrap_or_else(|e| panic!("{}: scale {name}: {e}", self.name()));
        }
        if let Some(patch) = &step.pool {
            self.pools()
                .patch(
                    "default",
                    &PatchParams::default(),
                    &Patch::Merge(json!({ "spec": patch })),
                )
                .await
                .unwrap_or_else(|e| panic!("{}: NodePool patch: {e}", self.name()));
        }
    }

    /// Ticks until the observation has not changed for `quiet` seconds of this side's clock
    /// (at most ten minutes of it), and returns it.
    async fn settle(&self, quiet: u64, zones: bool) -> Observation {
        let quiet = Duration::from_secs(quiet);
        let mut last = observe(&self.client(), zones).await;
        let mut same_for = Duration::ZERO;
        let mut elapsed = Duration::ZERO;
        loop {
            let needed = if last.pending.is_empty() {
                quiet
            } else {
                quiet.max(PENDING_QUIET)
            };
            if same_for >= needed && last.in_motion == 0 {
                break;
            }
            assert!(
                elapsed < Duration::from_secs(600),
                "{} never settled; last seen {last:#?}",
                self.name()
            );
            let tick = self.tick().await;
            elapsed += tick;
            let now = observe(&self.client(), zones).await;
            if std::env::var_os("FLOTILLA_KARPENTER_TRACE").is_some() {
                eprintln!("{} +{elapsed:?}: {now:?}", self.name());
            }
            if now == last {
                same_for += tick;
            } else {
                same_for = Duration::ZERO;
                last = now;
            }
        }
        last
    }
}

/// What the cluster behind `client` runs now.
async fn observe(client: &kube::Client, zones: bool) -> Observation {
    let list = ListParams::default();
    let nodes = Api::<Node>::all(client.clone())
        .list(&list)
        .await
        .expect("nodes")
        .items;
    let pods = Api::<Pod>::namespaced(client.clone(), "default")
        .list(&list)
        .await
        .expect("pods")
        .items;
    let mut kinds = BTreeMap::new();
    let mut observation = Observation {
        nodes: BTreeMap::new(),
        placement: BTreeMap::new(),
        pending: BTreeMap::new(),
        in_motion: 0,
    };
    for node in &nodes {
        let labels = node.metadata.labels.clone().unwrap_or_default();
        let label = |key: &str| labels.get(key).cloned().unwrap_or_else(|| "?".into());
        let mut kind = format!(
            "{} {}",
            label("node.kubernetes.io/instance-type"),
            label("karpenter.sh/capacity-type")
        );
        if zones {
            kind = format!("{kind} {}", label("topology.kubernetes.io/zone"));
        }
        let ready = node
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
        if !ready || node.metadata.deletion_timestamp.is_some() {
            observation.in_motion += 1;
        }
        *observation.nodes.entry(kind.clone()).or_default() += 1;
        kinds.insert(node.metadata.name.clone().unwrap_or_default(), kind);
    }
    for pod in &pods {
        if pod.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let app = pod
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("app"))
            .cloned()
            .unwrap_or_default();
        let running = pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running");
        let node = pod.spec.as_ref().and_then(|s| s.node_name.as_ref());
        match node.and_then(|n| kinds.get(n)) {
            Some(_) if !running => observation.in_motion += 1,
            Some(kind) => {
                *observation
                    .placement
                    .entry(app)
                    .or_default()
                    .entry(kind.clone())
                    .or_default() += 1;
            }
            None => *observation.pending.entry(app).or_default() += 1,
        }
    }
    observation
}

/// The simulated cloud's catalog in the kwok provider's instance-type format: every type with
/// an offering per zone and capacity type at the simulator's price, and resources that leave,
/// after the kwok provider's fixed reservation, the simulator's allocatable.
pub(super) fn kwok_catalog() -> Value {
    let types = flotilla_sim::karpenter::cloud::instance_types(REGION);
    Value::Array(
        types
            .iter()
            .map(|it| {
                let allocatable = it.allocatable();
                let arch = flotilla_sim::catalog::instance_type(&it.name)
                    .expect("the scheduler's types are the catalog's")
                    .arch
                    .label();
                let offerings: Vec<Value> = it
                    .offerings
                    .iter()
                    .map(|o| {
                        json!({
                            "Price": o.price,
                            "Available": true,
                            "Requirements": [
                                {"key": "karpenter.sh/capacity-type", "operator": "In",
                                 "values": [o.capacity_type.label()]},
                                {"key": "topology.kubernetes.io/zone", "operator": "In",
                                 "values": [o.zone]},
                            ],
                        })
                    })
                    .collect();
                json!({
                    "name": it.name,
                    "architecture": arch,
                    "operatingSystems": ["linux"],
                    "resources": {
                        "cpu": format!("{}m", allocatable.cpu_millis + KWOK_RESERVED_MILLICPU),
                        "memory": (allocatable.memory_bytes + KWOK_RESERVED_MEMORY).to_string(),
                        "pods": allocatable.pods.to_string(),
                    },
                    "offerings": offerings,
                })
            })
            .collect(),
    )
}

/// The scenarios to run: those marked `ci`, every one with `FLOTILLA_KARPENTER_SCENARIOS=all`,
/// or those whose name contains its value.
fn scenarios() -> Vec<Scenario> {
    let all: Vec<Scenario> = serde_saphyr::from_str(SCENARIOS).expect("scenario file parses");
    let wanted = std::env::var("FLOTILLA_KARPENTER_SCENARIOS").unwrap_or_default();
    all.into_iter()
        .filter(|s| match wanted.as_str() {
            "" => s.ci,
            "all" => true,
            part => s.name.contains(part),
        })
        .collect()
}

/// Runs `scenario` on both sides, step by step; returns each step's pair of observations.
async fn compare(scenario: &Scenario) -> Vec<(Observation, Observation)> {
    let cluster = RealCluster::start_with(&ClusterOptions {
        nodes: 0,
        ..ClusterOptions::default()
    });
    let _karpenter = RealKarpenter::start(&cluster, &kwok_catalog());
    let real = Side::Karpenter(cluster.client().await);
    let sim = member().await;
    let flotilla = Side::Flotilla(&sim);
    for side in [&real, &flotilla] {
        side.create_pool(&scenario.pool).await;
    }
    let mut results = Vec::new();
    for step in &scenario.steps {
        for side in [&real, &flotilla] {
            side.run(step).await;
        }
        let theirs = real.settle(step.quiet, scenario.zones).await;
        let ours = flotilla.settle(step.quiet, scenario.zones).await;
        eprintln!(
            "[{}] {}\n  Karpenter: {theirs:?}\n  Flotilla:  {ours:?}",
            scenario.name, step.say
        );
        if theirs != ours && scenario.differs.is_none() {
            eprintln!("cluster and Karpenter logs:{}", cluster.logs());
        }
        results.push((theirs, ours));
    }
    results
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flotilla_provisions_and_disrupts_as_real_karpenter_does() {
    let mut failures = Vec::new();
    for scenario in scenarios() {
        let results = compare(&scenario).await;
        let same = results.iter().all(|(theirs, ours)| theirs == ours);
        match (&scenario.differs, same) {
            (None, false) => failures.push(format!("{}: the outcomes differ", scenario.name)),
            (Some(why), true) => failures.push(format!(
                "{}: documented as different ({why}) but the outcomes now match; remove `differs`",
                scenario.name
            )),
            _ => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
