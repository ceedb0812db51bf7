//! Fleet gauges for Prometheus, published by the hub's controllers from what the hub holds:
//! members by `Joined`/`Healthy`, placements by condition, bindings by state, update runs and
//! member upgrades by state, gates and approvals waiting, and member upgrade durations. The
//! figures are computed by pure functions over the cached objects' JSON ([`gauges`], reading
//! the caches' own objects, never copying them) and refreshed every [`REFRESH`].

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::placement::{
    ApprovalRequest, ClusterApprovalRequest, ClusterResourceBinding, ClusterResourcePlacement,
    ClusterStagedUpdateRun, ResourceBinding, ResourcePlacement, StagedUpdateRun,
};
use flotilla_api::updates::{Gate, MemberUpgrade, UpdateRun};
use flotilla_apiserver::metrics::registry::{LONG_SECONDS, counted};
use flotilla_apiserver::metrics::{Desc, process};
use futures::StreamExt;
use jiff::Timestamp;
use kube::api::{ApiResource, DynamicObject};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource};
use serde_json::Value;

/// How often the gauges are recomputed.
pub const REFRESH: Duration = Duration::from_secs(2);

/// Member clusters by their `Joined` and `Healthy` condition status.
pub const MEMBERS: Desc = Desc::gauge(
    "flotilla_member_clusters",
    "Member clusters by the status of their Joined and Healthy conditions (True, False, Unknown).",
    &["joined", "healthy"],
);
/// Placements by kind and condition.
pub const PLACEMENTS: Desc = Desc::gauge(
    "flotilla_placements",
    "Placements by kind and by each condition's type and status (a placement counts once per condition).",
    &["kind", "condition", "status"],
);
/// Bindings by kind and state.
pub const BINDINGS: Desc = Desc::gauge(
    "flotilla_bindings",
    "Bindings by kind and state (Scheduled, Bound, Unscheduled).",
    &["kind", "state"],
);
/// Update runs by kind and state.
pub const UPDATE_RUNS: Desc = Desc::gauge(
    "flotilla_update_runs",
    "Update runs by kind and state (UpdateRun: its status.state; staged runs: from their conditions).",
    &["kind", "state"],
);
/// Member upgrades by phase.
pub const MEMBER_UPGRADES: Desc = Desc::gauge(
    "flotilla_member_upgrades",
    "Member upgrades by phase (Pending, Running, Succeeded, Failed).",
    &["phase"],
);
/// Gates and approval requests still waiting.
pub const GATES_WAITING: Desc = Desc::gauge(
    "flotilla_gates_waiting",
    "Gates still Pending and approval requests not yet approved, by kind.",
    &["kind"],
);
/// How long finished member upgrades took.
pub const UPGRADE_DURATION: Desc = Desc::histogram(
    "flotilla_member_upgrade_duration_seconds",
    "Duration of member upgrades that finished while this process ran, from start to completion, by result phase.",
    &["phase"],
    LONG_SECONDS,
);

/// The objects the gauges are computed from, by kind: the caches' own (shared, not copied).
#[derive(Debug, Default)]
pub struct Fleet {
    /// Objects by kind.
    pub objects: BTreeMap<&'static str, Vec<Arc<DynamicObject>>>,
}

impl Fleet {
    /// The JSON (everything but the metadata) of every object of `kind`.
    fn of(&self, kind: &str) -> impl Iterator<Item = &Value> {
        self.objects
            .get(kind)
            .into_iter()
            .flatten()
            .map(|o| &o.data)
    }
}

/// A gauge's samples.
pub type Samples = Vec<(Vec<String>, f64)>;

/// The status of condition `type_` of `obj` (`Unknown` when it has none).
fn condition(obj: &Value, type_: &str) -> String {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| c["type"] == type_)
        .and_then(|c| c["status"].as_str())
        .unwrap_or("Unknown")
        .to_string()
}

fn text(obj: &Value, pointer: &str, default: &str) -> String {
    obj.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or(default)
        .to_string()
}

/// A staged run's state, from its conditions as KubeFleet sets them.
fn staged_state(run: &Value) -> String {
    match (
        condition(run, "Succeeded").as_str(),
        condition(run, "Progressing").as_str(),
        condition(run, "Initialized").as_str(),
    ) {
        ("True", _, _) => "Succeeded",
        ("False", _, _) => "Failed",
        (_, "True", _) => "Progressing",
        (_, "False", _) => "Waiting",
        (_, _, "False") => "InitializationFailed",
        (_, _, "True") => "Initialized",
        _ => "NotStarted",
    }
    .to_string()
}

