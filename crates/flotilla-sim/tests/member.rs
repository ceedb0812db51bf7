//! A simulated member cluster end to end, through kube-rs and a manual clock: nodes, the
//! scheduler, the kubelets, workload controllers, services, events and `/version`.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use flotilla_apiserver::ManualClock;
use flotilla_apiserver::registry::Registry;
use flotilla_sim::cluster::{SimCluster, SimOptions};
use flotilla_sim::fleet::{MemberSpec, NodePoolSpec};
use k8s_openapi::api::apps::v1::{
    DaemonSet, DaemonSetSpec, Deployment, DeploymentSpec, ReplicaSet, StatefulSet, StatefulSetSpec,
};
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Container, Event, Node, Pod, PodSpec, PodTemplateSpec, ResourceRequirements, Service,
    ServicePort, ServiceSpec,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};

const START: &str = "2026-01-01T00:00:00Z";
const IMAGE: &str = "AKSUbuntu-2204gen2containerd-202501.12.0";

fn spec() -> MemberSpec {
    MemberSpec {
        name: "member-1".into(),
        region: "eastus".into(),
        labels: BTreeMap::new(),
        kubernetes_version: "1.30.3".into(),
        node_pools: vec![NodePoolSpec {
            name: "system".into(),
            instance_type: "Standard_D4s_v5".into(),
            count: 3,
            node_image_version: IMAGE.into(),
        }],
        properties: BTreeMap::new(),
        maintenance_windows: vec![],
        stopped: false,
        upgrade: None,
    }
}

struct Member {
    sim: SimCluster,
    clock: ManualClock,
    client: kube::Client,
}

/// The member kinds, built once for every test in this binary (as `flotilla up` does).
fn kinds() -> &'static Arc<Registry> {
    static KINDS: OnceLock<Arc<Registry>> = OnceLock::new();
    KINDS.get_or_init(SimCluster::member_kinds)
}

async fn member() -> Member {
    let clock = ManualClock::new(START.parse().unwrap());
    let options = SimOptions {
        readiness_delay: Duration::from_secs(5),
        job_duration: Duration::from_secs(10),
        clock: Arc::new(clock.clone()),
        ..SimOptions::default()
    };
    // Spawned, to prove the start future can run on any worker (`flotilla up` spawns them).
    let kinds = kinds().clone();
    let sim = tokio::spawn(async move { SimCluster::start(&spec(), options, &kinds).await })
        .await
        .unwrap()
        .expect("member starts");
    let client = sim.client();
    Member { sim, clock, client }
}

/// Polls `check` (in real time) until it returns `Some`, or fails the test.
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    for _ in 0..400 {
        if let Some(v) = check().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for: {what}");
}

fn template(cpu: &str, labels: &[(&str, &str)]) -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(
                labels
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
    }
}

fn selector(app: &str) -> LabelSelector {
    LabelSelector {
        match_labels: Some([("app".to_string(), app.to_string())].into()),
        match_expressions: None,
    }
}

fn deployment(name: &str, replicas: i32, cpu: &str) -> Deployment {
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: DeploymentSpec {
            replicas: Some(replicas),
            selector: selector(name),
            template: template(cpu, &[("app", name)]),
            ..Default::default()
        },
        status: None,
    }
}

fn condition(pod: &Pod, kind: &str) -> Option<(String, Option<String>, Option<String>)> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind)
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
}

fn ready(pod: &Pod) -> bool {
    condition(pod, "Ready").is_some_and(|c| c.0 == "True")
}

fn deployment_condition(d: &Deployment, kind: &str) -> Option<(String, String, String)> {
    d.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_.as_deref() == Some(kind))
        .map(|c| {
            (
                c.status.clone().unwrap_or_default(),
                c.reason.clone().unwrap_or_default(),
                c.message.clone().unwrap_or_default(),
            )
        })
}

async fn pods_of(client: &kube::Client, app: &str) -> Vec<Pod> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    pods.list(&ListParams::default().labels(&format!("app={app}")))
        .await
        .unwrap()
        .items
}

