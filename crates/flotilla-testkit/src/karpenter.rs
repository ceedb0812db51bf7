//! Real Karpenter on a [`RealCluster`]: the controller built from `sigs.k8s.io/karpenter` with
//! its kwok cloud provider (`tools/peers/build karpenter`), run as a local process against the
//! cluster's kube-apiserver, with the instance types the test gives. Its nodes carry kwok's
//! annotation, so the cluster's kwok turns them Ready and runs their pods.
//!
//! Starting it installs Karpenter's CRDs (copied from its module by the build script) and a
//! `KWOKNodeClass` named [`RealKarpenter::NODE_CLASS`]; dropping it stops the process. Its log
//! is the cluster's `logs/karpenter.log`, so [`RealCluster::logs`] shows it.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use crate::{RealCluster, eventually};

/// A running Karpenter (kwok provider) managing a [`RealCluster`]'s nodes.
pub struct RealKarpenter {
    child: Child,
    metrics_port: u16,
}

impl RealKarpenter {
    /// The `KWOKNodeClass` every NodePool of the test names (`group: karpenter.kwok.sh`).
    pub const NODE_CLASS: &'static str = "default";

    /// Starts Karpenter on `cluster` offering `instance_types` (the kwok provider's JSON format:
    /// name, architecture, operatingSystems, resources and priced offerings per zone and
    /// capacity type); returns once its CRDs serve and the node class is Ready.
    pub fn start(cluster: &RealCluster, instance_types: &serde_json::Value) -> Self {
        let home = peer_dir();
        cluster.kubectl_ok(&[
            "apply",
            "--server-side",
            "-f",
            home.join("crds").to_str().expect("UTF-8 path"),
        ]);
        for crd in [
            "nodepools.karpenter.sh",
            "nodeclaims.karpenter.sh",
            "nodeoverlays.karpenter.sh",
        ] {
            cluster.kubectl_ok(&["wait", "--for=condition=Established", "crd", crd]);
        }
        let types = cluster.dir().join("karpenter-instance-types.json");
        std::fs::write(&types, instance_types.to_string()).expect("write instance types");
        let log = cluster.dir().join("logs/karpenter.log");
        let out = std::fs::File::create(&log).expect("karpenter log");
        let metrics_port = free_port();
        let child = Command::new(home.join("bin/karpenter"))
            .env("KUBECONFIG", cluster.kubeconfig())
            .env("INSTANCE_TYPES_FILE_PATH", &types)
            .env("DISABLE_LEADER_ELECTION", "true")
            // Static NodePools (`spec.replicas`) and NodeOverlays are alpha behind these gates;
            // Flotilla always honours both.
            .env("FEATURE_GATES", "StaticCapacity=true,NodeOverlay=true")
            .env("METRICS_PORT", metrics_port.to_string())
            .env("HEALTH_PROBE_PORT", free_port().to_string())
            // etcd 3.4 cannot serve client-go's watch-list streams; watch the classic way.
            .env("KUBE_FEATURE_WatchListClient", "false")
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("log handle"))
            .stderr(out)
            .spawn()
            .expect("start karpenter");
        let karpenter = Self {
            child,
            metrics_port,
        };
        let class = format!(
            "apiVersion: karpenter.kwok.sh/v1alpha1\nkind: KWOKNodeClass\nmetadata:\n  name: {}\n",
            Self::NODE_CLASS
        );
        let applied = cluster.kubectl_stdin(&["apply", "-f", "-"], &class);
        assert!(applied.status.success(), "KWOKNodeClass: {applied:?}");
        eventually("Karpenter marks the KWOKNodeClass Ready", 60, || {
            let ready = cluster.kubectl(&[
                "get",
                "kwoknodeclass",
                Self::NODE_CLASS,
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}",
            ]);
            (String::from_utf8_lossy(&ready.stdout) == "True").then_some(())
        });
        karpenter
    }

    /// What Karpenter's Prometheus endpoint shows now (the text format), empty while it does
    /// not answer.
    pub fn metrics(&self) -> String {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.metrics_port)) else {
            return String::new();
        };
        let request = format!(
            "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1:{}\r\n\r\n",
            self.metrics_port
        );
        let mut response = String::new();
        if stream.write_all(request.as_bytes()).is_err()
            || stream.read_to_string(&mut response).is_err()
        {
            return String::new();
        }
        response
            .split_once("\r\n\r\n")
            .map(|(_, body)| body.to_string())
            .unwrap_or_default()
    }
}

impl Drop for RealKarpenter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Karpenter's build directory (`bin/karpenter`, `crds/`), built on first use.
fn peer_dir() -> PathBuf {
    let out = Command::new(crate::repo_root().join("tools/peers/build"))
        .arg("karpenter")
        .output()
        .expect("run tools/peers/build");
    assert!(
        out.status.success(),
        "tools/peers/build karpenter failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bin = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    bin.parent().expect("the peer's directory").to_path_buf()
}

/// A loopback port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}
