//! Prometheus metrics: request counts and latencies by verb and resource, open watches and the
//! store revision, rendered in the text exposition format on `/metrics`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

/// Latency histogram bucket bounds, in seconds.
const BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

#[derive(Debug, Default, Clone)]
struct Histogram {
    counts: Vec<u64>,
    sum: f64,
    total: u64,
}

/// The engine's metrics registry.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    latencies: Mutex<BTreeMap<(String, String), Histogram>>,
    watches: AtomicI64,
}

impl Metrics {
    /// Records one finished request.
    pub fn observe(&self, verb: &str, resource: &str, code: u16, elapsed: Duration) {
        if let Ok(mut m) = self.requests.lock() {
            *m.entry((verb.to_string(), resource.to_string(), code))
                .or_default() += 1;
        }
        if let Ok(mut m) = self.latencies.lock() {
            let h = m
                .entry((verb.to_string(), resource.to_string()))
                .or_default();
            if h.counts.is_empty() {
                h.counts = vec![0; BUCKETS.len()];
            }
            let secs = elapsed.as_secs_f64();
            for (i, b) in BUCKETS.iter().enumerate() {
                if secs <= *b {
                    h.counts[i] += 1;
                }
            }
            h.sum += secs;
            h.total += 1;
        }
    }

    /// A watch opened (+1) or closed (-1).
    pub fn watch_delta(&self, delta: i64) {
        self.watches.fetch_add(delta, Ordering::Relaxed);
    }

    /// Currently open watches.
    pub fn open_watches(&self) -> i64 {
        self.watches.load(Ordering::Relaxed)
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self, store_revision: i64, compacted_revision: i64) -> String {
        let mut out = String::new();
        out.push_str("# HELP apiserver_request_total Requests by verb, resource and HTTP code.\n");
        out.push_str("# TYPE apiserver_request_total counter\n");
        if let Ok(m) = self.requests.lock() {
            for ((verb, resource, code), n) in m.iter() {
                let _ = writeln!(
                    out,
                    "apiserver_request_total{{verb=\"{verb}\",resource=\"{resource}\",code=\"{code}\"}} {n}"
                );
            }
        }
        out.push_str(
            "# HELP apiserver_request_duration_seconds Request latency by verb and resource.\n",
        );
        out.push_str("# TYPE apiserver_request_duration_seconds histogram\n");
        if let Ok(m) = self.latencies.lock() {
            for ((verb, resource), h) in m.iter() {
                let labels = format!("verb=\"{verb}\",resource=\"{resource}\"");
                for (b, c) in BUCKETS.iter().zip(&h.counts) {
                    let _ = writeln!(
                        out,
                        "apiserver_request_duration_seconds_bucket{{{labels},le=\"{b}\"}} {c}"
                    );
                }
                let _ = writeln!(
                    out,
                    "apiserver_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}",
                    h.total
                );
                let _ = writeln!(
                    out,
                    "apiserver_request_duration_seconds_sum{{{labels}}} {}",
                    h.sum
                );
                let _ = writeln!(
                    out,
                    "apiserver_request_duration_seconds_count{{{labels}}} {}",
                    h.total
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
