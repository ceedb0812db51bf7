//! Bring your own hub: Flotilla's controllers against a real kube-apiserver that serves only
//! the Kubernetes kinds until `flotilla crds | kubectl apply -f -` installs Flotilla's, with
//! real processes and the real kubectl.
//!
//! The hub is a real cluster from `tools/kube/cluster` (kube-apiserver, controller-manager,
//! scheduler, one kwok node): Flotilla's kinds reach it as CRDs, and `flotilla controllers
//! --kubeconfig` drives them over HTTPS; a real member cluster joins it through `flotilla
//! member` and receives what is placed. Several `flotilla controllers` elect one leader through
//! the Lease `fleet-system/flotilla-controllers`; `flotilla hub` does the same with its own.

mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::eventually;
use common::logged::LoggedChild;
use flotilla_testkit::RealCluster;
use serde_json::Value;

/// The hub's API server.
enum Server {
    /// A real kube-apiserver.
    Real(RealCluster),
    /// A `flotilla hub` process and its data directory.
    Flotilla {
        child: Child,
        dir: tempfile::TempDir,
    },
}

/// A hub API server and a kubectl discovery cache for it.
struct CoreHub {
    server: Server,
    kubeconfig: PathBuf,
    cache: tempfile::TempDir,
}

impl CoreHub {
    /// A real kube-apiserver: the Kubernetes kinds only, no fleet controllers.
    fn start() -> Self {
        let cluster = RealCluster::start();
        Self {
            kubeconfig: cluster.kubeconfig(),
            server: Server::Real(cluster),
            cache: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// `flotilla hub ARGS` with `dir` as its data directory.
    fn start_in(dir: tempfile::TempDir, args: &[&str]) -> Self {
        let cache = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        let _ = std::fs::remove_file(&kubeconfig);
        let child = Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .arg("hub")
            .args(args)
            .args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path())
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn flotilla hub");
        let mut hub = Self {
            server: Server::Flotilla { child, dir },
            kubeconfig,
            cache,
        };
        eventually("the hub's kubeconfig", 60, || {
            if let Ok(Some(status)) = hub.child().try_wait() {
                panic!("flotilla hub exited early: {status}");
            }
            hub.kubeconfig().exists().then_some(())
        });
        eventually("the hub ready", 30, || {
            hub.kubectl(&["get", "--raw", "/readyz"])
                .status
                .success()
                .then_some(())
        });
        hub
    }

    /// The real kube-apiserver hub.
    fn real(&self) -> &RealCluster {
        match &self.server {
            Server::Real(cluster) => cluster,
            Server::Flotilla { .. } => panic!("a flotilla hub, not a real kube-apiserver"),
        }
    }

    /// The `flotilla hub` process.
    fn child(&mut self) -> &mut Child {
        match &mut self.server {
            Server::Flotilla { child, .. } => child,
            Server::Real(_) => panic!("a real kube-apiserver hub has no flotilla process"),
        }
    }

    /// The `flotilla hub` process's data directory, taken (a fresh one left in its place).
    fn take_dir(&mut self) -> tempfile::TempDir {
        match &mut self.server {
            Server::Flotilla { dir, .. } => {
                std::mem::replace(dir, tempfile::tempdir().expect("tempdir"))
            }
            Server::Real(_) => panic!("a real kube-apiserver hub has no data directory"),
        }
    }

    fn kubeconfig(&self) -> PathBuf {
        self.kubeconfig.clone()
    }

    fn kubectl_with(&self, args: &[&str], stdin: &str) -> Output {
        common::run_with_stdin(
            common::kubectl_command(&self.kubeconfig(), self.cache.path(), args),
            stdin,
        )
    }

    fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_with(args, "")
    }

