//! Membership end to end: an in-process hub running the membership controller, a member
//! cluster served by another in-process engine, and the member agent between them, all on a
//! manual clock.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::eligibility::{self, EligibilityWindows, Ineligible};
use flotilla_api::conditions::find;
use flotilla_apiserver::registry::Registry;
use flotilla_apiserver::{Clock, Hub, HubOptions, ManualClock};
use flotilla_member::{Agent, PriceSource, membership};
use flotilla_store::MemoryStore;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Node};
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use serde_json::json;

struct Prices;
impl PriceSource for Prices {
    fn hourly_price(&self, instance_type: &str, _: &str, _: &str) -> Option<f64> {
        (instance_type == "Standard_D4s_v5").then_some(0.2)
    }
}

fn member_kinds() -> Arc<Registry> {
    let defs = flotilla_api::member_crds()
        .into_iter()
        .map(|c| serde_json::to_value(c).unwrap())
        .collect();
    Arc::new(Registry::new(defs))
}

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

fn condition(mc: &MemberCluster, type_: &str) -> Option<String> {
    find(&mc.status.as_ref()?.conditions, type_).map(|c| c.status.clone())
}

async fn create<K>(api: &Api<K>, value: serde_json::Value) -> K
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_join_report_go_stale_recover_and_leave_cleanly() {
    let clock = ManualClock::new("2026-11-21T10:00:00Z".parse().unwrap());
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
    let member = Hub::start(
        Arc::new(MemoryStore::new()),
        HubOptions {
            clock: shared.clone(),
            kinds: Some(member_kinds()),
            system_namespaces: &["default", "kube-system"],
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let hub_client = hub.client();
    let member_client = member.client();
    let _controller = tokio::spawn(membership::run(hub_client.clone(), shared.clone()));

    let nodes: Api<Node> = Api::all(member_client.clone());
    for i in 0..2 {
        let name = format!("node-{i}");
        create(
            &nodes,
            json!({
                "metadata": {"name": name, "labels": {
                    "node.kubernetes.io/instance-type": "Standard_D4s_v5",
                    "topology.kubernetes.io/region": "eastus"
                }}
            }),
        )
        .await;
        // Status is a subresource: written as a kubelet would, after the node exists.
        let status = json!({"status": {"capacity": {"cpu": "4", "memory": "16Gi"}, "allocatable": {"cpu": "3920m", "memory": "14Gi"}}});
        nodes
            .patch_status(&name, &Default::default(), &kube::api::Patch::Merge(status))
            .await
            .unwrap();
    }
    let members: Api<MemberCluster> = Api::all(hub_client.clone());
    create(&members, json!({
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": "m1"},
        "spec": {"identity": {"kind": "ServiceAccount", "name": "agent", "namespace": "fleet-system"}, "heartbeatPeriodSeconds": 30}
    }))
    .await;

    let agent = Agent {
        name: "m1".into(),
        hub: hub_client.clone(),
        member: member_client.clone(),
        clock: shared.clone(),
        prices: Arc::new(Prices),
        overrides: BTreeMap::from([("example.com/gpus".to_string(), "8".to_string())]),
        provider: None,
    };
    let running = tokio::spawn(agent.clone().run());

    // Joined, with the member's properties and usage.
    let mc = eventually("m1 joined", || async {
        let mc = members.get("m1").await.ok()?;
        (condition(&mc, "Joined").as_deref() == Some("True")).then_some(mc)
    })
    .await;
    assert!(
        mc.metadata
            .finalizers
            .clone()
            .unwrap()
            .contains(&membership::FINALIZER.to_string())
    );
    let status = mc.status.clone().unwrap();
    let props = status.properties.clone().unwrap();
    assert_eq!(props["kubernetes-fleet.io/node-count"].value, "2");
    assert_eq!(props["kubernetes.azure.com/node-count"].value, "2");
    assert_eq!(props["resources.kubernetes-fleet.io/total-cpu"].value, "8");
    assert_eq!(
        props["kubernetes.azure.com/per-cpu-core-cost"].value,
        "0.050"
    );
    assert_eq!(props["example.com/gpus"].value, "8");
    assert!(props["k8s.io/k8s-version"].value.starts_with("1."));
    assert_eq!(
        status.resource_usage.unwrap().allocatable.unwrap()["memory"].0,
        "28Gi"
    );
    assert_eq!(condition(&mc, "ReadyToJoin").as_deref(), Some("True"));
    assert_eq!(condition(&mc, "Healthy").as_deref(), Some("True"));
    let windows = EligibilityWindows::default();
    assert_eq!(eligibility::check(&mc, clock.now(), &windows), Ok(()));
    let namespaces: Api<Namespace> = Api::all(hub_client.clone());
    assert!(
        namespaces
            .get_opt("fleet-member-m1")
            .await
            .unwrap()
            .is_some()
    );

    // Heartbeats follow the clock: 30 s later there is a newer one.
    let first = status.agent_status.unwrap()[0]
        .last_received_heartbeat
        .clone()
        .unwrap()
        .0;
    clock.advance(Duration::from_secs(30));
    eventually("second heartbeat", || async {
        let mc = members.get("m1").await.ok()?;
        let hb = mc.status?.agent_status?[0]
            .last_received_heartbeat
            .clone()?
            .0;
        (hb > first).then_some(())
    })
    .await;

    // The agent stops: after the window the member is ineligible and says why.
    running.abort();
    clock.advance(Duration::from_secs(5 * 60 + 5));
    let stale = eventually("m1 stale", || async {
        let mc = members.get("m1").await.ok()?;
        (condition(&mc, "Healthy").as_deref() == Some("Unknown")).then_some(mc)
    })
    .await;
    assert!(matches!(
        eligibility::check(&stale, clock.now(), &windows),
        Err(Ineligible::HeartbeatStale { .. })
    ));
    let healthy = find(&stale.status.as_ref().unwrap().conditions, "Healthy").unwrap();
    assert_eq!(healthy.reason, "MemberAgentHeartbeatStale");
    assert!(
        healthy.message.contains("more than 5m ago"),
        "{}",
        healthy.message
    );

    // It resumes and the member is eligible again.
    let running = tokio::spawn(agent.clone().run());
    let recovered = eventually("m1 recovered", || async {
        let mc = members.get("m1").await.ok()?;
        (condition(&mc, "Healthy").as_deref() == Some("True")).then_some(mc)
    })
    .await;
    assert_eq!(
        eligibility::check(&recovered, clock.now(), &windows),
        Ok(())
    );

    // Something the fleet placed: an AppliedWork owning a ConfigMap in the member, and a
    // ConfigMap in the member's hub namespace.
    let applied: Api<flotilla_api::placement::AppliedWork> = Api::all(member_client.clone());
    let work = create(
        &applied,
        json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "AppliedWork",
            "metadata": {"name": "crp-work"},
            "spec": {"workName": "crp-work", "workNamespace": "fleet-member-m1"}
        }),
    )
    .await;
    let member_cms: Api<ConfigMap> = Api::namespaced(member_client.clone(), "default");
    create(
        &member_cms,
        json!({
            "metadata": {"name": "placed", "ownerReferences": [{
                "apiVersion": "placement.kubernetes-fleet.io/v1beta1", "kind": "AppliedWork",
                "name": "crp-work", "uid": work.metadata.uid.unwrap(), "blockOwnerDeletion": true
            }]},
            "data": {"k": "v"}
        }),
    )
    .await;
    create(&member_cms, json!({"metadata": {"name": "not-placed"}})).await;
    let hub_cms: Api<ConfigMap> = Api::namespaced(hub_client.clone(), "fleet-member-m1");
    create(&hub_cms, json!({"metadata": {"name": "work-like"}})).await;

    // Leaving removes the namespace and everything placed, and nothing else.
    members
        .delete("m1", &DeleteParams::default())
        .await
        .unwrap();
    eventually("m1 gone", || async {
        members.get_opt("m1").await.unwrap().is_none().then_some(())
    })
    .await;
    assert!(
        namespaces
            .get_opt("fleet-member-m1")
            .await
            .unwrap()
            .is_none()
    );
    assert!(applied.get_opt("crp-work").await.unwrap().is_none());
    assert!(member_cms.get_opt("placed").await.unwrap().is_none());
    assert!(member_cms.get_opt("not-placed").await.unwrap().is_some());
    running.abort();
}
