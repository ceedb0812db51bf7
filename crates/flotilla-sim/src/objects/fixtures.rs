//! Test objects, and a `World` that applies controller plans to an in-memory cluster the way
//! the API server would (optimistic concurrency, generated names, owner-based deletion), so
//! whole rollouts can be played out without I/O.

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{
    DaemonSet, DaemonSetSpec, Deployment, DeploymentSpec, ReplicaSet, ReplicaSetSpec, StatefulSet,
    StatefulSetSpec,
};
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Container, Node, NodeAddress, NodeSpec, NodeStatus, Pod, PodCondition, PodSpec, PodStatus,
    PodTemplateSpec,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::{Metadata, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::actions::{Action, EventNote, Plan};
use crate::events::{created_pod, deleted_pod};
use crate::kubelet::Timing;
use crate::objects::{controller_uid, name_of, namespace_of, time, uid_of};
use crate::pod_template::POD_TEMPLATE_HASH;
use crate::reconcile::{ClusterState, Settings, plan};

/// The status a plan writes, if it writes one.
pub fn written_status(plan: &Plan) -> Option<Value> {
    plan.actions.iter().find_map(|a| match a {
        Action::WriteStatus { status, .. } => Some(status.clone()),
        _ => None,
    })
}

/// The pods a plan creates.
pub fn created_pods(plan: &Plan) -> Vec<&Value> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::CreatePod { pod, .. } => Some(pod),
            _ => None,
        })
        .collect()
}

/// The start of every test's clock.
pub fn t0() -> Timestamp {
    "2026-01-01T00:00:00Z".parse().unwrap()
}

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: Some("default".into()),
        uid: Some(format!("uid-{name}")),
        generation: Some(1),
        creation_timestamp: Some(time(t0())),
        resource_version: Some("1".into()),
        ..Default::default()
    }
}

/// A pod template `app=web` running one `web` container requesting `cpu`.
pub fn template(cpu: &str) -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some([("app".to_string(), "web".to_string())].into()),
            ..Default::default()
        }),
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "web".into(),
                image: Some("nginx:1.27".into()),
                resources: Some(k8s_openapi::api::core::v1::ResourceRequirements {
                    requests: Some([("cpu".to_string(), Quantity(cpu.into()))].into()),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        }),
    }
}

fn selector() -> LabelSelector {
    LabelSelector {
        match_labels: Some([("app".to_string(), "web".to_string())].into()),
        match_expressions: None,
    }
}

/// A node with the given allocatable resources, address 10.224.0.4 and pod CIDR
/// 10.244.0.0/24.
pub fn node(name: &str, cpu: &str, memory: &str, pods: u32) -> Node {
    let q = |v: &str| Quantity(v.into());
    Node {
        metadata: ObjectMeta {
            name: Some(name.into()),
            uid: Some(format!("uid-{name}")),
            labels: Some([("kubernetes.io/hostname".to_string(), name.to_string())].into()),
            ..Default::default()
        },
        spec: Some(NodeSpec {
            pod_cidr: Some("10.244.0.0/24".into()),
            ..Default::default()
        }),
        status: Some(NodeStatus {
            allocatable: Some(
                [
                    ("cpu".to_string(), q(cpu)),
                    ("memory".to_string(), q(memory)),
                    ("pods".to_string(), q(&pods.to_string())),
                ]
                .into(),
            ),
            addresses: Some(vec![NodeAddress {
                type_: "InternalIP".into(),
                address: "10.224.0.4".into(),
            }]),
            ..Default::default()
        }),
    }
}

/// A pending pod `app=web` in `default` as JSON.
pub fn pod_json(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"),
                     "labels": {"app": "web"}, "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}
    })
}

/// A pod running on `node`, Ready since `ready_at`.
pub fn running_pod(name: &str, node: &str, ready_at: &str) -> Pod {
    let mut pod: Pod = serde_json::from_value(pod_json(name)).unwrap();
    pod.spec.as_mut().unwrap().node_name = Some(node.into());
    pod.status = Some(PodStatus {
        phase: Some("Running".into()),
        conditions: Some(vec![PodCondition {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: Some(time(ready_at.parse().unwrap())),
            ..Default::default()
        }]),
        ..Default::default()
    });
    pod
}

