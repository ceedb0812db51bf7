//! etcd side by side: the installed `etcd` started on loopback with free ports and a temporary
//! data directory at its default durability (the WAL is fsynced before a write is acknowledged;
//! no `--unsafe-no-fsync`), and its put throughput under the benchmarks' write mix.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use etcd_client::{Client, KvClient};
use tempfile::TempDir;

use super::Plan;
use super::measure::{KeyMix, Worker, Write, payload, throughput};

/// A running etcd, killed (and its data directory removed) on drop.
pub struct Etcd {
    child: Child,
    endpoint: String,
    version: String,
    dir: TempDir,
}

impl Etcd {
    /// The `etcd` executable on `PATH`, if one is installed.
    pub fn locate() -> Option<PathBuf> {
        let paths = std::env::var_os("PATH")?;
        std::env::split_paths(&paths)
            .map(|dir| dir.join("etcd"))
            .find(|path| path.is_file())
    }

    /// Starts `binary` as a one-member cluster on loopback and waits until it serves.
    pub async fn start(binary: &Path) -> Result<Etcd> {
        let version = Command::new(binary)
            .arg("--version")
            .output()
            .context("running etcd --version")?;
        let version = String::from_utf8_lossy(&version.stdout)
            .lines()
            .next()
            .unwrap_or("etcd")
            .trim()
            .to_owned();
        let dir = tempfile::Builder::new()
            .prefix("flotilla-bench-etcd-")
            .tempdir()?;
        let [client_port, peer_port] = free_ports()?;
        let endpoint = format!("http://127.0.0.1:{client_port}");
        let peer = format!("http://127.0.0.1:{peer_port}");
        let log = File::create(dir.path().join("etcd.log"))?;
        let child = Command::new(binary)
            .args(["--name", "bench", "--data-dir"])
            .arg(dir.path().join("data"))
            .args([
                "--listen-client-urls",
                &endpoint,
                "--advertise-client-urls",
                &endpoint,
            ])
            .args([
                "--listen-peer-urls",
                &peer,
                "--initial-advertise-peer-urls",
                &peer,
            ])
            .args(["--initial-cluster", &format!("bench={peer}")])
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let mut etcd = Etcd {
            child,
            endpoint,
            version,
            dir,
        };
        etcd.wait_ready().await?;
        Ok(etcd)
    }

    /// One line saying what runs where.
    pub fn describe(&self) -> String {
        format!(
            "{} on {}, data in {} (default durability: WAL fsync before acknowledging)",
            self.version,
            self.endpoint,
            self.dir.path().display()
        )
    }

    async fn wait_ready(&mut self) -> Result<()> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!("etcd exited at startup ({status}):\n{}", self.log_tail());
            }
            let probe = async {
                let mut client = Client::connect([&self.endpoint], None).await?;
                client.get("flotilla-bench-probe", None).await
            };
            if let Ok(Ok(_)) = tokio::time::timeout(Duration::from_secs(1), probe).await {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("etcd did not serve within 30 s:\n{}", self.log_tail());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.dir.path().join("etcd.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// Acknowledged puts per second of `plan.writers` concurrent writers spread round-robin
    /// over `plan.etcd_connections` client connections, each writing [`payload`]-sized values
    /// under `prefix` with the store benchmark's [`KeyMix`], for `plan.duration`.
    async fn put_throughput(&self, plan: &Plan, prefix: &str) -> Result<f64> {
        let mut clients = Vec::new();
        for _ in 0..plan.etcd_connections.clamp(1, plan.writers) {
            let client = Client::connect([&self.endpoint], None)
                .await
                .context("connecting to etcd")?;
            clients.push(client.kv_client());
        }
        let value = payload().into_bytes();
        let workers = (0..plan.writers)
            .map(|w| EtcdWriter {
                kv: clients[w % clients.len()].clone(),
                prefix: format!("{prefix}/w{w}/"),
                mix: KeyMix::default(),
                value: value.clone(),
            })
            .collect();
        throughput(workers, plan.duration).await
    }
}

/// etcd's put throughput (see [`Etcd::put_throughput`]) when etcd runs side by side.
pub async fn put_throughput(etcd: Option<&Etcd>, plan: &Plan, prefix: &str) -> Result<Option<f64>> {
    match etcd {
        Some(etcd) => Ok(Some(etcd.put_throughput(plan, prefix).await?)),
        None => Ok(None),
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two distinct free loopback ports (free when probed; etcd binds them right after).
fn free_ports() -> Result<[u16; 2]> {
    let a = std::net::TcpListener::bind("127.0.0.1:0")?;
    let b = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok([a.local_addr()?.port(), b.local_addr()?.port()])
}

/// One etcd writer: plain puts (etcd's fastest write), creates and updates as [`KeyMix`] says.
struct EtcdWriter {
    kv: KvClient,
    prefix: String,
    mix: KeyMix,
    value: Vec<u8>,
}

impl Worker for EtcdWriter {
    async fn step(&mut self) -> Result<()> {
        let (Write::Create(n) | Write::Update(n)) = self.mix.next_write();
        self.kv
            .put(format!("{}{n}", self.prefix), self.value.clone(), None)
            .await?;
        Ok(())
    }
}
