//! Throwaway etcd servers for tests and benchmarks: the installed `etcd` (3.4 or later) started
//! on loopback with free ports and a temporary data directory, at its default durability (the
//! WAL is fsynced before a write is acknowledged). Servers are killed and their data removed
//! when dropped, and also when this process exits without dropping them (e.g. one server shared
//! by a test binary through a `static`): each `etcd` is started by a `sh` whose background
//! watchdog holds a pipe from this process and kills the server when the pipe closes.
//!
//! [`LocalEtcd`] is a one-member cluster; [`LocalEtcdCluster`] has several members, any of
//! which can be killed and restarted to test failover. [`locate_or_install`] finds `etcd`,
//! installing Debian's `etcd-server` package when it is missing (as `.ci/run` does).

use std::fs::File;
use std::io::{self, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use tempfile::TempDir;
use tokio::time::Instant;

use super::client::{Client, ConnectOptions};
use super::wire::RangeRequest;

/// How long a server may take to start serving.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Why an etcd server could not be started.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// No `etcd` executable on `PATH`, and installing one failed.
    #[error("etcd is not installed (no `etcd` on PATH) and installing etcd-server failed: {0}")]
    NotInstalled(String),
    /// A file, port or process operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The failure.
        #[source]
        source: io::Error,
    },
    /// etcd exited or did not serve in time; `log` is the end of its output.
    #[error("etcd did not start: {reason}\n{log}")]
    NotServing {
        /// What went wrong.
        reason: String,
        /// The last lines etcd logged.
        log: String,
    },
}

fn io_error(context: impl Into<String>) -> impl FnOnce(io::Error) -> LaunchError {
    let context = context.into();
    move |source| LaunchError::Io { context, source }
}

/// The `etcd` executable on `PATH`, if one is installed.
pub fn locate() -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join("etcd"))
        .find(|path| path.is_file())
}

/// The `etcd` executable on `PATH`, installing Debian's `etcd-server` package first if there is
/// none (`apt-get install -y etcd-server`, through `sudo -n` unless running as root, refreshing
/// the package lists if the first attempt fails).
pub fn locate_or_install() -> Result<PathBuf, LaunchError> {
    if let Some(path) = locate() {
        return Ok(path);
    }
    apt_install(&["etcd-server"]).map_err(LaunchError::NotInstalled)?;
    locate().ok_or_else(|| LaunchError::NotInstalled("no etcd on PATH afterwards".to_owned()))
}

/// Installs Debian `packages` for a test harness (`apt-get install -y`, through `sudo -n`
/// unless running as root, refreshing the package lists if the first attempt fails), so tests
/// need no set-up by hand; the error is apt's.
pub fn apt_install(packages: &[&str]) -> Result<(), String> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| output.stdout.trim_ascii() == b"0");
    let apt = |args: &[&str]| {
        let mut command = if root {
            Command::new("apt-get")
        } else {
            let mut sudo = Command::new("sudo");
            sudo.args(["-n", "apt-get"]);
            sudo
        };
        command
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdin(Stdio::null())
            .output()
    };
    let install: Vec<&str> = ["install", "-y"].iter().chain(packages).copied().collect();
    match apt(&install) {
        Ok(output) if output.status.success() => Ok(()),
        _ => match apt(&["update"]).and_then(|_| apt(&install)) {
            Ok(output) if output.status.success() => Ok(()),
            Ok(output) => Err(String::from_utf8_lossy(&output.stderr).trim().to_owned()),
            Err(error) => Err(error.to_string()),
        },
    }
}

/// A running one-member etcd cluster.
pub struct LocalEtcd {
    member: Member,
    version: String,
    dir: TempDir,
}

impl LocalEtcd {
    /// Starts `binary` as a one-member cluster on loopback and waits until it serves.
    pub async fn start(binary: &Path) -> Result<LocalEtcd, LaunchError> {
        let version = version(binary)?;
        let (mut members, dir) = start_members(binary, 1).await?;
        Ok(LocalEtcd {
            member: members.remove(0),
            version,
            dir,
        })
    }

    /// The client URL.
    pub fn endpoint(&self) -> &str {
        &self.member.spec.endpoint
    }

    /// One line saying what runs where.
    pub fn describe(&self) -> String {
        format!(
            "{} on {}, data in {} (default durability: WAL fsync before acknowledging)",
            self.version,
            self.member.spec.endpoint,
            self.dir.path().display()
        )
    }
}

/// A running etcd cluster of several members on loopback.
pub struct LocalEtcdCluster {
    members: Vec<Member>,
    _dir: TempDir,
}

impl LocalEtcdCluster {
    /// Starts `size` members of one cluster and waits until every member serves (which needs
    /// an elected leader).
    pub async fn start(binary: &Path, size: usize) -> Result<LocalEtcdCluster, LaunchError> {
        let (members, dir) = start_members(binary, size).await?;
        Ok(LocalEtcdCluster { members, _dir: dir })
    }

    /// Every member's client URL, killed members included (clients are given them all).
    pub fn endpoints(&self) -> Vec<String> {
        self.members
            .iter()
            .map(|member| member.spec.endpoint.clone())
            .collect()
    }

