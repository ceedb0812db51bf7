//! Test support: a real `flotilla up` process on a free port, driven by the real kubectl.
#![allow(dead_code)]

pub mod browser;
pub mod dashboard;
pub mod logged;
pub mod update_runs;

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
    open_files: Option<u64>,
}

impl HubProcess {
    /// Starts `flotilla up --members 0 --listen 127.0.0.1:0` in a fresh data directory.
    pub fn start() -> Self {
        Self::start_with(&["--members", "0"])
    }

    /// Starts `flotilla up ARGS --listen 127.0.0.1:0` in a fresh data directory (ARGS choose
    /// the simulated fleet, e.g. `--fleet FILE`; empty means the default six members).
    pub fn start_with(fleet_args: &[&str]) -> Self {
        Self::start_with_files(fleet_args, &[])
    }

    /// As [`HubProcess::start_with`], with `files` (name, content) written into the data
    /// directory first: `tokens.csv`, say.
    pub fn start_with_files(fleet_args: &[&str], files: &[(&str, &str)]) -> Self {
        Self::launch(fleet_args, files, None)
    }

    /// As [`HubProcess::start_with`], under an open-file limit of `open_files` (soft and
    /// hard, as `ulimit -n` sets it).
    pub fn start_limited(fleet_args: &[&str], open_files: u64) -> Self {
        Self::launch(fleet_args, &[], Some(open_files))
    }

