//! The cost of one status write as the fleet's controllers make them, the hub's most frequent
//! request during a large placement (every member's binding gets five): a merge patch of a
//! ClusterResourceBinding's status (the five conditions a placed binding has) through the
//! in-process client, on a memory store, request and answer included. The Available
//! condition's message changes every time, so every write really changes the object.

use std::sync::Arc;

use criterion::{Criterion, black_box};
use flotilla_apiserver::{Hub, HubOptions};
use kube::api::{Patch, PatchParams, PostParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use serde_json::{Value, json};

/// The allocator of the `flotilla` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A condition of a placed binding, as the placement controllers write them.
fn condition(type_: &str, message: &str) -> Value {
    json!({"type": type_, "status": "True", "reason": type_, "message": message,
           "observedGeneration": 1, "lastTransitionTime": "2026-11-23T02:47:40Z"})
}

/// The conditions of a placed binding before its Available one, as the controllers write them.
const SETTLED: [(&str, &str); 4] = [
    (
        "RolloutStarted",
        "Detected the new changes on the resources and started the rollout",
    ),
    (
        "Overridden",
        "No override rules are configured for the selected resources",
    ),
    (
        "WorkSynchronized",
        "All of the works are synchronized to the latest",
    ),
    ("Applied", "All corresponding work objects are applied"),
];

/// A placed binding's status, with `message` on its Available condition.
fn status(message: &str) -> Value {
    let conditions: Vec<Value> = SETTLED
        .iter()
        .map(|(type_, text)| condition(type_, text))
        .chain([condition("Available", message)])
        .collect();
    json!({"conditions": conditions})
}

fn binding_status_write(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let gvk = GroupVersionKind::gvk(
        "placement.kubernetes-fleet.io",
        "v1beta1",
        "ClusterResourceBinding",
    );
    let resource = ApiResource::from_gvk_with_plural(&gvk, "clusterresourcebindings");
    let (_hub, api) = runtime.block_on(async {
        let hub = Hub::start(
            Arc::new(flotilla_store::MemoryStore::new()),
            HubOptions::default(),
        )
        .await
        .unwrap();
        let api: kube::Api<DynamicObject> = kube::Api::all_with(hub.client(), &resource);
        let binding: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourceBinding",
            "metadata": {"name": "app-member-0001-a1b2c3d4",
                         "labels": {"kubernetes-fleet.io/parent-CRP": "app"},
                         "finalizers": ["kubernetes-fleet.io/work-cleanup"]},
            "spec": {"state": "Bound", "resourceSnapshotName": "app-0-snapshot",
                     "schedulingPolicySnapshotName": "app-0", "targetCluster": "member-0001",
                     "clusterDecision": {"clusterName": "member-0001", "selected": true,
                                         "reason": "picked by scheduling policy"}}
        }))
        .unwrap();
        api.create(&PostParams::default(), &binding).await.unwrap();
        (hub, api)
    });
    let mut turn = 0u64;
    c.bench_function("status-write/binding", |b| {
        b.to_async(&runtime).iter(|| {
            turn += 1;
            let patch = json!({"status": status(&format!("write {turn}"))});
            let api = api.clone();
            async move {
                black_box(
                    api.patch_status(
                        "app-member-0001-a1b2c3d4",
                        &PatchParams::default(),
                        &Patch::Merge(patch),
                    )
                    .await
                    .unwrap(),
                );
            }
        })
    });
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    binding_status_write(&mut c);
    c.final_summary();
}
