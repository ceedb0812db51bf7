//! A real Kubernetes cluster for tests: `tools/kube/cluster up` in a temporary directory
//! (building the pinned peers on first use), `tools/kube/cluster down` when dropped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::kubectl;

/// What cluster to start: node count, extra node labels, node capacity.
#[derive(Debug, Clone)]
pub struct ClusterOptions {
    /// kwok nodes (Ready, running pods without containers).
    pub nodes: u32,
    /// Extra labels on every node (`K=V`).
    pub node_labels: Vec<String>,
    /// Each node's capacity and allocatable, `cpu=8,memory=32Gi,pods=110`.
    pub node_capacity: String,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        Self {
            nodes: 1,
            node_labels: Vec::new(),
            node_capacity: "cpu=8,memory=32Gi,pods=110".into(),
        }
    }
}

/// A running real cluster; stopped (every process) when dropped.
pub struct RealCluster {
    dir: tempfile::TempDir,
    cache: tempfile::TempDir,
}

impl RealCluster {
    /// Starts a one-node cluster.
    pub fn start() -> Self {
        Self::start_with(&ClusterOptions::default())
    }

    /// Starts a cluster as `options` say; panics with the script's output if it cannot.
    pub fn start_with(options: &ClusterOptions) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("flotilla-kube-")
            .tempdir()
            .expect("tempdir");
        let cache = tempfile::tempdir().expect("tempdir");
        let mut cmd = Command::new(script());
        cmd.arg("up")
            .arg(dir.path())
            .args(["--nodes", &options.nodes.to_string()])
            .args(["--node-capacity", &options.node_capacity]);
        for label in &options.node_labels {
            cmd.args(["--node-label", label]);
        }
        let cluster = Self { dir, cache };
        let out = cmd.output().expect("run tools/kube/cluster");
        assert!(
            out.status.success(),
            "tools/kube/cluster up failed:\n{}\n{}\nlogs: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            cluster.logs()
        );
        cluster
    }

    /// The cluster's directory (certificates, logs, pids).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The admin kubeconfig (`system:masters` bearer token).
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join("kubeconfig")
    }

    /// The kube-apiserver's URL, `https://127.0.0.1:PORT`.
    pub fn server(&self) -> String {
        kubectl::server_of(&self.kubeconfig())
    }

    /// The admin bearer token.
    pub fn token(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("token"))
            .expect("token")
            .trim()
            .to_string()
    }

    /// The cluster CA's certificate (PEM path).
    pub fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.crt")
    }

    /// A kubectl command pointed at this cluster.
    pub fn kubectl_cmd(&self, args: &[&str]) -> Command {
        kubectl::command(&self.kubeconfig(), self.cache.path(), args)
    }

    /// Runs kubectl to completion.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_cmd(args).output().expect("run kubectl")
    }

    /// Runs kubectl and returns stdout, panicking with stderr if it failed.
    pub fn kubectl_ok(&self, args: &[&str]) -> String {
        kubectl::ok(args, self.kubectl(args))
    }

    /// Runs kubectl with `stdin` as input.
    pub fn kubectl_stdin(&self, args: &[&str], stdin: &str) -> Output {
        kubectl::run_with_stdin(self.kubectl_cmd(args), stdin)
    }

    /// Kills `component` (`kube-apiserver`, `etcd`, …) as a crash would and starts it again
    /// with the same command line; returns once kube-apiserver answers again.
    pub fn restart(&self, component: &str) {
        let out = Command::new(script())
            .arg("restart")
            .arg(self.dir.path())
            .arg(component)
            .output()
            .expect("run tools/kube/cluster restart");
        assert!(
            out.status.success(),
            "tools/kube/cluster restart {component} failed:\n{}\nlogs: {}",
            String::from_utf8_lossy(&out.stderr),
            self.logs()
        );
    }

    /// A kube-rs client with the admin kubeconfig.
    pub async fn client(&self) -> kube::Client {
        crate::kube_client(&self.kubeconfig()).await
    }

    /// The tail of every component's log, for failure messages.
    pub fn logs(&self) -> String {
        let mut out = String::new();
        let Ok(entries) = std::fs::read_dir(self.dir.path().join("logs")) else {
            return out;
        };
        for entry in entries.flatten() {
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            out.push_str(&format!("\n== {}\n", entry.path().display()));
            for line in tail.into_iter().rev() {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }
}

impl Drop for RealCluster {
    fn drop(&mut self) {
        let _ = Command::new(script())
            .arg("down")
            .arg(self.dir.path())
            .output();
    }
}

fn script() -> PathBuf {
    crate::repo_root().join("tools/kube/cluster")
}
