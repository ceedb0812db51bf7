//! The Work applier end to end: an in-process hub holding Works, a simulated member cluster
//! (real Deployment → ReplicaSet → Pod readiness), and the applier between them, all on a
//! manual clock. Every assertion is on the state the hub and the member really hold.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::placement::status::PatchDetail;
use flotilla_api::placement::work::ManifestCondition;
use flotilla_api::placement::{AppliedWork, Work};
use flotilla_apiserver::registry::Registry;
use flotilla_apiserver::{Clock, Hub, HubOptions, ManualClock};
use flotilla_member::applier::{self, Applier};
use flotilla_member::work::hold;
use flotilla_member::{Agent, PriceSource, membership};
use flotilla_sim::cluster::{SimCluster, SimOptions};
use flotilla_sim::fleet::{MemberSpec, NodePoolSpec};
use flotilla_store::MemoryStore;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use kube::{Api, Client};
use serde_json::{Value, json};

const MEMBER: &str = "m1";
const HUB_NAMESPACE: &str = "fleet-member-m1";
const STEADY: Duration = Duration::from_secs(60);

/// The member kinds, built once for every test in this binary.
fn kinds() -> &'static Arc<Registry> {
    static KINDS: OnceLock<Arc<Registry>> = OnceLock::new();
    KINDS.get_or_init(SimCluster::member_kinds)
}

fn member_spec() -> MemberSpec {
    MemberSpec {
        name: MEMBER.into(),
        region: "eastus".into(),
        labels: BTreeMap::new(),
        kubernetes_version: "1.30.3".into(),
        node_pools: vec![NodePoolSpec {
            name: "system".into(),
            instance_type: "Standard_D4s_v5".into(),
            count: 2,
            node_image_version: "AKSUbuntu-2204gen2containerd-202501.12.0".into(),
        }],
        properties: BTreeMap::new(),
        maintenance_windows: vec![],
        stopped: false,
        upgrade: None,
    }
}

/// A hub, a simulated member and their shared manual clock.
struct Fleet {
    clock: ManualClock,
    _hub: Hub,
    _member: SimCluster,
    hub: Client,
    member: Client,
}

/// How long the member's pods take to become ready, on its clock: longer than the applier
/// holds a first "applied, awaiting workloads" status ([`hold::SETTLE`]), so that status is
/// written before the pods are ready.
const READINESS: Duration = Duration::from_secs(20);

impl Fleet {
    async fn start() -> Fleet {
        Fleet::start_with(READINESS).await
    }