#[tokio::test]
async fn a_deployment_is_available_once_its_pods_are_ready() {
    let m = member().await;
    let deployments: Api<Deployment> = Api::namespaced(m.client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("web", 3, "100m"))
        .await
        .unwrap();
    let pods = eventually("three pods scheduled and starting", || async {
        let pods = pods_of(&m.client, "web").await;
        let starting = pods.iter().all(|p| {
            condition(p, "PodScheduled").is_some_and(|c| c.0 == "True")
                && p.status.as_ref().and_then(|s| s.host_ip.as_ref()).is_some()
        });
        (pods.len() == 3 && starting).then_some(pods)
    })
    .await;
    let mut nodes: Vec<String> = pods
        .iter()
        .map(|p| p.spec.as_ref().unwrap().node_name.clone().unwrap())
        .collect();
    nodes.sort();
    nodes.dedup();
    assert_eq!(nodes.len(), 3, "one replica per node");
    let sets: Api<ReplicaSet> = Api::namespaced(m.client.clone(), "default");
    let rs = sets
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .remove(0);
    let rs_name = rs.metadata.name.clone().unwrap();
    let hash = rs.metadata.labels.as_ref().unwrap()["pod-template-hash"].clone();
    assert_eq!(rs_name, format!("web-{hash}"));
    for p in &pods {
        let name = p.metadata.name.as_deref().unwrap();
        let suffix = name
            .strip_prefix(&format!("{rs_name}-"))
            .unwrap_or_else(|| panic!("{name}"));
        assert_eq!(suffix.len(), 5, "<rs>-<5 chars>: {name}");
        assert_eq!(p.status.as_ref().unwrap().phase.as_deref(), Some("Pending"));
        assert!(!ready(p));
    }
    // Real time passes, the member's clock does not: nothing becomes ready.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(pods_of(&m.client, "web").await.iter().all(|p| !ready(p)));
    let d = deployments.get("web").await.unwrap();
    assert_eq!(
        deployment_condition(&d, "Available").map(|c| c.1),
        Some("MinimumReplicasUnavailable".into())
    );

    m.clock.advance(Duration::from_secs(5));
    let d = eventually("the deployment is available", || async {
        let d = deployments.get("web").await.unwrap();
        let s = d.status.clone()?;
        (s.available_replicas == Some(3) && s.observed_generation == Some(1)).then_some(d)
    })
    .await;
    let s = d.status.clone().unwrap();
    assert_eq!(
        (
            s.replicas,
            s.updated_replicas,
            s.ready_replicas,
            s.unavailable_replicas
        ),
        (Some(3), Some(3), Some(3), None)
    );
    assert_eq!(
        deployment_condition(&d, "Available"),
        Some((
            "True".into(),
            "MinimumReplicasAvailable".into(),
            "Deployment has minimum availability.".into()
        ))
    );
    let progressing = eventually("the rollout is complete", || async {
        let d = deployments.get("web").await.unwrap();
        deployment_condition(&d, "Progressing").filter(|c| c.1 == "NewReplicaSetAvailable")
    })
    .await;
    assert!(
        progressing.2.ends_with("has successfully progressed."),
        "{progressing:?}"
    );
    let annotations = d.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        annotations
            .get("deployment.kubernetes.io/revision")
            .map(String::as_str),
        Some("1")
    );
    for p in pods_of(&m.client, "web").await {
        assert!(ready(&p));
        let status = p.status.unwrap();
        assert_eq!(status.phase.as_deref(), Some("Running"));
        assert!(status.pod_ip.unwrap().starts_with("10.244."));
        assert!(status.host_ip.unwrap().starts_with("10.224."));
        let container = &status.container_statuses.unwrap()[0];
        assert!(container.ready && container.started == Some(true));
        let running = container.state.as_ref().unwrap().running.as_ref().unwrap();
        assert_eq!(
            running.started_at.as_ref().unwrap().0,
            "2026-01-01T00:00:05Z".parse().unwrap()
        );
        let owner = &p.metadata.owner_references.unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str()),
            ("ReplicaSet", rs_name.as_str())
        );
    }
    let events: Api<Event> = Api::namespaced(m.client.clone(), "default");
    let reasons: Vec<String> = events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|e| e.reason)
        .collect();
    for reason in ["ScalingReplicaSet", "SuccessfulCreate", "Scheduled"] {
        assert!(
            reasons.iter().any(|r| r == reason),
            "no {reason} event in {reasons:?}"
        );
    }
}

