//! Prometheus metrics: request counts and latencies by verb and resource, open watches and the
//! store revision, the families an engine's own controllers publish ([`Registry`]), and on the
//! hub the process's controller families ([`process`]), rendered in the text exposition format
//! on `/metrics`.

pub mod controller;
pub mod registry;

use registry::SECONDS;
pub use registry::{Desc, Observation, Registry};

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

#[derive(Debug, Default, Clone)]
struct Series {
    /// Request counts by HTTP code.
    codes: BTreeMap<u16, u64>,
    /// Cumulative bucket counts, one per [`SECONDS`] bound.
    buckets: Vec<u64>,
    sum: f64,
    total: u64,
}

/// The process's registry: what its controllers record (reconciles, work queues, fleet
/// gauges), as controller-runtime's global registry. The hub's `/metrics` includes it; a
/// simulated member's does not.
pub fn process() -> &'static Registry {
    static PROCESS: OnceLock<Registry> = OnceLock::new();
    PROCESS.get_or_init(Registry::default)
}

/// The engine's metrics registry.
#[derive(Debug, Default)]
pub struct Metrics {
    /// verb → resource → series. Looked up with borrowed keys: no allocation per request once
    /// a series exists.
    series: Mutex<BTreeMap<String, BTreeMap<String, Series>>>,
    watches: AtomicI64,
    /// Families this engine's own controllers publish (a simulated member's Karpenter).
    families: Registry,
    /// Whether `/metrics` includes the [`process`] registry (the hub's does).
    with_process: AtomicBool,
}

impl Metrics {
    /// Records one finished request.
    pub fn observe(&self, verb: &str, resource: &str, code: u16, elapsed: Duration) {
        let Ok(mut all) = self.series.lock() else {
            return;
        };
        let by_resource = match all.get_mut(verb) {
            Some(m) => m,
            None => all.entry(verb.to_string()).or_default(),
        };
        let series = match by_resource.get_mut(resource) {
            Some(s) => s,
            None => by_resource.entry(resource.to_string()).or_default(),
        };
        *series.codes.entry(code).or_default() += 1;
        if series.buckets.is_empty() {
            series.buckets = vec![0; SECONDS.len()];
        }
        let secs = elapsed.as_secs_f64();
        for (count, bound) in series.buckets.iter_mut().zip(SECONDS) {
            if secs <= *bound {
                *count += 1;
            }
        }
        series.sum += secs;
        series.total += 1;
    }

    /// A watch opened (+1) or closed (-1).
    pub fn watch_delta(&self, delta: i64) {
        self.watches.fetch_add(delta, Ordering::Relaxed);
    }

    /// Currently open watches.
    pub fn open_watches(&self) -> i64 {
        self.watches.load(Ordering::Relaxed)
    }

    /// The families this engine's own controllers publish.
    pub fn families(&self) -> &Registry {
        &self.families
    }

    /// Makes `/metrics` include the process's controller families (the hub's engine).
    pub fn include_process(&self) {
        self.with_process.store(true, Ordering::Relaxed);
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self, store_revision: i64, compacted_revision: i64) -> String {
        let mut out = String::new();
        let all = self.series.lock().map(|m| m.clone()).unwrap_or_default();
        out.push_str("# HELP apiserver_request_total Requests by verb, resource and HTTP code.\n");
        out.push_str("# TYPE apiserver_request_total counter\n");
        for (verb, by_resource) in &all {
            for (resource, s) in by_resource {
                for (code, n) in &s.codes {
                    let _ = writeln!(
                        out,
                        "apiserver_request_total{{verb=\"{verb}\",resource=\"{resource}\",code=\"{code}\"}} {n}"
                    );
                }
            }
        }
        out.push_str(
            "# HELP apiserver_request_duration_seconds Request latency by verb and resource.\n",
        );
        out.push_str("# TYPE apiserver_request_duration_seconds histogram\n");
        for (verb, by_resource) in &all {
            for (resource, s) in by_resource {
                let labels = format!("verb=\"{verb}\",resource=\"{resource}\"");
                for (b, c) in SECONDS.iter().zip(&s.buckets) {
                    let _ = writeln!(
                        out,
                        "apiserver_request_duration_seconds_bucket{{{labels},le=\"{b}\"}} {c}"
                    );
                }
                let _ = writeln!(
                    out,
                    "apiserver_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}",
                    s.total
                );
                let _ = writeln!(
                    out,
                    "apiserver_request_duration_seconds_sum{{{labels}}} {}",
                    s.sum
                );
                let _ = writeln!(
                    out,
                    "apiserver_request_duration_seconds_count{{{labels}}} {}",
                    s.total
                );
            }
        }
        out.push_str("# HELP apiserver_registered_watchers Open watch streams.\n# TYPE apiserver_registered_watchers gauge\n");
        let _ = writeln!(out, "apiserver_registered_watchers {}", self.open_watches());
        out.push_str("# HELP flotilla_store_revision Current store revision.\n# TYPE flotilla_store_revision gauge\n");
        let _ = writeln!(out, "flotilla_store_revision {store_revision}");
        out.push_str("# HELP flotilla_store_compacted_revision Store compaction revision.\n# TYPE flotilla_store_compacted_revision gauge\n");
        let _ = writeln!(
            out,
            "flotilla_store_compacted_revision {compacted_revision}"
        );
        self.families.render(&mut out);
        if self.with_process.load(Ordering::Relaxed) {
            process().render(&mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_histograms_and_gauges() {
        let m = Metrics::default();
        m.observe("GET", "configmaps", 200, Duration::from_millis(3));
        m.observe("GET", "configmaps", 200, Duration::from_millis(30));
        m.watch_delta(2);
        let text = m.render(7, 1);
        assert!(text.contains(
            "apiserver_request_total{verb=\"GET\",resource=\"configmaps\",code=\"200\"} 2"
        ));
        assert!(text.contains("apiserver_request_duration_seconds_bucket{verb=\"GET\",resource=\"configmaps\",le=\"0.005\"} 1"));
        assert!(text.contains(
            "apiserver_request_duration_seconds_count{verb=\"GET\",resource=\"configmaps\"} 2"
        ));
        assert!(text.contains("apiserver_registered_watchers 2"));
        assert!(text.contains("flotilla_store_revision 7"));
    }
}
