//! The real kube-apiserver as `flotilla bench api`'s peer: built from its pinned Go module by
//! `tools/peers/build`, started on the same etcd 3.4 as the run (its own key prefix), with its
//! own CA, serving certificate and an admin bearer token, and reached over the same HTTP/2
//! client path as the hub.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rcgen::KeyPair;

use super::https::{H2Client, client_config, h2_client};
use crate::tls;

/// A running kube-apiserver; killed on drop.
pub struct KubePeer {
    child: Child,
    address: SocketAddr,
    ca_pem: String,
    token: String,
    config: kube::Config,
}

/// `tools/peers/build`, found from the working directory upwards (the bench runs from the
/// repository, as `cargo run --release -- bench api`).
fn build_script() -> Option<PathBuf> {
    let mut dir = std::env::current_dir().ok()?;
    loop {
        let script = dir.join("tools/peers/build");
        if script.is_file() {
            return Some(script);
        }
        if !dir.pop() {
            return None;
        }
    }
}

/// The directory of the built kube-apiserver, building it first if needed.
fn binaries() -> Result<PathBuf> {
    let script = build_script().context("no tools/peers/build above the working directory")?;
    let out = Command::new(&script)
        .arg("kubernetes")
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("running {}", script.display()))?;
    if !out.status.success() {
        bail!("{} failed", script.display());
    }
    Ok(PathBuf::from(String::from_utf8(out.stdout)?.trim()))
}

impl KubePeer {
    /// Starts kube-apiserver on `etcd` (an endpoint URL), its files in `dir`.
    pub async fn start(dir: &Path, etcd: &str) -> Result<KubePeer> {
        let bin = binaries()?;
        std::fs::create_dir_all(dir)?;
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
            .local_addr()?
            .port();
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let pki = tls::load_or_create(dir, Some(address.ip()))?;
        let serving = dir.join("kube-serving.crt");
        let serving_key = dir.join("kube-serving.key");
        std::fs::write(&serving, &pki.cert_pem)?;
        std::fs::write(&serving_key, &pki.key_pem)?;
        let signing = KeyPair::generate().context("service account key")?;
        std::fs::write(dir.join("sa.key"), signing.serialize_pem())?;
        std::fs::write(dir.join("sa.pub"), signing.public_key_pem())?;
        let token = format!("{:032x}", rand::random::<u128>());
        std::fs::write(
            dir.join("tokens.csv"),
            format!("{token},bench-admin,bench-admin,system:masters\n"),
        )?;
        let log = std::fs::File::create(dir.join("kube-apiserver.log"))?;
        let child = Command::new(bin.join("kube-apiserver"))
            .args(["--etcd-servers", etcd, "--etcd-prefix", "/bench-kube"])
            .args([
                "--bind-address",
                "127.0.0.1",
                "--advertise-address",
                "127.0.0.1",
            ])
            .args(["--secure-port", &port.to_string()])
            .arg("--tls-cert-file")
            .arg(&serving)
            .arg("--tls-private-key-file")
            .arg(&serving_key)
            .arg("--token-auth-file")
            .arg(dir.join("tokens.csv"))
            .args(["--authorization-mode", "RBAC"])
            .args(["--service-account-issuer", "https://kubernetes.default.svc"])
            .arg("--service-account-key-file")
            .arg(dir.join("sa.pub"))
            .arg("--service-account-signing-key-file")
            .arg(dir.join("sa.key"))
            .args(["--service-cluster-ip-range", "10.96.0.0/16"])
            .args(["--endpoint-reconciler-type", "none"])
            .arg("--cert-dir")
            .arg(dir.join("kube-certs"))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .context("starting kube-apiserver")?;
        let config = client_config(address, &pki.ca_pem, &token).await?;
        let peer = KubePeer {
            child,
            address,
            ca_pem: pki.ca_pem,
            token,
            config,
        };
        peer.wait_ready(dir).await?;
        Ok(peer)
    }

    async fn wait_ready(&self, dir: &Path) -> Result<()> {
        let client = self.h2_client()?;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(status) = client.get("/readyz").await
                && status == http::StatusCode::OK
            {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!(
                    "kube-apiserver not ready in 60 s; see {}",
                    dir.join("kube-apiserver.log").display()
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// An HTTP/2 client over one TLS connection, with the admin token.
    pub fn h2_client(&self) -> Result<H2Client> {
        h2_client(self.address, &self.ca_pem, &self.token)
    }

    /// A kube-rs client (HTTP/1.1) with the admin token.
    pub fn client(&self) -> Result<kube::Client> {
        Ok(kube::Client::try_from(self.config.clone())?)
    }

    /// The kube-apiserver process's resident memory, in MiB.
    pub fn resident_mib(&self) -> Result<f64> {
        resident_mib(self.child.id())
    }

    /// Where it listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }
}

impl Drop for KubePeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A process's resident set size (`VmRSS`), in MiB.
pub fn resident_mib(pid: u32) -> Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .context("no VmRSS")?
        .parse()?;
    Ok(kib / 1024.0)
}
