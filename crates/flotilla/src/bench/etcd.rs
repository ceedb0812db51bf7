//! etcd side by side: the installed `etcd` started on loopback with free ports and a temporary
//! data directory at its default durability (the WAL is fsynced before a write is acknowledged;
//! no `--unsafe-no-fsync`) by [`flotilla_store::etcd::testing`], and its put throughput under
//! the benchmarks' write mix.

use anyhow::{Context, Result};
use flotilla_store::etcd::client::{Client, ConnectOptions};
pub use flotilla_store::etcd::testing::{LocalEtcd as Etcd, locate};

use super::Plan;
use super::measure::{KeyMix, Worker, Write, payload, throughput};

/// etcd's put throughput (see [`etcd_put_throughput`]) when etcd runs side by side.
pub async fn put_throughput(etcd: Option<&Etcd>, plan: &Plan, prefix: &str) -> Result<Option<f64>> {
    match etcd {
        Some(etcd) => Ok(Some(etcd_put_throughput(etcd, plan, prefix).await?)),
        None => Ok(None),
    }
}

/// Acknowledged puts per second of `plan.writers` concurrent writers spread round-robin over
/// `plan.etcd_connections` client connections, each writing [`payload`]-sized values under
/// `prefix` with the store benchmark's [`KeyMix`], for `plan.duration`.
async fn etcd_put_throughput(etcd: &Etcd, plan: &Plan, prefix: &str) -> Result<f64> {
    let mut clients = Vec::new();
    for _ in 0..plan.etcd_connections.clamp(1, plan.writers) {
        let client = Client::connect([etcd.endpoint()], &ConnectOptions::default())
            .await
            .context("connecting to etcd")?;
        clients.push(client);
    }
    let value = payload().into_bytes();
    let workers = (0..plan.writers)
        .map(|w| EtcdWriter {
            client: clients[w % clients.len()].clone(),
            prefix: format!("{prefix}/w{w}/"),
            mix: KeyMix::default(),
            value: value.clone(),
        })
        .collect();
    throughput(workers, plan.duration).await
}

/// One etcd writer: plain puts (etcd's fastest write), creates and updates as [`KeyMix`] says.
struct EtcdWriter {
    client: Client,
    prefix: String,
    mix: KeyMix,
    value: Vec<u8>,
}

impl Worker for EtcdWriter {
    async fn step(&mut self) -> Result<()> {
        let (Write::Create(n) | Write::Update(n)) = self.mix.next_write();
        self.client
            .put(format!("{}{n}", self.prefix), self.value.clone())
            .await?;
        Ok(())
    }
}