#[tokio::test]
async fn a_deployment_that_cannot_fit_stays_pending_and_says_why() {
    let m = member().await;
    let deployments: Api<Deployment> = Api::namespaced(m.client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("huge", 1, "1000"))
        .await
        .unwrap();
    let pod = eventually("the pod is marked unschedulable", || async {
        pods_of(&m.client, "huge")
            .await
            .into_iter()
            .find(|p| condition(p, "PodScheduled").is_some_and(|c| c.0 == "False"))
    })
    .await;
    assert_eq!(
        condition(&pod, "PodScheduled"),
        Some((
            "False".into(),
            Some("Unschedulable".into()),
            Some("0/3 nodes are available: 3 Insufficient cpu.".into())
        ))
    );
    assert_eq!(pod.spec.as_ref().unwrap().node_name, None);
    m.clock.advance(Duration::from_secs(60));
    let d = eventually("the deployment reports missing availability", || async {
        let d = deployments.get("huge").await.unwrap();
        deployment_condition(&d, "Available").map(|_| d)
    })
    .await;
    assert_eq!(
        deployment_condition(&d, "Available"),
        Some((
            "False".into(),
            "MinimumReplicasUnavailable".into(),
            "Deployment does not have minimum availability.".into()
        ))
    );
    assert_eq!(d.status.unwrap().unavailable_replicas, Some(1));
    let events: Api<Event> = Api::namespaced(m.client.clone(), "default");
    let name = pod.metadata.name.unwrap();
    let failed = eventually("a FailedScheduling event", || async {
        let list = events
            .list(&ListParams::default().fields(&format!("involvedObject.name={name}")))
            .await
            .unwrap();
        list.items
            .into_iter()
            .find(|e| e.reason.as_deref() == Some("FailedScheduling"))
    })
    .await;
    assert_eq!(failed.type_.as_deref(), Some("Warning"));
    assert_eq!(
        failed.message.as_deref(),
        Some("0/3 nodes are available: 3 Insufficient cpu.")
    );
}

