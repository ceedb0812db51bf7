//! `tools/kube/cluster` gives a real cluster: nodes Ready with the labels and capacity asked
//! for, pods that run, and nothing left running once it is down.

use flotilla_testkit::{ClusterOptions, RealCluster, eventually};

#[test]
fn a_real_cluster_runs_pods_on_its_kwok_nodes_and_stops_cleanly() {
    let cluster = RealCluster::start_with(&ClusterOptions {
        nodes: 2,
        node_labels: vec!["topology.kubernetes.io/zone=z1".into()],
        node_capacity: "cpu=4,memory=16Gi,pods=20".into(),
    });
    let version = cluster.kubectl_ok(&["get", "--raw", "/version"]);
    assert!(version.contains("\"gitVersion\": \"v1.37."), "{version}");
    let nodes = cluster.kubectl_ok(&[
        "get",
        "nodes",
        "-o",
        r#"jsonpath={range .items[*]}{.metadata.labels.topology\.kubernetes\.io/zone} {.status.allocatable.cpu} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}"#,
    ]);
    assert_eq!(
        nodes.lines().collect::<Vec<_>>(),
        ["z1 4 True", "z1 4 True"],
        "{nodes}"
    );

    cluster.kubectl_ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=3",
    ]);
    eventually("3 web pods Running and Ready", 60, || {
        let pods = cluster.kubectl_ok(&[
            "get",
            "pods",
            "-l",
            "app=web",
            "-o",
            r#"jsonpath={range .items[*]}{.status.phase}/{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}"#,
        ]);
        (pods.lines().filter(|l| *l == "Running/True").count() == 3).then_some(())
    });
    cluster.kubectl_ok(&["scale", "deployment", "web", "--replicas=1"]);
    eventually("web scaled in to one pod", 60, || {
        let pods = cluster.kubectl_ok(&["get", "pods", "-l", "app=web", "-o", "name"]);
        (pods.lines().count() == 1).then_some(())
    });

    let pids: Vec<u32> = std::fs::read_dir(cluster.dir().join("pids"))
        .unwrap()
        .map(|e| {
            std::fs::read_to_string(e.unwrap().path())
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(
        pids.len(),
        5,
        "etcd, apiserver, controller-manager, scheduler, kwok"
    );
    drop(cluster);
    for pid in pids {
        // Gone, or a zombie its reaper has not collected yet: either way not running.
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let running = state
            .rsplit(") ")
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|s| s != "Z" && s != "X");
        assert!(!running, "process {pid} still running after down: {state}");
    }
}