/// A ReplicaSet `name` of `replicas` pods.
pub fn replica_set(name: &str, replicas: i32, min_ready_seconds: i32) -> ReplicaSet {
    let mut t = template("100m");
    t.metadata
        .as_mut()
        .unwrap()
        .labels
        .as_mut()
        .unwrap()
        .insert(POD_TEMPLATE_HASH.into(), "abc".into());
    ReplicaSet {
        metadata: meta(name),
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            min_ready_seconds: Some(min_ready_seconds),
            selector: selector(),
            template: Some(t),
        },
        status: None,
    }
}

/// A Deployment `name` of `replicas` pods each requesting `cpu`.
pub fn deployment(name: &str, replicas: i32, cpu: &str) -> Deployment {
    Deployment {
        metadata: meta(name),
        spec: DeploymentSpec {
            replicas: Some(replicas),
            selector: selector(),
            template: template(cpu),
            ..Default::default()
        },
        status: None,
    }
}

/// A StatefulSet `name` of `replicas` pods with the given pod management policy.
pub fn stateful_set(name: &str, replicas: i32, policy: Option<&str>) -> StatefulSet {
    StatefulSet {
        metadata: meta(name),
        spec: StatefulSetSpec {
            replicas: Some(replicas),
            selector: selector(),
            service_name: Some(name.into()),
            template: template("100m"),
            pod_management_policy: policy.map(String::from),
            ..Default::default()
        },
        status: None,
    }
}

/// A DaemonSet `name` with the given `maxUnavailable`.
pub fn daemon_set(name: &str, max_unavailable: Option<i32>) -> DaemonSet {
    DaemonSet {
        metadata: meta(name),
        spec: DaemonSetSpec {
            selector: selector(),
            template: template("10m"),
            update_strategy: max_unavailable.map(|m| {
                k8s_openapi::api::apps::v1::DaemonSetUpdateStrategy {
                    type_: Some("RollingUpdate".into()),
                    rolling_update: Some(k8s_openapi::api::apps::v1::RollingUpdateDaemonSet {
                        max_unavailable: Some(
                            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(m),
                        ),
                        max_surge: None,
                    }),
                }
            }),
            ..Default::default()
        },
        status: None,
    }
}

/// A Job `name` needing `completions` successes, `parallelism` at a time.
pub fn job(name: &str, completions: Option<i32>, parallelism: Option<i32>) -> Job {
    let mut t = template("100m");
    t.spec.as_mut().unwrap().restart_policy = Some("Never".into());
    Job {
        metadata: meta(name),
        spec: Some(JobSpec {
            completions,
            parallelism,
            template: t,
            ..Default::default()
        }),
        status: None,
    }
}

/// A cluster the controllers act on through their plans, as they would through the API.
pub struct World {
    /// Everything stored.
    pub state: ClusterState,
    /// The clock.
    pub now: Timestamp,
    /// Events recorded so far.
    pub events: Vec<EventNote>,
    /// What the last pass asked for.
    pub last: Plan,
    settings: Settings,
    memory: crate::karpenter::Memory,
    counter: u64,
}

/// Calls `$body` with `$items` bound to the state's list of objects of kind `$kind`.
macro_rules! with_kind {
    ($state:expr, $kind:expr, |$items:ident| $body:expr) => {
        match $kind {
            "Pod" => {
                let $items = &mut $state.pods;
                $body
            }
            "Node" => {
                let $items = &mut $state.nodes;
                $body
            }
            "Service" => {
                let $items = &mut $state.services;
                $body
            }
            "Deployment" => {
                let $items = &mut $state.deployments;
                $body
            }
            "ReplicaSet" => {
                let $items = &mut $state.replica_sets;
                $body
            }
            "StatefulSet" => {
                let $items = &mut $state.stateful_sets;
                $body
            }
            "DaemonSet" => {
                let $items = &mut $state.daemon_sets;
                $body
            }
            "Job" => {
                let $items = &mut $state.jobs;
                $body
            }
            other => panic!("unexpected kind {other}"),
        }
    };
}

fn spec_part(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
        m.remove("status");
    }
    v
}