/// Every gauge's samples for `fleet`.
pub fn gauges(fleet: &Fleet) -> Vec<(&'static Desc, Samples)> {
    let members = counted(
        fleet
            .of("MemberCluster")
            .map(|m| vec![condition(m, "Joined"), condition(m, "Healthy")]),
    );
    let placements = counted(
        ["ClusterResourcePlacement", "ResourcePlacement"]
            .iter()
            .flat_map(|kind| {
                fleet.of(kind).flat_map(move |p| {
                    p.pointer("/status/conditions")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .map(move |c| {
                            vec![
                                kind.to_string(),
                                text(c, "/type", ""),
                                text(c, "/status", "Unknown"),
                            ]
                        })
                })
            }),
    );
    let bindings = counted(
        ["ClusterResourceBinding", "ResourceBinding"]
            .iter()
            .flat_map(|kind| {
                fleet
                    .of(kind)
                    .map(move |b| vec![kind.to_string(), text(b, "/spec/state", "Scheduled")])
            }),
    );
    let runs = counted(
        fleet
            .of("UpdateRun")
            .map(|r| {
                vec![
                    "UpdateRun".to_string(),
                    text(r, "/status/state", "NotStarted"),
                ]
            })
            .chain(
                ["ClusterStagedUpdateRun", "StagedUpdateRun"]
                    .iter()
                    .flat_map(|kind| {
                        fleet
                            .of(kind)
                            .map(move |r| vec![kind.to_string(), staged_state(r)])
                    }),
            ),
    );
    let upgrades = counted(
        fleet
            .of("MemberUpgrade")
            .map(|u| vec![text(u, "/status/phase", "Pending")]),
    );
    let gates = counted(
        fleet
            .of("Gate")
            .filter(|g| text(g, "/status/state", "Pending") == "Pending")
            .map(|_| vec!["Gate".to_string()])
            .chain(
                ["ClusterApprovalRequest", "ApprovalRequest"]
                    .iter()
                    .flat_map(|kind| {
                        fleet
                            .of(kind)
                            .filter(|a| condition(a, "Approved") != "True")
                            .map(move |_| vec![kind.to_string()])
                    }),
            ),
    );
    vec![
        (&MEMBERS, members),
        (&PLACEMENTS, placements),
        (&BINDINGS, bindings),
        (&UPDATE_RUNS, runs),
        (&MEMBER_UPGRADES, upgrades),
        (&GATES_WAITING, gates),
    ]
}

/// Member upgrades that finished at or after `since` and are not in `seen`: their uid, phase
/// and duration in seconds.
pub fn finished_upgrades(
    upgrades: &[Arc<DynamicObject>],
    since: Timestamp,
    seen: &HashSet<String>,
) -> Vec<(String, String, f64)> {
    upgrades
        .iter()
        .filter_map(|upgrade| {
            let u = &upgrade.data;
            let phase = text(u, "/status/phase", "Pending");
            if phase != "Succeeded" && phase != "Failed" {
                return None;
            }
            let uid = upgrade.metadata.uid.clone().unwrap_or_default();
            let time = |p: &str| u.pointer(p)?.as_str()?.parse::<Timestamp>().ok();
            let (start, end) = (time("/status/startTime")?, time("/status/completedTime")?);
            (end >= since && !seen.contains(&uid)).then(|| {
                let took = end.duration_since(start).as_secs_f64().max(0.0);
                (uid, phase, took)
            })
        })
        .collect()
}

/// A cached watch of every object of kind `K`, as JSON; the watch runs as a task.
fn cache<K: Resource<DynamicType = ()>>(client: &Client) -> Store<DynamicObject> {
    let resource = ApiResource::erase::<K>(&());
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let writer = reflector::store::Writer::new(resource);
    let store = writer.as_reader();
    let events = watcher(api, watcher::Config::default())
        .default_backoff()
        .reflect(writer)
        .applied_objects();
    tokio::spawn(events.for_each(|_| futures::future::ready(())));
    store
}