    fn launch(fleet_args: &[&str], files: &[(&str, &str)], open_files: Option<u64>) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = tempfile::tempdir().expect("tempdir");
        for (name, content) in files {
            std::fs::write(dir.path().join(name), content).expect("write data-dir file");
        }
        let mut hub = Self {
            child: None,
            dir,
            cache,
            fleet_args: fleet_args.iter().map(|a| a.to_string()).collect(),
            open_files,
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

    /// The hub's URL (`https://127.0.0.1:PORT`), from the kubeconfig `up` wrote.
    pub fn server(&self) -> String {
        flotilla_testkit::kubectl::server_of(&self.kubeconfig())
    }

    /// The administrator token `up` generated (user `flotilla-admin`, `system:masters`).
    pub fn admin_token(&self) -> String {
        std::fs::read_to_string(self.dir().join("token"))
            .expect("the admin token")
            .trim()
            .to_string()
    }

    /// (Re)starts the process on the same data directory and waits until it serves.
    pub fn spawn(&mut self) {
        let _ = std::fs::remove_file(self.kubeconfig());
        let mut command = match self.open_files {
            // bash sets the limit and becomes the hub (exec), so the hub keeps its pid.
            Some(n) => {
                let mut c = Command::new("bash");
                c.args(["-c", &format!("ulimit -n {n} && exec \"$0\" \"$@\"")])
                    .arg(env!("CARGO_BIN_EXE_flotilla"));
                c
            }
            None => Command::new(env!("CARGO_BIN_EXE_flotilla")),
        };
        let child = command
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

    /// The hub's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("the hub is running").id()
    }

    /// SIGKILLs the process (no shutdown hooks run).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Runs `script` (a command line a user would paste, quotes and `$(…)` included) in bash
    /// with `KUBECONFIG` pointing at this hub; panics with its stderr if it fails, else
    /// returns its stdout, trimmed.
    pub fn shell_ok(&self, script: &str) -> String {
        let out = Command::new("bash")
            .args(["-c", script])
            .env("KUBECONFIG", self.kubeconfig())
            .output()
            .expect("bash");
        assert!(
            out.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// A kubectl command pointed at this hub with a private discovery cache.
    pub fn kubectl_cmd(&self, args: &[&str]) -> Command {
        kubectl_command(&self.kubeconfig(), self.cache.path(), args)
    }

    /// Runs kubectl to completion.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_cmd(args).output().expect("run kubectl")
    }

    /// Runs kubectl and returns stdout, panicking with stderr if it failed.
    pub fn kubectl_ok(&self, args: &[&str]) -> String {
        flotilla_testkit::kubectl::ok(args, self.kubectl(args))
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
        run_with_stdin(self.kubectl_cmd(args), stdin)
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
        flotilla_testkit::kube_client(&self.kubeconfig()).await
    }
}

impl Drop for HubProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

pub use flotilla_testkit::kubectl::{command as kubectl_command, run_with_stdin};

/// The repository's `examples/` directory.
pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

pub use flotilla_testkit::eventually;

/// A joined default fleet (six members) with quick pod readiness, its clock `speed` times
/// real time.
pub fn fleet(speed: &str) -> HubProcess {
    let hub = HubProcess::start_with(&["--readiness-delay", "1", "--clock-speed", speed]);
    eventually("6 members joined", 90, || {
        let out = hub.kubectl(&[
            "get",
            "memberclusters",
            "-o",
            r#"jsonpath={range .items[*]}{.status.conditions[?(@.type=="Joined")].status}{"\n"}{end}"#,
        ]);
        let joined = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| *l == "True")
            .count();
        (joined == 6).then_some(())
    });
    hub
}

/// A kubeconfig for `member`, through the hub.
pub fn member_kubeconfig(hub: &HubProcess, member: &str) -> PathBuf {
    let out = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["kubeconfig", member, "--kubeconfig"])
        .arg(hub.kubeconfig())
        .output()
        .expect("flotilla kubeconfig");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = hub.dir().join(format!("{member}.kubeconfig"));
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

/// `kubectl --kubeconfig MEMBER ARGS` output, or `None` on failure.
pub fn on_member(hub: &HubProcess, member: &Path, args: &[&str]) -> Option<String> {
    let mut all = vec!["--kubeconfig", member.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = hub.kubectl(&all);
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The status of condition `type_` of the object `kubectl get TARGET` names (e.g.
/// `["crp", "app"]` or `["rp", "web", "-n", "shop"]`), if observed for its current
/// generation.
pub fn current_condition(hub: &HubProcess, target: &[&str], type_: &str) -> Option<String> {
    let path = format!(
        r#"jsonpath={{.metadata.generation}} {{.status.conditions[?(@.type=="{type_}")].observedGeneration}} {{.status.conditions[?(@.type=="{type_}")].status}}"#
    );
    let mut args = vec!["get"];
    args.extend_from_slice(target);
    args.extend(["-o", &path]);
    let out = hub.kubectl_ok(&args);
    let fields: Vec<&str> = out.split_whitespace().collect();
    match fields.as_slice() {
        [generation, observed, status] if generation == observed => Some(status.to_string()),
        _ => None,
    }
}

/// `kubectl get ARGS -o json`, parsed.
pub fn get_json(hub: &HubProcess, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json"]);
    serde_json::from_str(&hub.kubectl_ok(&all)).expect("kubectl prints JSON")
}

/// A namespace with a Deployment `web` (labelled `app: web`) of `replicas` replicas running
/// `nginx:1.27`.
pub fn app(namespace: &str, replicas: u32) -> String {
    format!(
        r#"
apiVersion: v1
kind: Namespace
metadata:
  name: {namespace}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: {namespace}
  labels: {{app: web}}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        resources:
          requests: {{cpu: 100m, memory: 64Mi}}
"#
    )
}

/// A ConfigMap `settings` in `namespace` with `greeting: hello`, as a YAML document.
pub fn settings(namespace: &str) -> String {
    format!(
        r#"---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: {namespace}
data:
  greeting: hello
"#
    )
}

/// The columns `kubectl get crp` and `kubectl get rp` print.
pub const PLACEMENT_COLUMNS: [&str; 7] = [
    "NAME",
    "GEN",
    "SCHEDULED",
    "SCHEDULED-GEN",
    "AVAILABLE",
    "AVAILABLE-GEN",
    "AGE",
];

/// A PickAll ClusterResourcePlacement `app` of namespace `app`, rolled out one cluster at a
/// time (maxUnavailable 1, maxSurge 1, unavailablePeriodSeconds 1).
pub const PICK_ALL_APP: &str = r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: app
spec:
  resourceSelectors:
    - group: ""
      kind: Namespace
      version: v1
      name: app
  policy:
    placementType: PickAll
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 1
      maxSurge: 1
      unavailablePeriodSeconds: 1
"#;

/// `flotilla token issue MEMBER` on the hub of `hub_kubeconfig`: the member agent's token.
pub fn issue_token(hub_kubeconfig: &Path, member: &str) -> String {
    let issued = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["token", "issue", member, "--kubeconfig"])
        .arg(hub_kubeconfig)
        .output()
        .expect("flotilla token issue");
    assert!(
        issued.status.success(),
        "{}",
        String::from_utf8_lossy(&issued.stderr)
    );
    String::from_utf8(issued.stdout)
        .expect("UTF-8")
        .trim()
        .to_string()
}

/// `flotilla --log-json member` joining cluster `member` (its kubeconfig `member_kubeconfig`)
/// to the hub at `server` (CA file `ca`) with `token`, its metrics server off.
pub fn member_agent(
    server: &str,
    ca: &Path,
    token: &str,
    member: &str,
    member_kubeconfig: &Path,
) -> Command {
    let mut agent = Command::new(env!("CARGO_BIN_EXE_flotilla"));
    agent
        .args(["--log-json", "member", "--name", member, "--hub", server])
        .args(["--token", token, "--hub-ca"])
        .arg(ca)
        .arg("--kubeconfig")
        .arg(member_kubeconfig)
        .args(["--metrics-bind-address", "0"])
        .env("RUST_LOG", "info")
        .env_remove("KUBECONFIG");
    agent
}