    /// The fleet with a member whose pods become ready `readiness` after they start.
    async fn start_with(readiness: Duration) -> Fleet {
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
            readiness_delay: readiness,
            job_duration: Duration::from_secs(10),
            clock: shared,
            ..SimOptions::default()
        };
        let member = SimCluster::start(&member_spec(), options, kinds())
            .await
            .unwrap();
        let (hub_client, member_client) = (hub.client(), member.client());
        Fleet {
            clock,
            _hub: hub,
            _member: member,
            hub: hub_client,
            member: member_client,
        }
    }

    /// The fleet with the member's namespace on the hub and the applier running.
    async fn with_applier() -> (Fleet, applier::Running) {
        Fleet::with_applier_and_readiness(READINESS).await
    }

    /// [`Fleet::with_applier`], the member's pods becoming ready `readiness` after they start.
    async fn with_applier_and_readiness(readiness: Duration) -> (Fleet, applier::Running) {
        let fleet = Fleet::start_with(readiness).await;
        let namespaces: Api<Namespace> = Api::all(fleet.hub.clone());
        create(&namespaces, json!({"metadata": {"name": HUB_NAMESPACE}})).await;
        let running = Applier {
            member_name: MEMBER.into(),
            hub: fleet.hub.clone(),
            member: fleet.member.clone(),
            clock: Arc::new(fleet.clock.clone()),
        }
        .spawn();
        (fleet, running)
    }

    fn works(&self) -> Api<Work> {
        Api::namespaced(self.hub.clone(), HUB_NAMESPACE)
    }

    fn config_maps(&self, namespace: &str) -> Api<ConfigMap> {
        Api::namespaced(self.member.clone(), namespace)
    }

    fn applied_works(&self) -> Api<AppliedWork> {
        Api::all(self.member.clone())
    }

    /// Creates Work `name` with `manifests` and `strategy` (JSON `applyStrategy`, or null).
    async fn create_work(&self, name: &str, manifests: Vec<Value>, strategy: Value) -> Work {
        create(
            &self.works(),
            json!({
                "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
                "kind": "Work",
                "metadata": {"name": name, "namespace": HUB_NAMESPACE},
                "spec": {"workload": {"manifests": manifests}, "applyStrategy": strategy},
            }),
        )
        .await
    }

    /// Merges `spec` into Work `name`'s spec.
    async fn update_work(&self, name: &str, spec: Value) {
        self.works()
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": spec})),
            )
            .await
            .unwrap();
    }

    /// Waits, the clock standing still, until Work `name` satisfies `check`.
    async fn work_until(&self, name: &str, what: &str, check: impl Fn(&Work) -> bool) -> Work {
        let (works, check) = (self.works(), &check);
        eventually(what, || async {
            let work = works.get_opt(name).await.unwrap()?;
            check(&work).then_some(work)
        })
        .await
    }

    /// Waits until Work `name` satisfies `check`, moving the clock a second at a time (the
    /// member's pods become ready, the applier's quick checks come due).
    async fn work_until_advancing(
        &self,
        name: &str,
        what: &str,
        check: impl Fn(&Work) -> bool,
    ) -> Work {
        let works = self.works();
        for _ in 0..120 {
            for _ in 0..8 {
                let work = works.get_opt(name).await.unwrap();
                if let Some(work) = work.filter(|w| check(w)) {
                    return work;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            self.clock.advance(Duration::from_secs(1));
        }
        panic!("timed out waiting for {what}");
    }
}

/// Every version of the member's Works the hub reports from its start on, collected in the
/// background, so a test can assert on states that did not last.
struct History {
    seen: Arc<Mutex<Vec<Work>>>,
    task: tokio::task::JoinHandle<()>,
}

impl History {
    /// Starts collecting; returns once the watch is established.
    async fn start(works: Api<Work>) -> History {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (ready, established) = tokio::sync::oneshot::channel();
        let collected = seen.clone();
        let task = tokio::spawn(async move {
            let mut events = Box::pin(watcher(works, watcher::Config::default()));
            let mut ready = Some(ready);
            while let Some(event) = events.next().await {
                match event {
                    Ok(watcher::Event::InitDone) => {
                        if let Some(ready) = ready.take() {
                            let _ = ready.send(());
                        }
                    }
                    Ok(watcher::Event::Apply(work) | watcher::Event::InitApply(work)) => {
                        collected.lock().unwrap().push(work);
                    }
                    _ => {}
                }
            }
        });
        established.await.unwrap();
        History { seen, task }
    }

    /// Whether any version seen satisfies `check`.
    fn any(&self, check: impl Fn(&Work) -> bool) -> bool {
        self.seen.lock().unwrap().iter().any(check)
    }
}

impl Drop for History {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn create<K>(api: &Api<K>, value: Value) -> K
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    api.create(
        &PostParams::default(),
        &serde_json::from_value(value).unwrap(),
    )
    .await
    .unwrap()
}

/// Polls `probe` in real time until it returns `Some`, or fails the test.
async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    for _ in 0..400 {
        if let Some(v) = probe().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

/// (status, reason) of condition `type_`, if set.
fn state(conditions: &[Condition], type_: &str) -> Option<(String, String)> {
    conditions
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| (c.status.clone(), c.reason.clone()))
}

fn is(status: &str, reason: &str) -> Option<(String, String)> {
    Some((status.to_owned(), reason.to_owned()))
}

fn conditions(work: &Work) -> &[Condition] {
    work.status
        .as_ref()
        .map_or(&[], |s| s.conditions.as_slice())
}

/// Whether the Work's condition `type_` has `status`.
fn has(work: &Work, type_: &str, status: &str) -> bool {
    state(conditions(work), type_).is_some_and(|(s, _)| s == status)
}

/// The status entry of the manifest named `name`.
fn entry<'a>(work: &'a Work, name: &str) -> &'a ManifestCondition {
    work.status
        .as_ref()
        .and_then(|s| {
            s.manifest_conditions
                .iter()
                .find(|m| m.identifier.name == name)
        })
        .unwrap_or_else(|| panic!("no status for manifest {name}: {:?}", work.status))
}

fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}

fn config_map(namespace: &str, name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": namespace}, "data": data})
}

fn deployment(namespace: &str, env: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "web", "namespace": namespace},
           "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{
                                     "name": "web", "image": "nginx:1.27", "env": env,
                                     "resources": {"requests": {"cpu": "100m"}}}]}}}})
}

/// The owner UIDs of a member object.
fn owner_uids(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Vec<String> {
    meta.owner_references
        .iter()
        .flatten()
        .map(|r| r.uid.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_work_is_applied_in_waves_and_becomes_available_once_its_pods_are_ready() {
    let (fleet, _applier) = Fleet::with_applier().await;
    let deployments: Api<Deployment> = Api::namespaced(fleet.member.clone(), "shop");
    let history = History::start(fleet.works()).await;
    // Listed backwards: the namespace must still be created before the objects in it.
    fleet
        .create_work(
            "shop",
            vec![
                deployment("shop", json!([{"name": "MODE", "value": "a"}])),
                config_map("shop", "cfg", json!({"mode": "a"})),
                namespace("shop"),
            ],
            Value::Null,
        )
        .await;

    // Everything is applied, but with only the Deployment's pods to wait for, the status
    // says so only when the hold ends (unless they are ready first: see
    // `workloads_ready_within_the_hold_are_reported_in_one_status_write`).
    eventually("everything recorded", || async {
        let recorded = fleet.applied_works().get_opt("shop").await.unwrap()?;
        (recorded.status?.applied_resources.len() == 3).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!history.any(|w| w.status.as_ref().is_some_and(|s| !s.conditions.is_empty())));
    fleet.clock.advance(hold::SETTLE.unsigned_abs());

    // Applied without ever failing (a ConfigMap or Deployment created before its namespace
    // would have): the waves put the namespace first.
    let work = fleet
        .work_until("shop", "applied", |w| has(w, "Applied", "True"))
        .await;
    assert!(!history.any(|w| has(w, "Applied", "False")));
    assert_eq!(
        state(conditions(&work), "Applied"),
        is("True", "AllManifestsApplied")
    );
    assert_eq!(
        state(conditions(&work), "Available"),
        is("False", "SomeManifestsAreNotAvailable")
    );
    assert_eq!(
        state(&entry(&work, "web").conditions, "Available"),
        is("False", "ManifestNotAvailableYet")
    );
    assert_eq!(
        state(&entry(&work, "cfg").conditions, "Available"),
        is("True", "Available")
    );
    assert!(
        work.metadata
            .finalizers
            .unwrap_or_default()
            .contains(&applier::FINALIZER.to_owned())
    );

    // Everything is on the member, owned by the Work's AppliedWork, which records it.
    let recorded = fleet.applied_works().get("shop").await.unwrap();
    assert_eq!(
        (
            recorded.spec.work_name.as_str(),
            recorded.spec.work_namespace.as_str()
        ),
        ("shop", HUB_NAMESPACE)
    );
    let owner = recorded.metadata.uid.clone().unwrap();
    let ns = Api::<Namespace>::all(fleet.member.clone())
        .get("shop")
        .await
        .unwrap();
    let cfg = fleet.config_maps("shop").get("cfg").await.unwrap();
    let web = deployments.get("web").await.unwrap();
    for meta in [&ns.metadata, &cfg.metadata, &web.metadata] {
        assert_eq!(owner_uids(meta), vec![owner.clone()], "{:?}", meta.name);
    }
    assert_eq!(cfg.data.unwrap()["mode"], "a");
    let resources: Vec<(String, String)> = recorded
        .status
        .unwrap()
        .applied_resources
        .iter()
        .map(|r| (r.identifier.kind.clone(), r.uid.clone()))
        .collect();
    let uid = |meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
        meta.uid.clone().unwrap()
    };
    assert_eq!(
        resources,
        vec![
            ("Deployment".into(), uid(&web.metadata)),
            ("ConfigMap".into(), uid(&cfg.metadata)),
            ("Namespace".into(), uid(&ns.metadata)),
        ]
    );

    // The member's pods become ready on its clock; the applier's quick checks see it.
    let work = fleet
        .work_until_advancing("shop", "available", |w| has(w, "Available", "True"))
        .await;
    assert_eq!(
        state(conditions(&work), "Available"),
        is("True", "AllManifestsAvailable")
    );
    assert_eq!(
        state(&entry(&work, "web").conditions, "Available"),
        is("True", "Available")
    );
    let web = deployments.get("web").await.unwrap();
    assert_eq!(web.status.unwrap().available_replicas, Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workloads_ready_within_the_hold_are_reported_in_one_status_write() {
    let (fleet, _applier) = Fleet::with_applier_and_readiness(Duration::from_secs(2)).await;
    let history = History::start(fleet.works()).await;
    fleet
        .create_work(
            "shop",
            vec![namespace("shop"), deployment("shop", json!([]))],
            Value::Null,
        )
        .await;
    let work = fleet
        .work_until_advancing("shop", "available", |w| has(w, "Available", "True"))
        .await;
    assert_eq!(
        state(conditions(&work), "Applied"),
        is("True", "AllManifestsApplied")
    );
    // The pods were ready before the hold ended: "applied, not yet available" was never
    // written, only the status reporting both.
    assert!(!history.any(|w| has(w, "Applied", "True") && !has(w, "Available", "True")));
    assert!(history.any(|w| has(w, "Available", "True")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fields_dropped_from_the_manifest_go_and_fields_set_by_others_stay() {
    let (fleet, _applier) = Fleet::with_applier().await;
    let cms = fleet.config_maps("default");
    let deployments: Api<Deployment> = Api::namespaced(fleet.member.clone(), "default");
    let labelled = |labels: Value, data: Value| {
        let mut cm = config_map("default", "cfg", data);
        cm["metadata"]["labels"] = labels;
        cm
    };
    fleet
        .create_work(
            "shop",
            vec![
                labelled(
                    json!({"team": "shop", "tier": "web"}),
                    json!({"a": "1", "b": "2"}),
                ),
                deployment(
                    "default",
                    json!([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]),
                ),
            ],
            Value::Null,
        )
        .await;
    fleet
        .work_until_advancing("shop", "applied", |w| has(w, "Applied", "True"))
        .await;

    // Someone else adds to both objects on the member.
    let theirs = PatchParams {
        field_manager: Some("someone-else".into()),
        ..PatchParams::default()
    };
    cms.patch(
        "cfg",
        &theirs,
        &Patch::Merge(json!({"metadata": {"labels": {"owner": "ops"}}, "data": {"c": "3"}})),
    )
    .await
    .unwrap();
    deployments
        .patch(
            "web",
            &theirs,
            &Patch::Merge(json!({"metadata": {"annotations": {"note": "theirs"}}})),
        )
        .await
        .unwrap();

    // The hub drops a data key, a label and an environment variable.
    fleet
        .update_work(
            "shop",
            json!({"workload": {"manifests": [
                labelled(json!({"team": "shop"}), json!({"a": "1"})),
                deployment("default", json!([{"name": "A", "value": "1"}])),
            ]}}),
        )
        .await;
    let cfg = eventually("b removed from the ConfigMap", || async {
        let cfg = cms.get("cfg").await.unwrap();
        (!cfg.data.as_ref()?.contains_key("b")).then_some(cfg)
    })
    .await;
    let strings = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    };
    assert_eq!(cfg.data.unwrap(), strings(&[("a", "1"), ("c", "3")]));
    assert_eq!(
        cfg.metadata.labels.unwrap(),
        strings(&[("owner", "ops"), ("team", "shop")])
    );
    let web = eventually("B removed from the Deployment", || async {
        let web = deployments.get("web").await.unwrap();
        let env = web.spec.template.spec.as_ref()?.containers[0].env.clone()?;
        (env.len() == 1).then_some(web)
    })
    .await;
    let env = web.spec.template.spec.unwrap().containers[0]
        .env
        .clone()
        .unwrap();
    assert_eq!(
        (env[0].name.as_str(), env[0].value.as_deref()),
        ("A", Some("1"))
    );
    assert_eq!(
        web.metadata
            .annotations
            .unwrap()
            .get("note")
            .map(String::as_str),
        Some("theirs")
    );
    let work = fleet
        .work_until_advancing("shop", "the new generation applied", |w| {
            conditions(w)
                .iter()
                .any(|c| c.type_ == "Applied" && c.observed_generation == Some(2))
        })
        .await;
    assert_eq!(
        state(conditions(&work), "Applied"),
        is("True", "AllManifestsApplied")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_side_apply_writes_as_the_work_api_agent() {
    let (fleet, _applier) = Fleet::with_applier().await;
    let cms = fleet.config_maps("default");
    let strategy = json!({"type": "ServerSideApply"});
    fleet
        .create_work(
            "shop",
            vec![config_map("default", "cfg", json!({"mode": "a"}))],
            strategy.clone(),
        )
        .await;
    fleet
        .work_until("shop", "applied", |w| has(w, "Applied", "True"))
        .await;
    cms.patch(
        "cfg",
        &PatchParams {
            field_manager: Some("someone-else".into()),
            ..PatchParams::default()
        },
        &Patch::Merge(json!({"data": {"theirs": "1"}})),
    )
    .await
    .unwrap();

    fleet
        .update_work(
            "shop",
            json!({"workload": {"manifests": [config_map("default", "cfg", json!({"mode": "b"}))]}}),
        )
        .await;
    let cfg = eventually("mode b applied", || async {
        let cfg = cms.get("cfg").await.unwrap();
        (cfg.data.as_ref()?["mode"] == "b").then_some(cfg)
    })
    .await;
    assert_eq!(cfg.data.unwrap()["theirs"], "1");
    let appliers: Vec<(String, String)> = cfg
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .map(|m| {
            (
                m.manager.unwrap_or_default(),
                m.operation.unwrap_or_default(),
            )
        })
        .collect();
    assert!(
        appliers.contains(&("work-api-agent".into(), "Apply".into())),
        "{appliers:?}"
    );
    fleet
        .work_until("shop", "applied at generation 2", |w| {
            conditions(w).iter().any(|c| {
                c.type_ == "Applied" && c.status == "True" && c.observed_generation == Some(2)
            })
        })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drift_is_reported_under_if_not_drifted_and_corrected_under_always() {
    let (fleet, _applier) = Fleet::with_applier().await;
    let cms = fleet.config_maps("default");
    fleet
        .create_work(
            "shop",
            vec![config_map("default", "cfg", json!({"mode": "a"}))],
            json!({"whenToApply": "IfNotDrifted"}),
        )
        .await;
    fleet
        .work_until("shop", "applied", |w| has(w, "Applied", "True"))
        .await;

    // A member-side edit is noticed within the steady period, reported, and left alone.
    cms.patch(
        "cfg",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"mode": "x"}})),
    )
    .await
    .unwrap();
    fleet.clock.advance(STEADY);
    let work = fleet
        .work_until("shop", "drift reported", |w| has(w, "Applied", "False"))
        .await;
    let cfg = entry(&work, "cfg");
    assert_eq!(
        state(&cfg.conditions, "Applied"),
        is("False", "FoundDrifts")
    );
    let drift = cfg.drift_details.clone().unwrap();
    assert_eq!(
        drift.observed_drifts,
        vec![PatchDetail {
            path: "/data/mode".into(),
            value_in_member: Some("x".into()),
            value_in_hub: Some("a".into()),
        }]
    );
    // A later check observes the drift again, still without overwriting it.
    fleet.clock.advance(STEADY);
    let later = fleet
        .work_until("shop", "drift observed again", |w| {
            entry(w, "cfg")
                .drift_details
                .as_ref()
                .and_then(|d| d.observation_time.as_ref())
                > drift.observation_time.as_ref()
        })
        .await;
    let again = entry(&later, "cfg").drift_details.clone().unwrap();
    assert_eq!(
        again.first_drifted_observed_time,
        drift.first_drifted_observed_time
    );
    assert_eq!(cms.get("cfg").await.unwrap().data.unwrap()["mode"], "x");

    // Under Always the applier corrects it.
    fleet
        .update_work("shop", json!({"applyStrategy": {"whenToApply": "Always"}}))
        .await;
    eventually("the edit corrected", || async {
        let cfg = cms.get("cfg").await.unwrap();
        (cfg.data?["mode"] == "a").then_some(())
    })
    .await;
    let work = fleet
        .work_until("shop", "applied again", |w| has(w, "Applied", "True"))
        .await;
    assert!(entry(&work, "cfg").drift_details.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_diff_reports_differences_and_writes_nothing() {
    let (fleet, _applier) = Fleet::with_applier().await;
    let cms = fleet.config_maps("default");
    let existing = create(
        &cms,
        json!({"metadata": {"name": "cfg"}, "data": {"mode": "theirs"}}),
    )
    .await;
    fleet
        .create_work(
            "shop",
            vec![
                config_map("default", "cfg", json!({"mode": "ours"})),
                config_map("default", "absent", json!({"k": "v"})),
            ],
            json!({"type": "ReportDiff", "whenToTakeOver": "Never"}),
        )
        .await;
    let work = fleet
        .work_until("shop", "differences reported", |w| {
            has(w, "DiffReported", "True")
        })
        .await;
    assert_eq!(
        state(conditions(&work), "DiffReported"),
        is("True", "AllManifestsDiffReported")
    );
    assert_eq!(state(conditions(&work), "Applied"), None);
    let cfg = entry(&work, "cfg");
    assert_eq!(
        state(&cfg.conditions, "DiffReported"),
        is("True", "FoundDiff")
    );
    assert_eq!(
        cfg.diff_details.clone().unwrap().observed_diffs,
        vec![PatchDetail {
            path: "/data/mode".into(),
            value_in_member: Some("theirs".into()),
            value_in_hub: Some("ours".into()),
        }]
    );
    let absent = entry(&work, "absent").diff_details.clone().unwrap();
    assert_eq!(absent.observed_diffs[0].path, "/");
    assert_eq!(absent.observed_diffs[0].value_in_member, None);

    // Nothing was written to the member.
    let after = cms.get("cfg").await.unwrap();
    assert_eq!(
        after.metadata.resource_version,
        existing.metadata.resource_version
    );
    assert!(cms.get_opt("absent").await.unwrap().is_none());
    let recorded = fleet.applied_works().get("shop").await.unwrap();
    assert!(
        recorded
            .status
            .unwrap_or_default()
            .applied_resources
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_manifests_leave_the_member_and_deleting_the_work_removes_everything() {
    let (fleet, _applier) = Fleet::with_applier().await;
    let cms = fleet.config_maps("shop");
    let manifests = |names: &[&str]| {
        let mut manifests = vec![namespace("shop")];
        manifests.extend(
            names
                .iter()
                .map(|name| config_map("shop", name, json!({"k": name}))),
        );
        manifests
    };
    fleet
        .create_work(
            "shop",
            manifests(&["kept", "dropped", "shared"]),
            Value::Null,
        )
        .await;
    fleet
        .work_until("shop", "applied", |w| has(w, "Applied", "True"))
        .await;
    // Something of someone else's co-owns "shared" (an existing object, so the member's
    // garbage collector keeps "shared" for it).
    let anchor = create(&cms, json!({"metadata": {"name": "anchor"}})).await;
    let anchor_uid = anchor.metadata.uid.unwrap();
    cms.patch(
        "shared",
        &PatchParams::default(),
        &Patch::Strategic(json!({"metadata": {"ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "anchor", "uid": anchor_uid}
        ]}})),
    )
    .await
    .unwrap();

    // Dropped from the Work: deleted, or, when shared, only disowned.
    fleet
        .update_work(
            "shop",
            json!({"workload": {"manifests": manifests(&["kept"])}}),
        )
        .await;
    eventually("dropped deleted", || async {
        cms.get_opt("dropped")
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;
    let shared = eventually("shared disowned", || async {
        let shared = cms.get("shared").await.unwrap();
        (owner_uids(&shared.metadata) == vec![anchor_uid.clone()]).then_some(shared)
    })
    .await;
    assert_eq!(shared.data.unwrap()["k"], "shared");
    assert!(cms.get_opt("kept").await.unwrap().is_some());
    let recorded = eventually("the AppliedWork updated", || async {
        let recorded = fleet.applied_works().get("shop").await.unwrap();
        let names: Vec<String> = recorded
            .status?
            .applied_resources
            .iter()
            .map(|r| r.identifier.name.clone())
            .collect();
        (names.len() == 2).then_some(names)
    })
    .await;
    assert_eq!(recorded, vec!["shop", "kept"]);

    // Deleting the Work removes what it placed (the namespace and all in it), then the Work.
    // A finalizer of someone else's holds "kept" back a while: the Work waits for it.
    let hold = |finalizers: Value| Patch::Merge(json!({"metadata": {"finalizers": finalizers}}));
    cms.patch(
        "kept",
        &PatchParams::default(),
        &hold(json!(["example.com/hold"])),
    )
    .await
    .unwrap();
    let works = fleet.works();
    works
        .delete("shop", &DeleteParams::default())
        .await
        .unwrap();
    eventually("kept being deleted", || async {
        let kept = cms.get("kept").await.unwrap();
        kept.metadata.deletion_timestamp.map(drop)
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let held = works.get("shop").await.unwrap();
    assert!(
        held.metadata
            .finalizers
            .unwrap_or_default()
            .contains(&applier::FINALIZER.to_owned())
    );
    assert!(
        fleet
            .applied_works()
            .get_opt("shop")
            .await
            .unwrap()
            .is_some()
    );
    cms.patch("kept", &PatchParams::default(), &hold(json!(null)))
        .await
        .unwrap();
    eventually("the Work gone", || async {
        works.get_opt("shop").await.unwrap().is_none().then_some(())
    })
    .await;
    assert!(
        fleet
            .applied_works()
            .get_opt("shop")
            .await
            .unwrap()
            .is_none()
    );
    let namespaces: Api<Namespace> = Api::all(fleet.member.clone());
    assert!(namespaces.get_opt("shop").await.unwrap().is_none());
    assert!(cms.get_opt("kept").await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_that_cannot_be_applied_fails_alone_with_a_clear_message() {
    let (fleet, _applier) = Fleet::with_applier().await;
    fleet
        .create_work(
            "shop",
            vec![
                config_map("default", "cfg", json!({"k": "v"})),
                json!({"apiVersion": "example.com/v1", "kind": "Widget",
                       "metadata": {"name": "gadget", "namespace": "default"},
                       "spec": {"size": 3}}),
            ],
            Value::Null,
        )
        .await;
    let work = fleet
        .work_until("shop", "a verdict", |w| has(w, "Applied", "False"))
        .await;
    assert_eq!(
        state(conditions(&work), "Applied"),
        is("False", "SomeManifestsAreNotApplied")
    );
    assert_eq!(state(conditions(&work), "Available"), None);
    let gadget = entry(&work, "gadget");
    let applied = gadget
        .conditions
        .iter()
        .find(|c| c.type_ == "Applied")
        .unwrap();
    assert_eq!(
        (applied.status.as_str(), applied.reason.as_str()),
        ("False", "ManifestApplyFailed")
    );
    assert_eq!(
        applied.message,
        "Failed to apply the manifest (error: creating example.com/v1 Widget default/gadget on \
         the member cluster failed: the server could not find the requested resource (404 \
         NotFound))"
    );
    assert_eq!(
        state(&entry(&work, "cfg").conditions, "Applied"),
        is("True", "Applied")
    );
    assert!(
        fleet
            .config_maps("default")
            .get_opt("cfg")
            .await
            .unwrap()
            .is_some()
    );
}

struct NoPrices;

impl PriceSource for NoPrices {
    fn hourly_price(&self, _: &str, _: &str, _: &str) -> Option<f64> {
        None
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_applies_works_while_joined_and_cleans_up_when_leaving() {
    let fleet = Fleet::start().await;
    let clock: Arc<dyn Clock> = Arc::new(fleet.clock.clone());
    let controller = tokio::spawn(membership::run(fleet.hub.clone(), clock.clone()));
    let members: Api<MemberCluster> = Api::all(fleet.hub.clone());
    create(
        &members,
        json!({
            "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
            "kind": "MemberCluster",
            "metadata": {"name": MEMBER},
            "spec": {"identity": {"kind": "ServiceAccount", "name": "agent",
                                  "namespace": "fleet-system"}}
        }),
    )
    .await;
    let agent = Agent {
        name: MEMBER.into(),
        hub: fleet.hub.clone(),
        member: fleet.member.clone(),
        clock,
        prices: Arc::new(NoPrices),
        overrides: BTreeMap::new(),
        provider: None,
    };
    let running = tokio::spawn(agent.run());
    let namespaces: Api<Namespace> = Api::all(fleet.hub.clone());
    eventually("the member's hub namespace", || async {
        namespaces.get_opt(HUB_NAMESPACE).await.unwrap().map(drop)
    })
    .await;

    // Joined: the agent's applier applies the member's Works.
    fleet
        .create_work(
            "shop",
            vec![config_map("default", "placed", json!({"k": "v"}))],
            Value::Null,
        )
        .await;
    fleet
        .work_until("shop", "applied", |w| has(w, "Applied", "True"))
        .await;
    let cms = fleet.config_maps("default");
    assert!(cms.get_opt("placed").await.unwrap().is_some());

    // Leaving: the agent removes what was placed, and the hub releases the Work from the
    // applier's finalizer, so the member's namespace and the MemberCluster go.
    members
        .delete(MEMBER, &DeleteParams::default())
        .await
        .unwrap();
    eventually("the member gone", || async {
        members
            .get_opt(MEMBER)
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;
    assert!(cms.get_opt("placed").await.unwrap().is_none());
    assert!(
        fleet
            .applied_works()
            .get_opt("shop")
            .await
            .unwrap()
            .is_none()
    );
    assert!(namespaces.get_opt(HUB_NAMESPACE).await.unwrap().is_none());
    running.abort();
    controller.abort();
}