#[tokio::test]
async fn scaling_down_deletes_pods_and_deleting_the_deployment_deletes_everything() {
    let m = member().await;
    let deployments: Api<Deployment> = Api::namespaced(m.client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("web", 3, "100m"))
        .await
        .unwrap();
    eventually("three pods", || async {
        (pods_of(&m.client, "web").await.len() == 3).then_some(())
    })
    .await;
    m.clock.advance(Duration::from_secs(5));
    eventually("three available", || async {
        let d = deployments.get("web").await.unwrap();
        (d.status?.available_replicas == Some(3)).then_some(())
    })
    .await;
    deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"replicas": 1}})),
        )
        .await
        .unwrap();
    eventually("one pod left", || async {
        (pods_of(&m.client, "web").await.len() == 1).then_some(())
    })
    .await;
    let d = eventually("status follows", || async {
        let d = deployments.get("web").await.unwrap();
        let s = d.status.clone()?;
        (s.replicas == Some(1) && s.observed_generation == Some(2)).then_some(d)
    })
    .await;
    assert_eq!(d.status.unwrap().available_replicas, Some(1));

    deployments
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    let sets: Api<ReplicaSet> = Api::namespaced(m.client.clone(), "default");
    eventually("replica sets and pods are collected", || async {
        let sets = sets.list(&ListParams::default()).await.unwrap().items;
        (sets.is_empty() && pods_of(&m.client, "web").await.is_empty()).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_daemon_set_runs_one_pod_on_every_node() {
    let m = member().await;
    let daemons: Api<DaemonSet> = Api::namespaced(m.client.clone(), "default");
    let ds = DaemonSet {
        metadata: ObjectMeta {
            name: Some("agent".into()),
            ..Default::default()
        },
        spec: DaemonSetSpec {
            selector: selector("agent"),
            template: template("10m", &[("app", "agent")]),
            ..Default::default()
        },
        status: None,
    };
    daemons.create(&PostParams::default(), &ds).await.unwrap();
    let pods = eventually("a daemon per node", || async {
        let pods = pods_of(&m.client, "agent").await;
        let bound = pods
            .iter()
            .all(|p| p.spec.as_ref().unwrap().node_name.is_some());
        (pods.len() == 3 && bound).then_some(pods)
    })
    .await;
    let nodes: Api<Node> = Api::all(m.client.clone());
    let mut node_names: Vec<String> = nodes
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|n| n.metadata.name.unwrap())
        .collect();
    node_names.sort();
    let mut on: Vec<String> = pods
        .iter()
        .map(|p| p.spec.as_ref().unwrap().node_name.clone().unwrap())
        .collect();
    on.sort();
    assert_eq!(on, node_names);
    m.clock.advance(Duration::from_secs(5));
    let status = eventually("every daemon available", || async {
        let s = daemons.get("agent").await.unwrap().status?;
        (s.number_available == Some(3)).then_some(s)
    })
    .await;
    assert_eq!(
        (
            status.desired_number_scheduled,
            status.current_number_scheduled,
            status.number_ready,
            status.updated_number_scheduled,
            status.number_misscheduled
        ),
        (3, 3, 3, Some(3), 0)
    );
}

#[tokio::test]
async fn stateful_set_pods_come_up_in_order() {
    let m = member().await;
    let sets: Api<StatefulSet> = Api::namespaced(m.client.clone(), "default");
    let sts = StatefulSet {
        metadata: ObjectMeta {
            name: Some("db".into()),
            ..Default::default()
        },
        spec: StatefulSetSpec {
            replicas: Some(3),
            selector: selector("db"),
            service_name: Some("db".into()),
            template: template("100m", &[("app", "db")]),
            ..Default::default()
        },
        status: None,
    };
    sets.create(&PostParams::default(), &sts).await.unwrap();
    for ordinal in 0..3 {
        let name = format!("db-{ordinal}");
        eventually(&format!("{name} starting"), || async {
            let pods = pods_of(&m.client, "db").await;
            pods.iter()
                .find(|p| p.metadata.name.as_deref() == Some(name.as_str()))
                .filter(|p| p.status.as_ref().and_then(|s| s.host_ip.as_ref()).is_some())
                .map(|_| ())
        })
        .await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        let names: Vec<String> = pods_of(&m.client, "db")
            .await
            .into_iter()
            .map(|p| p.metadata.name.unwrap())
            .collect();
        assert_eq!(
            names.len(),
            ordinal + 1,
            "the next pod waits for {name}: {names:?}"
        );
        m.clock.advance(Duration::from_secs(5));
    }
    let status = eventually("all three ready", || async {
        let s = sets.get("db").await.unwrap().status?;
        (s.ready_replicas == Some(3) && s.current_replicas == Some(3)).then_some(s)
    })
    .await;
    assert_eq!(
        (
            status.replicas,
            status.updated_replicas,
            status.available_replicas
        ),
        (3, Some(3), Some(3))
    );
    assert_eq!(status.current_revision, status.update_revision);
    let pod: Pod = Api::namespaced(m.client.clone(), "default")
        .get("db-1")
        .await
        .unwrap();
    assert_eq!(pod.spec.unwrap().hostname.as_deref(), Some("db-1"));
}

#[tokio::test]
async fn a_job_runs_to_completion() {
    let m = member().await;
    let jobs: Api<Job> = Api::namespaced(m.client.clone(), "default");
    let mut t = template("100m", &[("app", "batch")]);
    t.spec.as_mut().unwrap().restart_policy = Some("Never".into());
    let job = Job {
        metadata: ObjectMeta {
            name: Some("batch".into()),
            ..Default::default()
        },
        spec: Some(JobSpec {
            completions: Some(2),
            parallelism: Some(1),
            template: t,
            ..Default::default()
        }),
        status: None,
    };
    jobs.create(&PostParams::default(), &job).await.unwrap();
    let mut complete = None;
    for _ in 0..20 {
        let status = jobs.get("batch").await.unwrap().status.unwrap_or_default();
        if status
            .conditions
            .iter()
            .flatten()
            .any(|c| c.type_ == "Complete" && c.status == "True")
        {
            complete = Some(status);
            break;
        }
        let running = pods_of(&m.client, "batch").await;
        assert!(
            running
                .iter()
                .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) != Some("Succeeded"))
                .count()
                <= 1,
            "parallelism 1"
        );
        // Let the machinery react to the last change before time moves on.
        tokio::time::sleep(Duration::from_millis(100)).await;
        m.clock.advance(Duration::from_secs(5));
    }
    let status = complete.expect("the job completes");
    assert_eq!(status.succeeded, Some(2));
    assert_eq!(status.active, None);
    assert!(status.completion_time.is_some() && status.start_time.is_some());
    let pods = pods_of(&m.client, "batch").await;
    assert_eq!(pods.len(), 2);
    assert!(
        pods.iter()
            .all(|p| p.status.as_ref().unwrap().phase.as_deref() == Some("Succeeded"))
    );
}