impl World {
    /// A world of these nodes at [`t0`], with a 5 s readiness delay and 10 s jobs.
    pub fn new(nodes: Vec<Node>) -> World {
        World {
            state: ClusterState {
                nodes,
                ..Default::default()
            },
            now: t0(),
            events: Vec::new(),
            last: Plan::default(),
            memory: Default::default(),
            settings: Settings {
                member: "m1".into(),
                region: "eastus".into(),
                kubernetes_version: "1.30.3".into(),
                timing: Timing {
                    readiness_delay: jiff::SignedDuration::from_secs(5),
                    job_duration: jiff::SignedDuration::from_secs(10),
                },
                consolidation: Default::default(),
            },
            counter: 0,
        }
    }

    /// The member settings the controllers run with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    fn stamp_meta(&mut self, meta: &mut ObjectMeta) {
        self.counter += 1;
        if meta.name.is_none() {
            let prefix = meta.generate_name.clone().unwrap_or_default();
            meta.name = Some(format!("{prefix}{:05}", self.counter));
        }
        meta.uid = Some(format!(
            "uid-{}-{}",
            meta.name.as_deref().unwrap_or_default(),
            self.counter
        ));
        meta.creation_timestamp = Some(time(self.now));
        meta.generation = Some(1);
        meta.resource_version = Some(self.counter.to_string());
    }

    fn create<T>(&mut self, items_kind: &str, value: &Value) -> Option<String>
    where
        T: Serialize + DeserializeOwned + Metadata<Ty = ObjectMeta>,
    {
        let mut obj: T = serde_json::from_value(value.clone()).unwrap();
        let mut meta = obj.metadata().clone();
        self.stamp_meta(&mut meta);
        *obj.metadata_mut() = meta;
        let name = name_of(&obj).to_string();
        let ns = namespace_of(&obj).to_string();
        let as_value = serde_json::to_value(&obj).unwrap();
        let state = &mut self.state;
        with_kind!(state, items_kind, |items| {
            if items
                .iter()
                .any(|o| name_of(o) == name && namespace_of(o) == ns)
            {
                return None;
            }
            items.push(serde_json::from_value(as_value).unwrap());
        });
        Some(name)
    }

    /// Adds an object as a user would create it.
    pub fn add<T: Serialize + Resource>(&mut self, obj: &T) {
        let v = serde_json::to_value(obj).unwrap();
        let kind = T::KIND;
        match kind {
            "Deployment" => self.create::<Deployment>(kind, &v),
            "StatefulSet" => self.create::<StatefulSet>(kind, &v),
            "DaemonSet" => self.create::<DaemonSet>(kind, &v),
            "Job" => self.create::<Job>(kind, &v),
            "Pod" => self.create::<Pod>(kind, &v),
            _ => panic!("add {kind}"),
        };
    }

    /// Applies a user's change to the spec of an object.
    pub fn edit<T, F>(&mut self, items: fn(&mut ClusterState) -> &mut Vec<T>, name: &str, f: F)
    where
        T: Serialize + DeserializeOwned + Metadata<Ty = ObjectMeta>,
        F: FnOnce(&mut T),
    {
        self.counter += 1;
        let rv = self.counter.to_string();
        let obj = items(&mut self.state)
            .iter_mut()
            .find(|o| name_of(*o) == name)
            .unwrap();
        f(obj);
        let meta = obj.metadata_mut();
        meta.generation = Some(meta.generation.unwrap_or(1) + 1);
        meta.resource_version = Some(rv);
    }

    fn apply(&mut self, action: &Action) {
        self.counter += 1;
        let rv = self.counter.to_string();
        let state = &mut self.state;
        match action {
            Action::Create(v) => {
                let kind = v["kind"].as_str().unwrap().to_string();
                match kind.as_str() {
                    "ReplicaSet" => self.create::<ReplicaSet>(&kind, v),
                    other => panic!("create {other}"),
                };
            }
            Action::CreatePod { pod, owner } => {
                if let Some(name) = self.create::<Pod>("Pod", pod) {
                    self.events.push(created_pod(owner, &name));
                }
            }
            Action::Update(v) => {
                let kind = v["kind"].as_str().unwrap();
                let (ns, name) = (
                    v["metadata"]["namespace"].clone(),
                    v["metadata"]["name"].clone(),
                );
                with_kind!(state, kind, |items| {
                    let Some(i) = items.iter().position(|o| {
                        let o = serde_json::to_value(o).unwrap();
                        o["metadata"]["namespace"] == ns && o["metadata"]["name"] == name
                    }) else {
                        return;
                    };
                    let old = serde_json::to_value(&items[i]).unwrap();
                    if old["metadata"]["resourceVersion"] != v["metadata"]["resourceVersion"] {
                        return;
                    }
                    let mut new = v.clone();
                    new["status"] = old["status"].clone();
                    let mut generation = old["metadata"]["generation"].as_i64().unwrap_or(1);
                    if spec_part(&old) != spec_part(&new) {
                        generation += 1;
                    }
                    new["metadata"]["generation"] = json!(generation);
                    new["metadata"]["resourceVersion"] = json!(rv);
                    items[i] = serde_json::from_value(new).unwrap();
                });
            }
            Action::WriteStatus { target, status } => {
                with_kind!(state, target.kind.as_str(), |items| {
                    if let Some(o) = items.iter_mut().find(|o| uid_of(*o) == target.uid) {
                        let mut v = serde_json::to_value(&*o).unwrap();
                        v["status"] = status.clone();
                        v["metadata"]["resourceVersion"] = json!(rv);
                        *o = serde_json::from_value(v).unwrap();
                    }
                });
            }
            Action::Delete(target) => {
                with_kind!(state, target.kind.as_str(), |items| items
                    .retain(|o| uid_of(o) != target.uid));
                self.collect_garbage();
            }
            Action::DeletePod { pod, owner } => {
                let before = state.pods.len();
                state.pods.retain(|p| uid_of(p) != pod.uid);
                if state.pods.len() < before {
                    self.events.push(deleted_pod(owner, &pod.name));
                }
            }
            Action::Record(note) => self.events.push(note.clone()),
        }
    }

    /// Deletes a Deployment as a user would (background propagation).
    pub fn delete_deployment(&mut self, name: &str) {
        self.state.deployments.retain(|d| name_of(d) != name);
        self.collect_garbage();
    }

    /// Deletes whatever lost its controller (the engine's garbage collector).
    fn collect_garbage(&mut self) {
        loop {
            let s = &self.state;
            let uids: std::collections::HashSet<String> = s
                .deployments
                .iter()
                .map(|o| uid_of(o).to_string())
                .chain(s.replica_sets.iter().map(|o| uid_of(o).to_string()))
                .chain(s.stateful_sets.iter().map(|o| uid_of(o).to_string()))
                .chain(s.daemon_sets.iter().map(|o| uid_of(o).to_string()))
                .chain(s.jobs.iter().map(|o| uid_of(o).to_string()))
                .collect();
            let orphan = |m: &ObjectMeta| controller_uid(m).is_some_and(|u| !uids.contains(u));
            let before = s.pods.len() + s.replica_sets.len();
            self.state.pods.retain(|p| !orphan(&p.metadata));
            self.state.replica_sets.retain(|r| !orphan(&r.metadata));
            if self.state.pods.len() + self.state.replica_sets.len() == before {
                return;
            }
        }
    }

    /// One pass of every controller, its plan applied; returns how many writes it asked for.
    pub fn step(&mut self) -> usize {
        let plan = plan(&self.state, &self.settings, &mut self.memory, self.now);
        for action in &plan.actions {
            self.apply(action);
        }
        let n = plan.actions.len();
        self.last = plan;
        n
    }

    /// Passes until one asks for nothing (at most 100), checking `invariant` after each.
    pub fn settle_checking(&mut self, invariant: &mut dyn FnMut(&World)) {
        for _ in 0..100 {
            let n = self.step();
            invariant(self);
            if n == 0 {
                return;
            }
        }
        panic!("controllers did not settle: {:?}", self.last.actions);
    }

    /// Passes until one asks for nothing.
    pub fn settle(&mut self) {
        self.settle_checking(&mut |_| {});
    }

    /// Settles, then moves the clock to each wake-up the controllers asked for, until none is
    /// left (at most 100 times), checking `invariant` after every pass.
    pub fn run_checking(&mut self, invariant: &mut dyn FnMut(&World)) {
        self.settle_checking(invariant);
        for _ in 0..100 {
            let Some(at) = self.last.wake_at.filter(|at| *at > self.now) else {
                return;
            };
            self.now = at;
            self.settle_checking(invariant);
        }
        panic!("controllers kept asking to wake up");
    }

    /// Runs until nothing is left to do or wait for.
    pub fn run(&mut self) {
        self.run_checking(&mut |_| {});
    }
}
