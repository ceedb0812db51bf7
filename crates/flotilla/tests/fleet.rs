//! The simulated fleet end to end with the real kubectl: `flotilla up` brings members up and
//! they join; fleet files set members and properties; members are reachable through the hub;
//! `flotilla member` joins a "real" cluster (another Flotilla API server) over HTTPS.

mod common;

use std::process::{Command, Stdio};

use common::{HubProcess, eventually};

fn joined_count(hub: &HubProcess) -> usize {
    let out = hub.kubectl(&[
        "get",
        "memberclusters",
        "-o",
        r#"jsonpath={range .items[*]}{.status.conditions[?(@.type=="Joined")].status}{"\n"}{end}"#,
    ]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| *l == "True")
        .count()
}

fn flotilla(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run flotilla")
}

#[test]
fn default_fleet_joins_with_columns_and_members_are_reachable() {
    let hub = HubProcess::start_with(&["--readiness-delay", "4"]);
    eventually("6 members joined", 90, || {
        (joined_count(&hub) == 6).then_some(())
    });

    let table = hub.kubectl_ok(&["get", "memberclusters"]);
    let mut lines = table.lines();
    let header: Vec<_> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "NAME",
            "JOINED",
            "AGE",
            "MEMBER-AGENT-LAST-SEEN",
            "NODE-COUNT",
            "AVAILABLE-CPU",
            "AVAILABLE-MEMORY",
            "KUBERNETES-VERSION"
        ]
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), 6, "{table}");
    for row in &rows {
        assert!(row[0].starts_with("member-cluster-0"), "{table}");
        assert_eq!(row[1], "True", "{table}");
        assert!(row[4].parse::<u32>().unwrap() > 0, "{table}");
        assert!(!row[5].is_empty() && !row[6].is_empty(), "{table}");
        assert!(row[7].starts_with("1.3"), "{table}");
    }
    let wide = hub.kubectl_ok(&["get", "memberclusters", "-o", "wide"]);
    assert!(
        wide.lines().next().unwrap().contains("ALLOCATABLE-CPU"),
        "{wide}"
    );
    assert!(
        wide.lines().next().unwrap().contains("ALLOCATABLE-MEMORY"),
        "{wide}"
    );
    assert!(
        wide.lines().next().unwrap().contains("NODE-IMAGES"),
        "{wide}"
    );
    assert!(wide.contains("AKSUbuntu-2204gen2containerd-"), "{wide}");

    // Each member has its namespace and reports the reference's property names.
    hub.kubectl_ok(&["get", "namespace", "fleet-member-member-cluster-01"]);
    let props = hub.kubectl_ok(&[
        "get",
        "membercluster",
        "member-cluster-01",
        "-o",
        "jsonpath={.status.properties}",
    ]);
    for name in [
        "kubernetes-fleet.io/node-count",
        "kubernetes.azure.com/node-count",
        "resources.kubernetes-fleet.io/available-cpu",
        "resources.kubernetes-fleet.io/total-memory",
        "k8s.io/k8s-version",
        "kubernetes.azure.com/per-cpu-core-cost",
        "kubernetes.azure.com/per-gb-memory-cost",
    ] {
        assert!(props.contains(name), "{name} missing from {props}");
    }
    let labels = hub.kubectl_ok(&[
        "get",
        "membercluster",
        "member-cluster-01",
        "-o",
        "jsonpath={.metadata.labels}",
    ]);
    assert!(
        labels.contains("fleet.azure.com/location")
            && labels.contains("topology.kubernetes.io/region"),
        "{labels}"
    );

    // A member's API through the hub: kubectl with `flotilla kubeconfig <member>`.
    let out = flotilla(&[
        "kubeconfig",
        "member-cluster-01",
        "--kubeconfig",
        hub.kubeconfig().to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let member_config = hub.dir().join("member-cluster-01.kubeconfig");
    std::fs::write(&member_config, &out.stdout).unwrap();
    let member = member_config.to_str().unwrap();
    let nodes = hub.kubectl_ok(&["--kubeconfig", member, "get", "nodes", "-o", "name"]);
    assert!(
        nodes.lines().count() >= 1 && nodes.contains("node/aks-"),
        "{nodes}"
    );
    hub.kubectl_ok(&[
        "--kubeconfig",
        member,
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=2",
    ]);
    eventually("web available in the member", 60, || {
        let out = hub.kubectl(&[
            "--kubeconfig",
            member,
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.status.availableReplicas}",
        ]);
        (String::from_utf8_lossy(&out.stdout) == "2").then_some(())
    });
    let deployments = hub.kubectl_ok(&["--kubeconfig", member, "get", "deployments", "-A"]);
    assert!(deployments.contains("web"), "{deployments}");
    // The hub itself has no such deployment: the member really is another cluster.
    assert!(
        !hub.kubectl_ok(&["get", "deployments", "-A"])
            .contains("web")
    );

    let out = flotilla(&[
        "kubeconfig",
        "no-such-member",
        "--kubeconfig",
        hub.kubeconfig().to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-member"));

    // A member name that is not a DNS label is rejected with the field named.
    let out = hub.kubectl_stdin(
        &["create", "-f", "-"],
        "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata:\n  name: Bad_Member\nspec:\n  identity: {kind: ServiceAccount, name: a, namespace: fleet-system}\n",
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("metadata.name") && err.contains("Bad_Member"),
        "{err}"
    );
}

const FLEET_WITH_PROPERTIES: &str = r#"
members:
  - name: alpha
    region: eastus
    labels: {environment: staging}
    kubernetesVersion: 1.31.2
    nodePools:
      - {name: system, instanceType: Standard_D4s_v5, count: 2, nodeImageVersion: AKSUbuntu-2204gen2containerd-202510.13.0}
    properties:
      kubernetes.azure.com/node-count: "42"
      example.com/gpu-count: "8"
      kubernetes.azure.com/per-cpu-core-cost: "0.125"
  - name: beta
    region: westeurope
    kubernetesVersion: 1.30.6
    nodePools:
      - {name: system, instanceType: Standard_E8s_v5, count: 1}
"#;

#[test]
fn fleet_file_properties_come_out_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet.yaml");
    std::fs::write(&fleet, FLEET_WITH_PROPERTIES).unwrap();
    let hub = HubProcess::start_with(&["--fleet", fleet.to_str().unwrap()]);
    eventually("2 members joined", 60, || {
        (joined_count(&hub) == 2).then_some(())
    });
    let value = |member: &str, property: &str| {
        let path = format!(
            "jsonpath={{.status.properties.{}.value}}",
            property.replace('.', "\\.")
        );
        hub.kubectl_ok(&["get", "membercluster", member, "-o", &path])
    };
    assert_eq!(value("alpha", "kubernetes.azure.com/node-count"), "42");
    assert_eq!(value("alpha", "example.com/gpu-count"), "8");
    assert_eq!(
        value("alpha", "kubernetes.azure.com/per-cpu-core-cost"),
        "0.125"
    );
    // Not overridden: what the member really has.
    assert_eq!(value("alpha", "kubernetes-fleet.io/node-count"), "2");
    assert_eq!(value("alpha", "k8s.io/k8s-version"), "1.31.2");
    assert_eq!(value("beta", "kubernetes.azure.com/node-count"), "1");
    assert_eq!(value("beta", "k8s.io/k8s-version"), "1.30.6");
    assert_eq!(
        value("beta", "resources.kubernetes-fleet.io/total-cpu"),
        "8"
    );
    assert_eq!(
        value("beta", "resources.kubernetes-fleet.io/total-memory"),
        "64Gi"
    );
    assert_eq!(
        hub.kubectl_ok(&[
            "get",
            "membercluster",
            "alpha",
            "-o",
            "jsonpath={.metadata.labels.environment}"
        ]),
        "staging"
    );
    // beta's pool names no image: it starts on the newest Ubuntu 22.04 image available in
    // westeurope, which the hub's release catalog lists.
    let beta = common::member_kubeconfig(&hub, "beta");
    let image = common::on_member(
        &hub,
        &beta,
        &[
            "get",
            "nodes",
            "-o",
            r"jsonpath={.items[0].metadata.labels.kubernetes\.azure\.com/node-image-version}",
        ],
    )
    .unwrap();
    assert!(
        image.starts_with("AKSUbuntu-2204gen2containerd-2025"),
        "{image}"
    );
    let newest_available = hub.kubectl_ok(&[
        "get",
        "nodeimageversions",
        "-o",
        "jsonpath={range .items[?(@.spec.family==\"AKSUbuntu-2204gen2containerd\")]}{.spec.version}{\"\\n\"}{end}",
    ]);
    assert!(
        newest_available.lines().any(|v| image.ends_with(v)),
        "{image} is not in the catalog: {newest_available}"
    );
    assert!(
        !image.ends_with("202509.23.0"),
        "the oldest image was chosen: {image}"
    );
}

#[test]
fn an_invalid_fleet_file_names_the_member_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet.yaml");
    std::fs::write(
        &fleet,
        FLEET_WITH_PROPERTIES.replace("Standard_E8s_v5", "Standard_Z9s_v9"),
    )
    .unwrap();
    let out = flotilla(&[
        "up",
        "--fleet",
        fleet.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        dir.path().join("data").to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("beta"), "{err}");
    assert!(err.contains("nodePools[0].instanceType"), "{err}");
    assert!(err.contains("Standard_Z9s_v9"), "{err}");
}

#[test]
fn flotilla_member_joins_a_real_cluster_over_https() {
    let hub = HubProcess::start();
    // A real member cluster: kube-apiserver with two kwok nodes.
    let cluster = flotilla_testkit::RealCluster::start_with(&flotilla_testkit::ClusterOptions {
        nodes: 2,
        node_labels: vec![
            "node.kubernetes.io/instance-type=Standard_D8s_v5".into(),
            "topology.kubernetes.io/region=eastus".into(),
        ],
        ..Default::default()
    });
    hub.create(
        "apiVersion: cluster.kubernetes-fleet.io/v1\nkind: MemberCluster\nmetadata:\n  name: real-1\nspec:\n  identity: {kind: ServiceAccount, name: fleet-member-agent-real-1, namespace: fleet-system}\n  heartbeatPeriodSeconds: 5\n",
    );
    let kubeconfig = std::fs::read_to_string(hub.kubeconfig()).unwrap();
    let server = kubeconfig
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: "))
        .unwrap()
        .to_string();
    // The agent joins with its own member token: RBAC confines it to its namespace and its
    // MemberCluster, and that is all it needs.
    let issued = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["token", "issue", "real-1", "--kubeconfig"])
        .arg(hub.kubeconfig())
        .output()
        .expect("flotilla token issue");
    assert!(
        issued.status.success(),
        "{}",
        String::from_utf8_lossy(&issued.stderr)
    );
    let token = String::from_utf8(issued.stdout).unwrap();
    // The join command `token issue` prints works as printed, from any directory.
    let hint = String::from_utf8(issued.stderr).unwrap();
    let command = hint
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("flotilla member "))
        .unwrap_or_else(|| panic!("no join command in: {hint}"));
    assert!(command.contains(&format!("--hub {server} ")), "{command}");
    assert!(command.contains(token.trim()), "{command}");
    let elsewhere = tempfile::tempdir().unwrap();
    let command = command
        .replacen("flotilla", env!("CARGO_BIN_EXE_flotilla"), 1)
        .replace(
            "<member kubeconfig>",
            cluster.kubeconfig().to_str().unwrap(),
        );
    let mut agent = Command::new("bash")
        .args(["-c", &format!("exec {command}")])
        .current_dir(elsewhere.path())
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .spawn()
        .expect("flotilla member");
    eventually("real-1 joined", 60, || {
        (joined_count(&hub) == 1).then_some(())
    });
    let count = hub.kubectl_ok(&[
        "get",
        "membercluster",
        "real-1",
        "-o",
        r"jsonpath={.status.properties.kubernetes-fleet\.io/node-count.value}",
    ]);
    assert_eq!(count, "2");
    let cpu = hub.kubectl_ok(&[
        "get",
        "membercluster",
        "real-1",
        "-o",
        "jsonpath={.status.resourceUsage.allocatable.cpu}",
    ]);
    assert_eq!(cpu, "16");
    // Heartbeats keep coming every 5 s.
    let seen = |hub: &HubProcess| {
        hub.kubectl_ok(&[
            "get",
            "membercluster",
            "real-1",
            "-o",
            "jsonpath={.status.agentStatus[0].lastReceivedHeartbeat}",
        ])
    };
    let first = seen(&hub);
    eventually("a later heartbeat", 20, || {
        (seen(&hub) != first).then_some(())
    });
    let _ = agent.kill();
    let _ = agent.wait();

    // An agent for a MemberCluster that does not exist says so and exits; one member's token
    // cannot join as another member.
    let admin_token = std::fs::read_to_string(hub.dir().join("token")).unwrap();
    let join_ghost = |token: &str| {
        flotilla(&[
            "member",
            "--hub",
            &server,
            "--token",
            token.trim(),
            "--name",
            "ghost",
            "--kubeconfig",
            cluster.kubeconfig().to_str().unwrap(),
            "--hub-ca",
            hub.dir().join("ca.crt").to_str().unwrap(),
        ])
    };
    for (token, message) in [
        (admin_token.as_str(), "\"ghost\" does not exist"),
        (
            token.as_str(),
            "the hub refused this token for member \"ghost\"",
        ),
    ] {
        let out = join_ghost(token);
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(message),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