/// Publishes the fleet gauges into the process registry until the task is dropped.
pub async fn run(client: Client) {
    let caches: Vec<(&'static str, Store<DynamicObject>)> = vec![
        ("MemberCluster", cache::<MemberCluster>(&client)),
        (
            "ClusterResourcePlacement",
            cache::<ClusterResourcePlacement>(&client),
        ),
        ("ResourcePlacement", cache::<ResourcePlacement>(&client)),
        (
            "ClusterResourceBinding",
            cache::<ClusterResourceBinding>(&client),
        ),
        ("ResourceBinding", cache::<ResourceBinding>(&client)),
        ("UpdateRun", cache::<UpdateRun>(&client)),
        (
            "ClusterStagedUpdateRun",
            cache::<ClusterStagedUpdateRun>(&client),
        ),
        ("StagedUpdateRun", cache::<StagedUpdateRun>(&client)),
        ("MemberUpgrade", cache::<MemberUpgrade>(&client)),
        ("Gate", cache::<Gate>(&client)),
        (
            "ClusterApprovalRequest",
            cache::<ClusterApprovalRequest>(&client),
        ),
        ("ApprovalRequest", cache::<ApprovalRequest>(&client)),
    ];
    let registry = process();
    registry.describe(&UPGRADE_DURATION);
    let started = Timestamp::now();
    let mut seen = HashSet::new();
    let mut tick = tokio::time::interval(REFRESH);
    loop {
        tick.tick().await;
        let mut fleet = Fleet::default();
        for (kind, store) in &caches {
            fleet.objects.insert(kind, store.state());
        }
        for (desc, samples) in gauges(&fleet) {
            registry.replace(desc, samples);
        }
        let upgrades = fleet
            .objects
            .get("MemberUpgrade")
            .map_or(&[][..], Vec::as_slice);
        for (uid, phase, took) in finished_upgrades(upgrades, started, &seen) {
            registry.observe(&UPGRADE_DURATION, &[&phase], took);
            seen.insert(uid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An object of JSON `fields` (metadata included when given), as the caches hold it.
    fn object(fields: Value) -> Arc<DynamicObject> {
        let mut full = json!({"apiVersion": "test/v1", "kind": "Test", "metadata": {}});
        for (k, v) in fields.as_object().expect("an object") {
            full[k] = v.clone();
        }
        Arc::new(serde_json::from_value(full).expect("a DynamicObject"))
    }

    fn objects(fields: Vec<Value>) -> Vec<Arc<DynamicObject>> {
        fields.into_iter().map(object).collect()
    }

    fn with(kind: &'static str, fields: Vec<Value>) -> Fleet {
        let mut fleet = Fleet::default();
        fleet.objects.insert(kind, objects(fields));
        fleet
    }

    fn samples(fleet: &Fleet, desc: &Desc) -> Samples {
        gauges(fleet)
            .into_iter()
            .find(|(d, _)| d.name == desc.name)
            .map(|(_, s)| s)
            .unwrap_or_default()
    }

    fn conds(pairs: &[(&str, &str)]) -> Value {
        json!({"status": {"conditions": pairs.iter().map(|(t, s)| json!({"type": t, "status": s})).collect::<Vec<_>>()}})
    }

    #[test]
    fn members_count_by_joined_and_healthy() {
        let fleet = with(
            "MemberCluster",
            vec![
                conds(&[("Joined", "True"), ("Healthy", "True")]),
                conds(&[("Joined", "True"), ("Healthy", "True")]),
                conds(&[("Joined", "True"), ("Healthy", "False")]),
                json!({}),
            ],
        );
        let got = samples(&fleet, &MEMBERS);
        let key = |j: &str, h: &str| vec![j.to_string(), h.to_string()];
        assert_eq!(
            got,
            vec![
                (key("True", "False"), 1.0),
                (key("True", "True"), 2.0),
                (key("Unknown", "Unknown"), 1.0)
            ]
        );
    }

    #[test]
    fn staged_runs_and_gates_read_their_conditions() {
        let mut fleet = with(
            "ClusterStagedUpdateRun",
            vec![
                conds(&[("Initialized", "True"), ("Progressing", "True")]),
                conds(&[("Initialized", "True"), ("Succeeded", "True")]),
                conds(&[("Initialized", "True"), ("Progressing", "False")]),
                json!({}),
            ],
        );
        fleet.objects.insert(
            "ClusterApprovalRequest",
            objects(vec![conds(&[("Approved", "True")]), json!({})]),
        );
        fleet.objects.insert(
            "Gate",
            objects(vec![json!({"status": {"state": "Completed"}}), json!({})]),
        );
        let states: Vec<String> = samples(&fleet, &UPDATE_RUNS)
            .into_iter()
            .map(|(k, _)| k[1].clone())
            .collect();
        assert_eq!(
            states,
            ["NotStarted", "Progressing", "Succeeded", "Waiting"]
        );
        assert_eq!(
            samples(&fleet, &GATES_WAITING),
            vec![
                (vec!["ClusterApprovalRequest".to_string()], 1.0),
                (vec!["Gate".to_string()], 1.0)
            ]
        );
    }

    #[test]
    fn upgrade_durations_are_observed_once_and_only_for_new_completions() {
        let upgrade = |uid: &str, phase: &str, start: &str, end: &str| json!({"metadata": {"uid": uid}, "status": {"phase": phase, "startTime": start, "completedTime": end}});
        let upgrades = objects(vec![
            upgrade(
                "a",
                "Succeeded",
                "2026-01-01T00:00:00Z",
                "2026-01-01T00:10:00Z",
            ),
            upgrade(
                "b",
                "Failed",
                "2026-01-01T00:00:00Z",
                "2026-01-01T00:01:00Z",
            ),
            upgrade(
                "c",
                "Running",
                "2026-01-01T00:00:00Z",
                "2026-01-01T00:01:00Z",
            ),
            upgrade(
                "d",
                "Succeeded",
                "2025-01-01T00:00:00Z",
                "2025-01-01T00:01:00Z",
            ),
        ]);
        let since: Timestamp = "2026-01-01T00:00:30Z".parse().unwrap();
        let mut seen = HashSet::new();
        let first = finished_upgrades(&upgrades, since, &seen);
        assert_eq!(
            first,
            vec![
                ("a".to_string(), "Succeeded".to_string(), 600.0),
                ("b".to_string(), "Failed".to_string(), 60.0)
            ]
        );
        seen.extend(first.into_iter().map(|(uid, _, _)| uid));
        assert!(finished_upgrades(&upgrades, since, &seen).is_empty());
    }
}
