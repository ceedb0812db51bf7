//! High availability on etcd, with real processes: two `flotilla hub` replicas against one
//! three-member etcd cluster both serve the API, the controllers run on the replica holding the
//! Lease, killing that replica moves them to the other within the lease duration with no
//! acknowledged write lost, and killing an etcd member does not stop the hub.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::eventually;
use common::logged::LoggedChild;
use flotilla_store::etcd::testing::{LocalEtcdCluster, locate_or_install};

/// One `flotilla hub --store etcd:…` replica, its data directory and kubectl cache.
struct Replica {
    process: LoggedChild,
    dir: tempfile::TempDir,
    cache: tempfile::TempDir,
}

const LEASE: &str = "4";

impl Replica {
    /// Starts a replica in `dir` (which may already hold the hub's CA and admin token).
    fn start(store: &str, dir: tempfile::TempDir) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_flotilla"));
        command
            .args([
                "hub",
                "--log-json",
                "--store",
                store,
                "--listen",
                "127.0.0.1:0",
            ])
            .arg("--data-dir")
            .arg(dir.path())
            .args([
                "--lease-duration",
                LEASE,
                "--renew-deadline",
                "3s",
                "--retry-period",
                "1s",
            ])
            .env("RUST_LOG", "info")
            .stdin(Stdio::null());
        let replica = Self {
            process: LoggedChild::spawn(command),
            dir,
            cache: tempfile::tempdir().unwrap(),
        };
        eventually("the replica's kubeconfig", 60, || {
            replica.kubeconfig().exists().then_some(())
        });
        eventually("the replica serving", 30, || {
            replica
                .kubectl(&["get", "--raw", "/readyz"])
                .status
                .success()
                .then_some(())
        });
        replica
    }

    fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join("kubeconfig")
    }

    fn kubectl(&self, args: &[&str]) -> Output {
        common::kubectl_command(&self.kubeconfig(), self.cache.path(), args)
            .output()
            .expect("kubectl")
    }

    fn kubectl_ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn apply(&self, yaml: &str) -> Output {
        common::run_with_stdin(
            common::kubectl_command(&self.kubeconfig(), self.cache.path(), &["apply", "-f", "-"]),
            yaml,
        )
    }

    /// The holder of the controllers' Lease, as this replica serves it.
    fn lease_holder(&self) -> String {
        self.kubectl_ok(&[
            "get",
            "lease",
            "-n",
            "fleet-system",
            "flotilla-controllers",
            "-o",
            "jsonpath={.spec.holderIdentity}",
        ])
    }

    /// Whether the placement controller has scheduled placement `name` (its policy snapshot
    /// exists).
    fn scheduled(&self, name: &str) -> bool {
        let out = self.kubectl(&[
            "get",
            "clusterschedulingpolicysnapshots",
            "-l",
            &format!("kubernetes-fleet.io/parent-CRP={name}"),
            "-o",
            "name",
        ]);
        out.status.success() && !out.stdout.is_empty()
    }
}

