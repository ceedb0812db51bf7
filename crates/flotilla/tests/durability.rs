//! Durability: SIGKILL the hub during 64 concurrent writers; after restart every acknowledged
//! write is present, exactly, and no object is torn.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::HubProcess;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_acknowledged_write_survives_sigkill() {
    let mut hub = HubProcess::start();
    let client = hub.client().await;
    let acked: Arc<Mutex<BTreeMap<String, String>>> = Arc::default();
    let mut writers = Vec::new();
    for w in 0..64 {
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
        let acked = acked.clone();
        writers.push(tokio::spawn(async move {
            for n in 0.. {
                let name = format!("w{w}-{n}");
                let payload = format!("{name}:{}", "x".repeat(512));
                let cm: ConfigMap = serde_json::from_value(serde_json::json!({
                    "metadata": {"name": name}, "data": {"payload": payload}
                }))
                .expect("configmap");
                match api.create(&PostParams::default(), &cm).await {
                    Ok(_) => {
                        acked.lock().unwrap().insert(name, payload);
                    }
                    Err(_) => return,
                }
            }
        }));
    }
    // Kill once enough writes are acknowledged (and writers are mid-flight).
    for _ in 0..600 {
        if acked.lock().unwrap().len() >= 1500 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    hub.kill();
    for w in writers {
        let _ = w.await;
    }
    let acked = acked.lock().unwrap().clone();
    assert!(
        acked.len() >= 200,
        "too few writes acknowledged before the kill: {}",
        acked.len()
    );

    hub.spawn();
    let client = hub.client().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let list = api
        .list(&ListParams::default())
        .await
        .expect("list after restart");
    let stored: BTreeMap<String, String> = list
        .items
        .iter()
        .map(|cm| {
            (
                cm.metadata.name.clone().unwrap(),
                cm.data
                    .as_ref()
                    .and_then(|d| d.get("payload").cloned())
                    .unwrap_or_default(),
            )
        })
        .collect();
    for (name, payload) in &acked {
        assert_eq!(
            stored.get(name),
            Some(payload),
            "acknowledged write {name} lost or torn after SIGKILL"
        );
    }
    // No torn objects: every stored object (acknowledged or not) is complete.
    for (name, payload) in &stored {
        assert!(
            payload.starts_with(&format!("{name}:")) && payload.len() == name.len() + 1 + 512,
            "torn object {name}"
        );
    }
}