#[tokio::test]
async fn services_get_cluster_ips_and_load_balancers_get_an_address() {
    let m = member().await;
    let services: Api<Service> = Api::namespaced(m.client.clone(), "default");
    let kubernetes = services.get("kubernetes").await.unwrap();
    assert_eq!(
        kubernetes.spec.unwrap().cluster_ip.as_deref(),
        Some("10.0.0.1")
    );
    let svc = |name: &str, kind: &str| Service {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: Some(ServiceSpec {
            type_: Some(kind.into()),
            selector: Some([("app".to_string(), "web".to_string())].into()),
            ports: Some(vec![ServicePort {
                port: 80,
                ..Default::default()
            }]),
            ..Default::default()
        }),
        status: None,
    };
    services
        .create(&PostParams::default(), &svc("web", "ClusterIP"))
        .await
        .unwrap();
    let ip = eventually("a cluster IP", || async {
        services.get("web").await.unwrap().spec?.cluster_ip
    })
    .await;
    assert_eq!(ip, "10.0.0.2");
    services
        .create(&PostParams::default(), &svc("public", "LoadBalancer"))
        .await
        .unwrap();
    let lb = eventually("a load balancer address", || async {
        let s = services.get("public").await.unwrap();
        s.status
            .as_ref()?
            .load_balancer
            .as_ref()?
            .ingress
            .as_ref()?;
        Some(s)
    })
    .await;
    let spec = lb.spec.unwrap();
    assert_eq!(spec.cluster_ip.as_deref(), Some("10.0.0.3"));
    assert_eq!(spec.cluster_ips, Some(vec!["10.0.0.3".to_string()]));
    let node_port = spec.ports.unwrap()[0].node_port.unwrap();
    assert!((30000..=32767).contains(&node_port));
    let ingress = &lb.status.unwrap().load_balancer.unwrap().ingress.unwrap()[0];
    assert!(ingress.ip.as_deref().unwrap().starts_with("20."));
}