    fn kubectl_ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn apply(&self, yaml: &str) {
        let out = self.kubectl_with(&["apply", "-f", "-"], yaml);
        assert!(
            out.status.success(),
            "kubectl apply failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `kubectl get ARGS -o json`, or `None` when it fails.
    fn get(&self, args: &[&str]) -> Option<Value> {
        let mut all = vec!["get"];
        all.extend_from_slice(args);
        all.extend(["-o", "json"]);
        let out = self.kubectl(&all);
        out.status
            .success()
            .then(|| serde_json::from_slice(&out.stdout).expect("kubectl prints JSON"))
    }

    /// `flotilla crds | kubectl apply -f -`, then waits until the kinds are served.
    fn install_crds(&self) {
        let crds = Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .arg("crds")
            .output()
            .expect("flotilla crds");
        assert!(crds.status.success(), "flotilla crds failed");
        let out = self.kubectl_with(
            &["apply", "-f", "-"],
            std::str::from_utf8(&crds.stdout).expect("YAML"),
        );
        assert!(
            out.status.success(),
            "applying `flotilla crds` failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let applied = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            applied.matches(" created").count(),
            crds.stdout
                .split(|b| *b == b'\n')
                .filter(|l| l.starts_with(b"kind: CustomResourceDefinition"))
                .count(),
            "every CRD created:\n{applied}"
        );
        eventually("the fleet kinds served", 30, || {
            self.kubectl(&["get", "memberclusters"])
                .status
                .success()
                .then_some(())
        });
    }

    /// The holder of the controllers' lease and its transitions.
    fn lease(&self) -> Option<(String, i64)> {
        let lease = self.get(&["lease", "-n", "fleet-system", "flotilla-controllers"])?;
        let holder = lease["spec"]["holderIdentity"].as_str().unwrap_or_default();
        let transitions = lease["spec"]["leaseTransitions"].as_i64().unwrap_or(0);
        Some((holder.to_string(), transitions))
    }
}

/// SIGTERMs `child` and returns its exit status.
fn terminate(child: &mut Child) -> std::process::ExitStatus {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill -TERM");
    assert!(status.success());
    child.wait().expect("wait")
}

impl Drop for CoreHub {
    fn drop(&mut self) {
        if let Server::Flotilla { child, .. } = &mut self.server {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A `flotilla controllers --log-json` process and the log lines it has written.
struct Controllers;

impl Controllers {
    /// Starts `flotilla controllers --kubeconfig` against `hub` with leader election flags.
    fn start(hub: &CoreHub, lease: &str, renew: &str, retry: &str) -> LoggedChild {
        let mut command = Command::new(env!("CARGO_BIN_EXE_flotilla"));
        command
            .args(["controllers", "--log-json", "--kubeconfig"])
            .arg(hub.kubeconfig())
            .args(["--lease-duration", lease, "--renew-deadline", renew])
            .args(["--retry-period", retry])
            .args(["--metrics-bind-address", "127.0.0.1:0"])
            .env("RUST_LOG", "info")
            .env_remove("KUBECONFIG");
        LoggedChild::spawn(command)
    }
}

const MEMBER: &str = r#"
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata:
  name: alpha
  labels: {environment: staging}
spec:
  identity: {kind: ServiceAccount, name: fleet-member-agent-alpha, namespace: fleet-system}
"#;

const PLACEMENT: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: app}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: app
spec:
  resourceSelectors:
    - {group: "", kind: Namespace, version: v1, name: app}
  policy:
    placementType: PickAll
"#;

/// The status of condition `type_` of `kubectl get TARGET`, once observed for the object's
/// current generation.
fn condition(hub: &CoreHub, target: &[&str], type_: &str) -> Option<String> {
    let object = hub.get(target)?;
    let generation = object["metadata"]["generation"].as_i64();
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_ && c["observedGeneration"].as_i64() == generation)
        .and_then(|c| c["status"].as_str().map(str::to_string))
}

/// Waits until member `name` is ReadyToJoin with its namespace and InternalMemberCluster.
fn wait_member_ready(hub: &CoreHub, name: &str) {
    eventually(&format!("{name} ReadyToJoin"), 60, || {
        (condition(hub, &["membercluster", name], "ReadyToJoin").as_deref() == Some("True"))
            .then_some(())
    });
    let namespace = format!("fleet-member-{name}");
    assert!(
        hub.get(&["namespace", &namespace]).is_some(),
        "{namespace} created"
    );
    assert!(
        hub.get(&["internalmembercluster", name, "-n", &namespace])
            .is_some(),
        "InternalMemberCluster {namespace}/{name} created"
    );
}

#[test]
fn controllers_work_through_crds_on_a_plain_api_server() {
    let hub = CoreHub::start();
    // Before: a plain API server that knows nothing of the fleet.
    let resources = hub.kubectl_ok(&["api-resources"]);
    assert!(resources.contains("leases"), "{resources}");
    assert!(!resources.contains("memberclusters"), "{resources}");
    assert!(!hub.kubectl(&["get", "memberclusters"]).status.success());

    hub.install_crds();
    let resources = hub.kubectl_ok(&["api-resources", "--api-group=placement.kubernetes-fleet.io"]);
    for plural in [
        "clusterresourceplacements",
        "clusterschedulingpolicysnapshots",
        "clusterresourcebindings",
        "works",
    ] {
        assert!(resources.contains(plural), "{plural} served:\n{resources}");
    }
    let resources = hub.kubectl_ok(&["api-resources", "--api-group=cluster.kubernetes-fleet.io"]);
    assert!(resources.contains("memberclusters"), "{resources}");
    assert!(
        hub.kubectl_ok(&["get", "memberclusters"]).is_empty(),
        "no members yet"
    );

    let controllers = Controllers::start(&hub, "15s", "10s", "2s");
    let me = controllers.identity();
    eventually("the controllers leading", 30, || {
        (hub.lease()?.0 == me).then_some(())
    });

    // Membership: the member's namespace, InternalMemberCluster and conditions.
    hub.apply(MEMBER);
    wait_member_ready(&hub, "alpha");
    assert_eq!(
        condition(&hub, &["membercluster", "alpha"], "Joined").as_deref(),
        Some("Unknown"),
        "no agent has reported"
    );

    // Placement: the policy snapshot and the placement's conditions.
    hub.apply(PLACEMENT);
    eventually("the CRP scheduled", 60, || {
        (condition(&hub, &["crp", "app"], "ClusterResourcePlacementScheduled").as_deref()
            == Some("True"))
        .then_some(())
    });
    let snapshot = hub
        .get(&["clusterschedulingpolicysnapshot", "app-0"])
        .expect("policy snapshot app-0");
    assert_eq!(
        snapshot["metadata"]["labels"]["kubernetes-fleet.io/is-latest-snapshot"],
        "true"
    );
    let crp = hub.get(&["crp", "app"]).expect("crp");
    assert_eq!(
        crp["status"]["selectedResources"][0]["name"], "app",
        "{crp}"
    );

    // A real member cluster joins this hub through `flotilla member` with the token `flotilla
    // token issue` gives it: on a plain Kubernetes hub, a ServiceAccount token confined to
    // the member's namespace and MemberCluster.
    let token = common::issue_token(&hub.kubeconfig(), "alpha");
    let as_agent = |args: &[&str]| {
        let mut all = vec!["--token", &token];
        all.extend_from_slice(args);
        hub.kubectl(&all)
    };
    assert!(
        as_agent(&["get", "membercluster", "alpha"])
            .status
            .success()
    );
    assert!(
        as_agent(&["get", "works", "-n", "fleet-member-alpha"])
            .status
            .success()
    );
    let refused = as_agent(&["get", "secrets", "-n", "kube-system"]);
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("Forbidden"),
        "{refused:?}"
    );
    let member = RealCluster::start();
    let agent = common::member_agent(
        &hub.real().server(),
        &hub.real().ca(),
        &token,
        "alpha",
        &member.kubeconfig(),
    );
    let _agent = LoggedChild::spawn(agent);
    eventually("alpha joined", 60, || {
        (condition(&hub, &["membercluster", "alpha"], "Joined").as_deref() == Some("True"))
            .then_some(())
    });
    eventually("namespace app on the member", 120, || {
        member
            .kubectl(&["get", "namespace", "app"])
            .status
            .success()
            .then_some(())
    });
    eventually("the CRP available", 120, || {
        (condition(&hub, &["crp", "app"], "ClusterResourcePlacementAvailable").as_deref()
            == Some("True"))
        .then_some(())
    });
    // Revoking deletes the ServiceAccount: its tokens stop working.
    let revoked = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["token", "revoke", "alpha", "--kubeconfig"])
        .arg(hub.kubeconfig())
        .output()
        .expect("flotilla token revoke");
    assert!(
        revoked.status.success(),
        "{}",
        String::from_utf8_lossy(&revoked.stderr)
    );
    eventually("the revoked token refused", 30, || {
        let out = as_agent(&["get", "membercluster", "alpha"]);
        String::from_utf8_lossy(&out.stderr)
            .contains("Unauthorized")
            .then_some(())
    });

    // The controllers' metrics, on their own metrics server: reconciles counted per
    // controller, their queues, and the fleet gauges.
    let url = eventually("the metrics address logged", 30, || {
        controllers.messages().iter().find_map(|m| {
            let rest = m.strip_prefix("serving metrics on ")?;
            Some(rest.to_string())
        })
    });
    let metric = |series: &str| -> Option<f64> {
        let out = Command::new("curl").args(["-sf", &url]).output().ok()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
    };
    eventually("placement reconciles counted", 30, || {
        metric(r#"controller_runtime_reconcile_total{controller="clusterresourceplacement",result="success"}"#)
            .filter(|n| *n >= 1.0)
    });
    eventually("the member counted by its conditions", 30, || {
        metric(r#"flotilla_member_clusters{joined="True",healthy="True"}"#).filter(|n| *n == 1.0)
    });
    assert!(metric(r#"workqueue_depth{name="clusterresourceplacement"}"#).is_some());
    assert!(
        metric(r#"workqueue_queue_duration_seconds_count{name="clusterresourceplacement"}"#)
            .is_some_and(|n| n >= 1.0)
    );

    // Cluster updates: a run naming a strategy that does not exist is told so in its status.
    hub.apply(
        &std::fs::read_to_string(common::examples_dir().join("updates/update-run.yaml"))
            .expect("example run"),
    );
    eventually("the update run's error", 60, || {
        let run = hub.get(&["updaterun", "upgrade-1-32"])?;
        (run["status"]["error"]["code"] == "InvalidStrategy").then_some(())
    });
}

#[test]
fn controllers_elect_one_leader_and_fail_over() {
    let hub = CoreHub::start();
    hub.install_crds();
    // A leads (4 s leases); B stands by.
    let mut a = Controllers::start(&hub, "4", "3s", "500ms");
    let a_id = a.identity();
    eventually("A leading", 30, || (hub.lease()?.0 == a_id).then_some(()));
    // B writes 30 s leases once it leads, so only a release hands its lease over quickly.
    let mut b = Controllers::start(&hub, "30s", "3s", "500ms");
    let b_id = b.identity();
    eventually("B standing by", 30, || {
        b.logged("another replica leads").then_some(())
    });
    std::thread::sleep(Duration::from_secs(2));
    let (holder, transitions) = hub.lease().expect("lease");
    assert_eq!(holder, a_id, "one leader, still A");
    assert!(!b.logged("acquired leadership"), "{:?}", b.messages());

    // Killed without a chance to release, A's lease moves to B once it expires.
    a.kill();
    let killed = Instant::now();
    eventually("B leading", 30, || (hub.lease()?.0 == b_id).then_some(()));
    let took = killed.elapsed();
    assert!(
        took < Duration::from_secs(4 + 2),
        "B took over {took:?} after A died (lease 4 s)"
    );
    assert_eq!(hub.lease().expect("lease").1, transitions + 1);
    // B's controllers work.
    hub.apply(MEMBER);
    wait_member_ready(&hub, "alpha");

    // A clean stop releases the lease: C takes over at once, not 30 s later.
    let c = Controllers::start(&hub, "4", "3s", "500ms");
    let c_id = c.identity();
    eventually("C standing by", 30, || {
        c.logged("another replica leads").then_some(())
    });
    let stopped = Instant::now();
    let status = terminate(&mut b.child);
    assert!(status.success(), "B exits cleanly: {status}");
    eventually("B's release logged", 10, || {
        b.logged("released the lease").then_some(())
    });
    eventually("C leading", 30, || (hub.lease()?.0 == c_id).then_some(()));
    let took = stopped.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "C took over {took:?} after B stopped (its lease: 30 s)"
    );
    assert_eq!(hub.lease().expect("lease").1, transitions + 2);
}

#[test]
fn hub_runs_its_controllers_under_the_lease_and_releases_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = format!("sqlite:{}", dir.path().join("store.db").display());
    let mut hub = CoreHub::start_in(dir, &["--store", &store]);
    let (first, transitions) = eventually("the hub's controllers leading", 30, || {
        hub.lease().filter(|(holder, _)| !holder.is_empty())
    });
    assert_eq!(transitions, 0);
    hub.apply(MEMBER);
    wait_member_ready(&hub, "alpha");

    // A clean stop releases the lease (15 s by default): a new replica over the same store
    // takes it over at once.
    let stopped = Instant::now();
    let status = terminate(hub.child());
    assert!(status.success(), "the hub exits cleanly: {status}");
    let dir = hub.take_dir();
    drop(hub);
    let hub = CoreHub::start_in(dir, &["--store", &store]);
    let (second, transitions) = eventually("the new replica leading", 30, || {
        hub.lease().filter(|(holder, _)| !holder.is_empty())
    });
    assert_ne!(first, second);
    assert_eq!(transitions, 1);
    assert!(
        stopped.elapsed() < Duration::from_secs(10),
        "took over {:?} after the stop",
        stopped.elapsed()
    );
}