    /// Kills member `index` (SIGKILL) and waits for it to exit; no-op if it is already dead.
    pub fn kill(&mut self, index: usize) {
        if let Some(member) = self.members.get_mut(index) {
            member.kill();
        }
    }

    /// Starts member `index` again on its data and ports, and waits until it serves (which
    /// needs a leader); no-op if it is running.
    pub async fn restart(&mut self, index: usize) -> Result<(), LaunchError> {
        let Some(member) = self.members.get_mut(index) else {
            return Ok(());
        };
        if member.child.is_none() {
            member.respawn()?;
        }
        wait_serving(std::slice::from_mut(member)).await
    }

    /// The index of the live member that is the cluster's leader, if one is known by then.
    pub async fn leader(&self) -> Option<usize> {
        for (index, member) in self.members.iter().enumerate() {
            if member.child.is_none() {
                continue;
            }
            let status = async { member.client().await?.status().await.ok() };
            if let Ok(Some(status)) = tokio::time::timeout(Duration::from_secs(2), status).await
                && status
                    .header
                    .is_some_and(|header| header.member_id == status.leader)
            {
                return Some(index);
            }
        }
        None
    }
}

/// How to start one member.
struct MemberSpec {
    binary: PathBuf,
    /// The cluster's directory: the member's data and log are `<name>.data` and `<name>.log`.
    dir: PathBuf,
    name: String,
    endpoint: String,
    peer: String,
    /// Every member's `name=peer-url`.
    initial_cluster: String,
}

impl MemberSpec {
    /// The members of a new cluster of `size` on free loopback ports, living in `dir`.
    fn cluster(binary: &Path, dir: &Path, size: usize) -> Result<Vec<MemberSpec>, LaunchError> {
        let ports = free_ports(2 * size)?;
        let mut specs: Vec<MemberSpec> = ports
            .chunks(2)
            .enumerate()
            .map(|(index, pair)| MemberSpec {
                binary: binary.to_owned(),
                dir: dir.to_owned(),
                name: format!("m{index}"),
                endpoint: format!("http://127.0.0.1:{}", pair[0]),
                peer: format!("http://127.0.0.1:{}", pair[1]),
                initial_cluster: String::new(),
            })
            .collect();
        let initial_cluster = specs
            .iter()
            .map(|spec| format!("{}={}", spec.name, spec.peer))
            .collect::<Vec<_>>()
            .join(",");
        for spec in &mut specs {
            spec.initial_cluster.clone_from(&initial_cluster);
        }
        Ok(specs)
    }

    /// The member's log file.
    fn log(&self) -> PathBuf {
        self.dir.join(format!("{}.log", self.name))
    }

    /// Starts the member (on its existing data, if any) under the watchdog.
    fn spawn(&self) -> Result<Child, LaunchError> {
        let log = self.log();
        let output = File::options()
            .create(true)
            .append(true)
            .open(&log)
            .map_err(io_error(format!("opening {}", log.display())))?;
        let errors = output
            .try_clone()
            .map_err(io_error("duplicating the log file"))?;
        // The directory's name is unique: a fine cluster token.
        let token = self
            .dir
            .file_name()
            .map_or_else(|| "flotilla".into(), |name| name.to_string_lossy());
        let mut command = Command::new("sh");
        command
            .args(["-c", WATCHDOG])
            .arg(&self.binary)
            .args(["--name", &self.name, "--data-dir"])
            .arg(self.dir.join(format!("{}.data", self.name)))
            .args(["--listen-client-urls", &self.endpoint])
            .args(["--advertise-client-urls", &self.endpoint])
            .args(["--listen-peer-urls", &self.peer])
            .args(["--initial-advertise-peer-urls", &self.peer])
            .args(["--initial-cluster", &self.initial_cluster])
            .args(["--initial-cluster-token", &token])
            .args(["--initial-cluster-state", "new"])
            .env("FLOTILLA_ETCD_DIR", &self.dir)
            .stdin(Stdio::piped())
            .stdout(output)
            .stderr(errors);
        if let Some(arch) = unsupported_arch() {
            command.env("ETCD_UNSUPPORTED_ARCH", arch);
        }
        command
            .spawn()
            .map_err(io_error(format!("starting {}", self.binary.display())))
    }
}

/// Runs etcd (`"$0" "$@"`) in place of the shell, so the child process *is* etcd, after
/// starting a watchdog subshell on the shell's stdin (a pipe from this process, moved to fd 3
/// since a background job's stdin is `/dev/null`). The watchdog reads one order: `kill` kills
/// etcd; `keep` (etcd already exited) does nothing; end of file (the pipe was dropped, or this
/// process exited) kills etcd and removes its directory.
const WATCHDOG: &str = r#"exec 3<&0
(read -r order <&3
case "$order" in
  keep) ;;
  kill) kill -9 $$ ;;
  *) kill -9 $$; rm -rf "$FLOTILLA_ETCD_DIR" ;;
esac) &
exec "$0" "$@" 3<&- 0</dev/null"#;

