//! Measurement helpers: closed-loop throughput of concurrent writers, the write mix they
//! follow, the value they write, and medians.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::{Duration, Instant};

use anyhow::Result;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;

/// Bytes in every written value (store and etcd) and in every ConfigMap's data.
pub const VALUE_SIZE: usize = 1024;

/// The value every benchmark writes: [`VALUE_SIZE`] printable bytes.
pub fn payload() -> String {
    "v".repeat(VALUE_SIZE)
}

/// The ConfigMap the API benchmarks write: [`payload`] under one key.
pub fn config_map(name: String, payload: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("payload".to_owned(), payload.to_owned())])),
        ..ConfigMap::default()
    }
}

/// One concurrent client of a throughput measurement.
pub trait Worker: Send + 'static {
    /// Performs one operation and waits for its acknowledgement.
    fn step(&mut self) -> impl Future<Output = Result<()>> + Send;
}

/// Acknowledged operations per second of `workers`, each running its operations back to back
/// (a closed loop) until `duration` has passed. Operations in flight at the deadline complete
/// and count; the rate divides by the time until the last one finished.
pub async fn throughput<W: Worker>(workers: Vec<W>, duration: Duration) -> Result<f64> {
    let start = Instant::now();
    let deadline = start + duration;
    let tasks: Vec<_> = workers
        .into_iter()
        .map(|mut worker| {
            tokio::spawn(async move {
                let mut ops = 0u64;
                while Instant::now() < deadline {
                    worker.step().await?;
                    ops += 1;
                }
                anyhow::Ok(ops)
            })
        })
        .collect();
    let mut ops = 0u64;
    for task in tasks {
        ops += task.await??;
    }
    Ok(ops as f64 / start.elapsed().as_secs_f64())
}

/// What a writer does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    /// Create the writer's key number `n` (the next unused one).
    Create(usize),
    /// Update the writer's existing key number `n`.
    Update(usize),
}

/// The write mix of one writer over its own keys: a create, then three updates of random
/// earlier keys, and so on — updates dominate a cluster's writes (status, spec, leases), and
/// creates keep the key space growing. Writers never share keys, so no write conflicts.
#[derive(Debug, Clone, Default)]
pub struct KeyMix {
    writes: usize,
    created: usize,
}

impl KeyMix {
    /// The next write.
    pub fn next_write(&mut self) -> Write {
        let write = if self.writes.is_multiple_of(4) {
            self.created += 1;
            Write::Create(self.created - 1)
        } else {
            Write::Update(rand::random_range(0..self.created))
        };
        self.writes += 1;
        write
    }
}

/// The median (mean of the middle two for an even count); NaN for no samples.
pub fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    let n = samples.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => samples[n / 2],
        _ => (samples[n / 2 - 1] + samples[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_creates_one_key_in_four_and_updates_only_existing_keys() {
        let mut mix = KeyMix::default();
        let writes: Vec<Write> = (0..400).map(|_| mix.next_write()).collect();
        let mut created = 0;
        for w in writes {
            match w {
                Write::Create(n) => {
                    assert_eq!(n, created);
                    created += 1;
                }
                Write::Update(n) => assert!(n < created),
            }
        }
        assert_eq!(created, 100);
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(Vec::new()).is_nan());
    }
}
