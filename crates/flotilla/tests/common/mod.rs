//! Test support: a real `flotilla up` process on a free port, driven by the real kubectl.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A hub process with its own data directory and kubectl discovery cache.
pub struct HubProcess {
    child: Option<Child>,
    dir: tempfile::TempDir,
    cache: tempfile::TempDir,
    fleet_args: Vec<String>,
}

impl HubProcess {
    /// Starts `flotilla up --members 0 --listen 127.0.0.1:0` in a fresh data directory.
    pub fn start() -> Self {
        Self::start_with(&["--members", "0"])
    }

    /// Starts `flotilla up ARGS --listen 127.0.0.1:0` in a fresh data directory (ARGS choose
    /// the simulated fleet, e.g. `--fleet FILE`; empty means the default six members).
    pub fn start_with(fleet_args: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = tempfile::tempdir().expect("tempdir");
        let mut hub = Self {
            child: None,
            dir,
            cache,
            fleet_args: fleet_args.iter().map(|a| a.to_string()).collect(),
        };
        hub.spawn();
        hub
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The kubeconfig `up` wrote.
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join("kubeconfig")
    }

    /// (Re)starts the process on the same data directory and waits until it serves.
    pub fn spawn(&mut self) {
        let _ = std::fs::remove_file(self.kubeconfig());
        let child = Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .arg("up")
            .args(&self.fleet_args)
            .args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(self.dir.path())
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn flotilla up");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.kubeconfig().exists() {
            assert!(
                Instant::now() < deadline,
                "flotilla up did not write its kubeconfig within 60s"
            );
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!("flotilla up exited early: {status}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Drain stdout so the process never blocks on a full pipe.
        if let Some(out) = self.child.as_mut().and_then(|c| c.stdout.take()) {
            std::thread::spawn(move || for _ in BufReader::new(out).lines() {});
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.kubectl(&["get", "--raw", "/readyz"]).status.success() {
            assert!(Instant::now() < deadline, "hub not ready");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// SIGKILLs the process (no shutdown hooks run).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// A kubectl command pointed at this hub with a private discovery cache.
    pub fn kubectl_cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("kubectl");
        cmd.env("KUBECONFIG", self.kubeconfig())
            .arg("--cache-dir")
            .arg(self.cache.path())
            .args(args)
            .stdin(Stdio::null());
        cmd
    }

    /// Runs kubectl to completion.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_cmd(args).output().expect("run kubectl")
    }

    /// Runs kubectl and returns stdout, panicking with stderr if it failed.
    pub fn kubectl_ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed:\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs kubectl expecting failure; returns stderr.
    pub fn kubectl_err(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            !out.status.success(),
            "kubectl {args:?} unexpectedly succeeded: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// Runs kubectl with `stdin` as input.
    pub fn kubectl_stdin(&self, args: &[&str], stdin: &str) -> Output {
        use std::io::Write;
        let mut child = self
            .kubectl_cmd(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin.as_bytes())
            .expect("write stdin");
        child.wait_with_output().expect("kubectl output")
    }

    /// `kubectl create -f -` of a YAML document, asserting success.
    pub fn create(&self, yaml: &str) {
        let out = self.kubectl_stdin(&["create", "-f", "-"], yaml);
        assert!(
            out.status.success(),
            "create failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A kube-rs client over HTTPS using the hub's kubeconfig.
    pub async fn client(&self) -> kube::Client {
        let kubeconfig =
            kube::config::Kubeconfig::read_from(self.kubeconfig()).expect("kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("config");
        kube::Client::try_from(config).expect("client")
    }
}

impl Drop for HubProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The repository's `examples/` directory.
pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}