/// One etcd process.
struct Member {
    spec: MemberSpec,
    /// `None` once killed.
    child: Option<Child>,
    /// The pipe to the watchdog; `None` once it was given its order.
    watchdog: Option<ChildStdin>,
}

impl Member {
    /// Starts a member.
    fn start(spec: MemberSpec) -> Result<Member, LaunchError> {
        let mut member = Member {
            spec,
            child: None,
            watchdog: None,
        };
        member.respawn()?;
        Ok(member)
    }

    /// Starts the member's process (which must not be running).
    fn respawn(&mut self) -> Result<(), LaunchError> {
        let mut child = self.spec.spawn()?;
        self.watchdog = child.stdin.take();
        self.child = Some(child);
        Ok(())
    }

    /// Kills etcd (through the watchdog, so it never signals a process that is gone) and reaps
    /// it.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            if !self.order("kill") {
                let _ = child.kill();
            }
            let _ = child.wait();
        }
    }

    /// Gives the watchdog its order; `false` if it could not be delivered.
    fn order(&mut self, order: &str) -> bool {
        self.watchdog
            .take()
            .is_some_and(|mut pipe| writeln!(pipe, "{order}").is_ok())
    }

    /// A client of this member alone (`None` only if its URL is unusable).
    async fn client(&self) -> Option<Client> {
        Client::connect([&self.spec.endpoint], &ConnectOptions::default())
            .await
            .ok()
    }

    /// The last lines the member logged.
    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.spec.log()).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        self.kill();
    }
}

/// How many times a cluster is started on fresh ports: a port probed free can be taken by
/// another process (a parallel test) before etcd binds it.
const PORT_ATTEMPTS: usize = 3;

/// Starts `size` members of one new cluster in a new data directory and waits until every
/// member serves; when a member finds its port taken, starts again on fresh ports (the
/// members already started are killed as they are dropped).
async fn start_members(binary: &Path, size: usize) -> Result<(Vec<Member>, TempDir), LaunchError> {
    let mut attempt = 1;
    loop {
        let dir = temp_dir()?;
        let started = async {
            let mut members = MemberSpec::cluster(binary, dir.path(), size)?
                .into_iter()
                .map(Member::start)
                .collect::<Result<Vec<_>, _>>()?;
            wait_serving(&mut members).await?;
            Ok(members)
        };
        match started.await {
            Ok(members) => return Ok((members, dir)),
            Err(LaunchError::NotServing { log, .. })
                if attempt < PORT_ATTEMPTS && log.contains("address already in use") =>
            {
                attempt += 1;
            }
            Err(error) => return Err(error),
        }
    }
}

/// Waits until every member answers a linearizable read.
async fn wait_serving(members: &mut [Member]) -> Result<(), LaunchError> {
    let deadline = Instant::now() + START_TIMEOUT;
    for member in members {
        loop {
            if let Some(child) = &mut member.child
                && let Ok(Some(status)) = child.try_wait()
            {
                // Reaped: the watchdog must not signal its process id any more.
                member.child = None;
                member.order("keep");
                return Err(LaunchError::NotServing {
                    reason: format!("{} exited ({status})", member.spec.endpoint),
                    log: member.log_tail(),
                });
            }
            let probe = async {
                let request = RangeRequest {
                    key: b"flotilla-probe".to_vec(),
                    ..RangeRequest::default()
                };
                member.client().await?.range(request).await.ok()
            };
            if let Ok(Some(_)) = tokio::time::timeout(Duration::from_secs(1), probe).await {
                break;
            }
            if Instant::now() > deadline {
                return Err(LaunchError::NotServing {
                    reason: format!(
                        "{} did not serve within {START_TIMEOUT:?}",
                        member.spec.endpoint
                    ),
                    log: member.log_tail(),
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    Ok(())
}

/// The first line of `etcd --version`.
fn version(binary: &Path) -> Result<String, LaunchError> {
    let output = Command::new(binary)
        .arg("--version")
        .output()
        .map_err(io_error(format!("running {} --version", binary.display())))?;
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .next()
        .unwrap_or("etcd")
        .trim()
        .to_owned())
}

fn temp_dir() -> Result<TempDir, LaunchError> {
    tempfile::Builder::new()
        .prefix("flotilla-etcd-")
        .tempdir()
        .map_err(io_error("creating a temporary directory"))
}

/// `count` distinct free loopback ports (free when probed; etcd binds them right after).
fn free_ports(count: usize) -> Result<Vec<u16>, LaunchError> {
    let listeners = (0..count)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<io::Result<Vec<_>>>()
        .map_err(io_error("probing for a free port"))?;
    listeners
        .iter()
        .map(|listener| listener.local_addr().map(|address| address.port()))
        .collect::<io::Result<Vec<_>>>()
        .map_err(io_error("probing for a free port"))
}

/// The value etcd wants in `ETCD_UNSUPPORTED_ARCH` on architectures it does not support by
/// default (everything but x86-64), named as Go names them.
fn unsupported_arch() -> Option<&'static str> {
    match std::env::consts::ARCH {
        "x86_64" => None,
        "aarch64" => Some("arm64"),
        "x86" => Some("386"),
        "powerpc64" => Some("ppc64le"),
        other => Some(other),
    }
}