fn placement(name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n---\napiVersion: placement.kubernetes-fleet.io/v1\nkind: ClusterResourcePlacement\nmetadata: {{name: {name}}}\nspec:\n  resourceSelectors:\n  - {{group: \"\", kind: Namespace, version: v1, name: {name}}}\n  policy: {{placementType: PickAll}}\n"
    )
}

/// Copies the hub's identity (CA and admin token) so every replica serves one hub.
fn share_identity(from: &Path, to: &Path) {
    for file in ["ca.crt", "ca.key", "token"] {
        std::fs::copy(from.join(file), to.join(file)).unwrap();
    }
}

#[test]
fn two_replicas_on_three_etcd_members_fail_over_without_losing_writes() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let binary = locate_or_install().expect("etcd");
    let mut etcd = runtime
        .block_on(LocalEtcdCluster::start(&binary, 3))
        .expect("a three-member etcd cluster");
    let store = format!("etcd:{}", etcd.endpoints().join(","));

    let a = Replica::start(&store, tempfile::tempdir().unwrap());
    let b_dir = tempfile::tempdir().unwrap();
    share_identity(a.dir.path(), b_dir.path());
    let b = Replica::start(&store, b_dir);
    let mut replicas = [Some(a), Some(b)];
    let ids: Vec<String> = replicas
        .iter()
        .map(|r| r.as_ref().unwrap().process.identity())
        .collect();

    // Both serve the same API: a write through one is read through the other at once.
    let [Some(a), Some(b)] = &replicas else {
        unreachable!()
    };
    a.kubectl_ok(&["create", "configmap", "via-a", "--from-literal=k=v"]);
    assert_eq!(
        b.kubectl_ok(&["get", "configmap", "via-a", "-o", "jsonpath={.data.k}"]),
        "v"
    );

    // One leader; its controllers schedule placements created through either replica.
    let holder = eventually("a leader", 30, || {
        let h = a.lease_holder();
        ids.contains(&h).then_some(h)
    });
    let leader = ids.iter().position(|id| *id == holder).unwrap();
    let standby = 1 - leader;
    let standby_logged = replicas[standby]
        .as_ref()
        .unwrap()
        .process
        .logged("acquired leadership");
    assert!(!standby_logged, "only one replica leads");
    let out = replicas[standby]
        .as_ref()
        .unwrap()
        .apply(&placement("before"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eventually("placement scheduled by the leader", 30, || {
        replicas[standby]
            .as_ref()
            .unwrap()
            .scheduled("before")
            .then_some(())
    });

    // Acknowledged writes through the leader survive its death.
    let lead = replicas[leader].as_ref().unwrap();
    for i in 0..20 {
        lead.kubectl_ok(&[
            "create",
            "configmap",
            &format!("acked-{i}"),
            "--from-literal=i=x",
        ]);
    }
    replicas[leader].take().unwrap().process.kill();
    let killed = Instant::now();
    let survivor = replicas[standby].as_ref().unwrap();
    let names = survivor.kubectl_ok(&["get", "configmaps", "-o", "name"]);
    for i in 0..20 {
        assert!(
            names.contains(&format!("configmap/acked-{i}\n"))
                || names.ends_with(&format!("configmap/acked-{i}")),
            "acked-{i} lost:\n{names}"
        );
    }

    // The controllers move to the survivor within the lease duration (plus a retry period and
    // the time kubectl takes to look).
    eventually("the survivor leading", 30, || {
        (survivor.lease_holder() == ids[standby]).then_some(())
    });
    let took = killed.elapsed();
    assert!(
        took < Duration::from_secs(4 + 3),
        "took over after {took:?} (lease {LEASE} s)"
    );
    let out = survivor.apply(&placement("after"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eventually("placement scheduled by the new leader", 30, || {
        survivor.scheduled("after").then_some(())
    });

    // Losing one etcd member (its leader, the hardest case) does not stop the hub.
    let etcd_leader = runtime.block_on(etcd.leader()).expect("an etcd leader");
    etcd.kill(etcd_leader);
    // (A write in flight when the member died may fail with an unknown outcome; kubectl's
    // retry then finds it already applied.)
    eventually("a write after losing an etcd member", 30, || {
        let out = survivor.kubectl(&["create", "configmap", "after-etcd-loss"]);
        (out.status.success() || String::from_utf8_lossy(&out.stderr).contains("AlreadyExists"))
            .then_some(())
    });
    survivor.kubectl_ok(&["get", "configmap", "after-etcd-loss"]);
    // The survivor keeps renewing its lease on the remaining two members.
    std::thread::sleep(Duration::from_secs(6));
    assert_eq!(survivor.lease_holder(), ids[standby]);
    assert!(
        !survivor.process.logged("lost leadership"),
        "{:?}",
        survivor.process.messages()
    );
}
