//! The maintenance window status controller end to end: an in-process hub on a manual clock
//! running the updates controllers, a member's `MaintenanceConfiguration`, and its status
//! following the clock through the window (and the printer columns showing it).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::conditions::find;
use flotilla_api::updates::MaintenanceConfiguration;
use flotilla_api::updates::maintenance::{AUTO_UPGRADE_SCHEDULE, VALID_CONDITION};
use flotilla_apiserver::{Clock, Hub, HubOptions, ManualClock};
use flotilla_store::MemoryStore;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::{Value, json};

/// The member's hub namespace.
const NAMESPACE: &str = "fleet-member-east";

/// Polls `probe` until it gives a value (10 s at most).
async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    for _ in 0..200 {
        if let Some(v) = probe().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

/// An RFC 3339 instant.
fn ts(text: &str) -> Timestamp {
    text.parse().expect("an RFC 3339 instant")
}

/// A configuration named `name` with a weekly Saturday 22:00 window of `hours` at UTC-08:00
/// (Sunday 06:00 UTC on).
fn configuration(name: &str, hours: u32) -> MaintenanceConfiguration {
    serde_json::from_value(json!({
        "apiVersion": "updates.flotilla.dev/v1beta1",
        "kind": "MaintenanceConfiguration",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"maintenanceWindow": {
            "schedule": {"weekly": {"intervalWeeks": 1, "dayOfWeek": "Saturday"}},
            "durationHours": hours, "startTime": "22:00", "utcOffset": "-08:00",
        }},
    }))
    .expect("a configuration")
}

/// The configuration's status as JSON, once it satisfies `ready`.
async fn status_when(
    api: &Api<MaintenanceConfiguration>,
    what: &str,
    ready: impl Fn(&Value) -> bool,
) -> Value {
    eventually(what, || async {
        let config = api.get(AUTO_UPGRADE_SCHEDULE).await.ok()?;
        let status = serde_json::to_value(config.status?).ok()?;
        ready(&status).then_some(status)
    })
    .await
}

/// The `kubectl get mcfg` table of the namespace: column names and the first row's cells.
async fn table(client: &kube::Client) -> (Vec<String>, Vec<Value>) {
    let request = http::Request::get(format!(
        "/apis/updates.flotilla.dev/v1beta1/namespaces/{NAMESPACE}/maintenanceconfigurations"
    ))
    .header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
    .body(Vec::new())
    .expect("a request");
    let table: Value = client.request(request).await.expect("a table");
    let columns = table["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c["name"].as_str().unwrap_or_default().to_string())
        .collect();
    let cells = table["rows"][0]["cells"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    (columns, cells)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_follows_the_clock_through_the_window() {
    // Wednesday 2026-11-25; the window next opens on Sunday 2026-11-29 at 06:00 UTC.
    let clock = ManualClock::new(ts("2026-11-25T00:00:00Z"));
    let shared: Arc<dyn Clock> = Arc::new(clock.clone());
    let hub = Hub::start(
        Arc::new(MemoryStore::new()),
        HubOptions {
            clock: shared.clone(),
            ..Default::default()
        },
    )
    .await
    .expect("hub");
    let client = hub.client();
    let _controllers = tokio::spawn(flotilla_updates::controller::run(
        client.clone(),
        shared.clone(),
    ));
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": NAMESPACE}})).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .expect("namespace");
    let api: Api<MaintenanceConfiguration> = Api::namespaced(client.clone(), NAMESPACE);
    api.create(
        &PostParams::default(),
        &configuration(AUTO_UPGRADE_SCHEDULE, 6),
    )
    .await
    .expect("configuration");

    // Closed: the next window is filled in and the window is valid.
    let status = status_when(&api, "the next window", |s| s.get("nextWindow").is_some()).await;
    assert_eq!(
        status["nextWindow"],
        json!({"start": "2026-11-29T06:00:00Z", "end": "2026-11-29T12:00:00Z"})
    );
    assert_eq!(status["open"], json!(false));
    assert_eq!(status.get("currentWindow"), None);
    assert_eq!(status["observedGeneration"], json!(1));
    assert_eq!(
        status["schedule"],
        json!("weekly on Saturday 22:00 for 6h, UTC-08:00")
    );
    let config = api.get(AUTO_UPGRADE_SCHEDULE).await.unwrap();
    let valid = find(&config.status.unwrap().conditions, VALID_CONDITION)
        .expect("Valid")
        .clone();
    assert_eq!(
        (valid.status.as_str(), valid.reason.as_str()),
        ("True", "MaintenanceWindowValid")
    );
    let (columns, cells) = table(&client).await;
    let open = columns.iter().position(|c| c == "Open").expect("Open");
    let next = columns
        .iter()
        .position(|c| c == "Next-Window")
        .expect("Next-Window");
    assert!(columns.iter().any(|c| c == "Schedule") && columns.iter().any(|c| c == "Age"));
    assert_eq!(
        (&cells[open], &cells[next]),
        (&json!(false), &json!("2026-11-29T06:00:00Z"))
    );

    // Into the window: the controller looks again when it opens.
    clock.advance(Duration::from_secs(4 * 86_400 + 6 * 3600 + 30 * 60));
    let status = status_when(&api, "the window open", |s| s["open"] == json!(true)).await;
    assert_eq!(
        status["currentWindow"],
        json!({"start": "2026-11-29T06:00:00Z", "end": "2026-11-29T12:00:00Z"})
    );
    assert_eq!(
        status["nextWindow"],
        json!({"start": "2026-12-06T06:00:00Z", "end": "2026-12-06T12:00:00Z"})
    );
    assert_eq!(
        status["conditions"][0]["lastTransitionTime"],
        json!("2026-11-25T00:00:00Z"),
        "Valid did not flip"
    );

    // Past its end: closed again.
    clock.advance(Duration::from_secs(6 * 3600));
    let status = status_when(&api, "the window closed", |s| s["open"] == json!(false)).await;
    assert_eq!(status.get("currentWindow"), None);
    assert_eq!(status["nextWindow"]["start"], json!("2026-12-06T06:00:00Z"));

    // A new spec is observed.
    let longer = json!({"spec": {"maintenanceWindow": {"durationHours": 8}}});
    api.patch(
        AUTO_UPGRADE_SCHEDULE,
        &PatchParams::default(),
        &Patch::Merge(longer),
    )
    .await
    .expect("patch");
    let status = status_when(&api, "generation 2", |s| {
        s["observedGeneration"] == json!(2)
    })
    .await;
    assert_eq!(
        status["nextWindow"],
        json!({"start": "2026-12-06T06:00:00Z", "end": "2026-12-06T14:00:00Z"})
    );
    assert_eq!(
        status["schedule"],
        json!("weekly on Saturday 22:00 for 8h, UTC-08:00")
    );

    // An invalid window never reaches the controller here: admission refuses it (Valid=False
    // is for hubs without Flotilla's admission, e.g. a Kubernetes API server serving
    // `flotilla crds`).
    let refused = api
        .create(
            &PostParams::default(),
            &configuration(
                flotilla_api::updates::maintenance::NODE_OS_UPGRADE_SCHEDULE,
                3,
            ),
        )
        .await
        .expect_err("an invalid window is refused");
    assert!(
        matches!(&refused, kube::Error::Api(s) if s.code == 422),
        "{refused:?}"
    );
}