#[tokio::test]
async fn nodes_look_like_aks_nodes_and_pods_select_by_node() {
    let m = member().await;
    let nodes: Api<Node> = Api::all(m.client.clone());
    let list = nodes.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(list.len(), 3);
    let mut zones = Vec::new();
    for (i, node) in list.iter().enumerate() {
        let name = node.metadata.name.clone().unwrap();
        let digits = &name["aks-system-".len().."aks-system-".len() + 8];
        assert!(digits.bytes().all(|b| b.is_ascii_digit()), "{name}");
        assert!(name.ends_with(&format!("-vmss{i:06}")), "{name}");
        let labels = node.metadata.labels.clone().unwrap();
        for (k, v) in [
            ("kubernetes.io/hostname", name.as_str()),
            ("kubernetes.io/os", "linux"),
            ("kubernetes.io/arch", "amd64"),
            ("node.kubernetes.io/instance-type", "Standard_D4s_v5"),
            ("topology.kubernetes.io/region", "eastus"),
            ("kubernetes.azure.com/agentpool", "system"),
            ("kubernetes.azure.com/node-image-version", IMAGE),
            ("karpenter.sh/capacity-type", "on-demand"),
        ] {
            assert_eq!(labels.get(k).map(String::as_str), Some(v), "{name} {k}");
        }
        zones.push(labels["topology.kubernetes.io/zone"].clone());
        assert_eq!(
            node.spec.as_ref().unwrap().provider_id.as_deref(),
            Some(format!("sim://member-1/{name}").as_str())
        );
        let status = node.status.as_ref().unwrap();
        let capacity = status.capacity.as_ref().unwrap();
        assert_eq!(
            (
                capacity["cpu"].0.as_str(),
                capacity["memory"].0.as_str(),
                capacity["pods"].0.as_str()
            ),
            ("4", "16777216Ki", "64")
        );
        assert_eq!(status.allocatable.as_ref().unwrap()["cpu"].0, "3920m");
        assert_eq!(
            status.node_info.as_ref().unwrap().kubelet_version,
            "v1.30.3"
        );
        let ready = status
            .conditions
            .as_ref()
            .unwrap()
            .iter()
            .find(|c| c.type_ == "Ready")
            .unwrap();
        assert_eq!(ready.status, "True");
    }
    assert_eq!(zones, ["eastus-1", "eastus-2", "eastus-3"]);

    let pods: Api<Pod> = Api::namespaced(m.client.clone(), "default");
    let deployments: Api<Deployment> = Api::namespaced(m.client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("web", 3, "100m"))
        .await
        .unwrap();
    let target = list[1].metadata.name.clone().unwrap();
    let on_target = eventually("a pod on the node", || async {
        let found = pods
            .list(&ListParams::default().fields(&format!("spec.nodeName={target}")))
            .await
            .unwrap()
            .items;
        (!found.is_empty()).then_some(found)
    })
    .await;
    assert_eq!(on_target.len(), 1);
    assert_eq!(
        on_target[0].spec.as_ref().unwrap().node_name.as_deref(),
        Some(target.as_str())
    );
}

#[tokio::test]
async fn version_and_node_images_follow_upgrades() {
    let m = member().await;
    assert_eq!(
        m.client.apiserver_version().await.unwrap().git_version,
        "v1.30.3"
    );
    m.sim.set_kubernetes_version("1.31.1").await;
    assert_eq!(
        m.client.apiserver_version().await.unwrap().git_version,
        "v1.31.1"
    );
    assert_eq!(m.sim.kubernetes_version(), "1.31.1");
    assert_eq!(m.sim.name(), "member-1");

    let image = "AKSUbuntu-2204gen2containerd-202502.01.0";
    m.sim.set_node_image("system", image).await.unwrap();
    assert_eq!(m.sim.spec().node_pools[0].node_image_version, image);
    let nodes: Api<Node> = Api::all(m.client.clone());
    let labelled = nodes
        .list(
            &ListParams::default()
                .labels(&format!("kubernetes.azure.com/node-image-version={image}")),
        )
        .await
        .unwrap();
    assert_eq!(labelled.items.len(), 3);
    assert!(m.sim.set_node_image("gpu", image).await.is_err());
}

#[tokio::test]
async fn dropping_the_member_stops_its_machinery() {
    let m = member().await;
    let engine = m.sim.engine().clone();
    let client = flotilla_apiserver::client::in_process(
        flotilla_apiserver::http::router(engine, flotilla_apiserver::ServerConfig::default()),
        "default",
    );
    drop(m.sim);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("web", 1, "100m"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sets: Api<ReplicaSet> = Api::namespaced(client, "default");
    assert!(
        sets.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}
