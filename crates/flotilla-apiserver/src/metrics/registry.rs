//! A registry of labelled metric families (counters, gauges, histograms) and their Prometheus
//! text exposition. Families are declared once as [`Desc`] constants (name, help, type, label
//! names), so every place that records a family agrees on its shape, and the README's list can
//! be checked against the code.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

/// Bucket bounds, in seconds, for durations from a millisecond to a minute (controller-runtime's
/// reconcile-time and work-queue buckets span the same range).
pub const SECONDS: &[f64] = &[
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// Bucket bounds, in seconds, for durations from seconds to hours (node provisioning, cluster
/// upgrades).
pub const LONG_SECONDS: &[f64] = &[
    1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0, 1800.0, 3600.0, 7200.0, 14400.0,
];

/// What kind of family a [`Desc`] declares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Type {
    /// Only increases (until the process restarts).
    Counter,
    /// Goes up and down; usually replaced whole from the current state.
    Gauge,
    /// Observations counted into the given bucket bounds (seconds).
    Histogram(&'static [f64]),
}

/// A metric family's declaration.
#[derive(Debug, PartialEq)]
pub struct Desc {
    /// The exposed name.
    pub name: &'static str,
    /// The `# HELP` text.
    pub help: &'static str,
    /// Counter, gauge or histogram.
    pub kind: Type,
    /// Label names, in the order values are given.
    pub labels: &'static [&'static str],
}

impl Desc {
    /// A counter family.
    pub const fn counter(
        name: &'static str,
        help: &'static str,
        labels: &'static [&'static str],
    ) -> Self {
        Self {
            name,
            help,
            kind: Type::Counter,
            labels,
        }
    }

    /// A gauge family.
    pub const fn gauge(
        name: &'static str,
        help: &'static str,
        labels: &'static [&'static str],
    ) -> Self {
        Self {
            name,
            help,
            kind: Type::Gauge,
            labels,
        }
    }

    /// A histogram family with `buckets` (seconds).
    pub const fn histogram(
        name: &'static str,
        help: &'static str,
        labels: &'static [&'static str],
        buckets: &'static [f64],
    ) -> Self {
        Self {
            name,
            help,
            kind: Type::Histogram(buckets),
            labels,
        }
    }
}

/// One recorded change, as plain data: pure decision code returns these and the shell records
/// them ([`Registry::record`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// The family (a counter or a histogram).
    pub desc: &'static Desc,
    /// Label values, in the family's label order.
    pub labels: Vec<String>,
    /// The amount added (counter) or the value observed (histogram).
    pub value: f64,
}

/// The value of one series.
#[derive(Debug, Clone)]
enum Value {
    Scalar(f64),
    Histogram {
        /// Cumulative counts, one per bucket bound.
        buckets: Vec<u64>,
        sum: f64,
        count: u64,
    },
}

#[derive(Debug)]
struct Family {
    desc: &'static Desc,
    series: BTreeMap<Vec<String>, Value>,
}

/// Metric families by name.
#[derive(Debug, Default)]
pub struct Registry {
    families: Mutex<BTreeMap<&'static str, Family>>,
}

impl Registry {
    /// Runs `f` on `desc`'s family, declaring it on first use.
    fn with<T>(&self, desc: &'static Desc, f: impl FnOnce(&mut Family) -> T) -> Option<T> {
        let mut families = self.families.lock().ok()?;
        let family = families.entry(desc.name).or_insert_with(|| Family {
            desc,
            series: BTreeMap::new(),
        });
        Some(f(family))
    }

    /// Declares `desc`, so it is exposed (with its help and type) before its first sample.
    pub fn describe(&self, desc: &'static Desc) {
        self.with(desc, |_| ());
    }

    /// Adds `value` to the counter (or sets the gauge) `desc` at `labels`.
    fn scalar(&self, desc: &'static Desc, labels: &[&str], f: impl FnOnce(&mut f64)) {
        self.with(desc, |family| {
            let key: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
            let value = family.series.entry(key).or_insert(Value::Scalar(0.0));
            if let Value::Scalar(v) = value {
                f(v);
            }
        });
    }

    /// Adds `amount` to the counter `desc` at `labels`.
    pub fn add(&self, desc: &'static Desc, labels: &[&str], amount: f64) {
        self.scalar(desc, labels, |v| *v += amount);
    }

    /// Adds one to the counter `desc` at `labels`.
    pub fn inc(&self, desc: &'static Desc, labels: &[&str]) {
        self.add(desc, labels, 1.0);
    }

    /// Sets the gauge `desc` at `labels`.
    pub fn set(&self, desc: &'static Desc, labels: &[&str], value: f64) {
        self.scalar(desc, labels, |v| *v = value);
    }

    /// Replaces every series of the gauge `desc` (published from the current state, so the
    /// series of objects that are gone disappear).
    pub fn replace(
        &self,
        desc: &'static Desc,
        samples: impl IntoIterator<Item = (Vec<String>, f64)>,
    ) {
        self.with(desc, |family| {
            family.series = samples
                .into_iter()
                .map(|(labels, v)| (labels, Value::Scalar(v)))
                .collect();
        });
    }

    /// Observes `value` (seconds) in the histogram `desc` at `labels`.
    pub fn observe(&self, desc: &'static Desc, labels: &[&str], value: f64) {
        let Type::Histogram(bounds) = desc.kind else {
            return;
        };
        self.with(desc, |family| {
            let key: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
            let series = family.series.entry(key).or_insert(Value::Histogram {
                buckets: vec![0; bounds.len()],
                sum: 0.0,
                count: 0,
            });
            if let Value::Histogram {
                buckets,
                sum,
                count,
            } = series
            {
                for (n, bound) in buckets.iter_mut().zip(bounds) {
                    if value <= *bound {
                        *n += 1;
                    }
                }
                *sum += value;
                *count += 1;
            }
        });
    }

    /// Records what pure code decided: a counter increment or a histogram observation.
    pub fn record(&self, observation: &Observation) {
        let labels: Vec<&str> = observation.labels.iter().map(String::as_str).collect();
        match observation.desc.kind {
            Type::Histogram(_) => self.observe(observation.desc, &labels, observation.value),
            Type::Counter | Type::Gauge => self.add(observation.desc, &labels, observation.value),
        }
    }

    /// The current value of a counter or gauge series (tests and gauges computed from others).
    pub fn value(&self, desc: &'static Desc, labels: &[&str]) -> Option<f64> {
        let families = self.families.lock().ok()?;
        let key: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
        match families.get(desc.name)?.series.get(&key)? {
            Value::Scalar(v) => Some(*v),
            Value::Histogram { count, .. } => Some(*count as f64),
        }
    }

    /// Appends the text exposition of every family to `out`.
    pub fn render(&self, out: &mut String) {
        let Ok(families) = self.families.lock() else {
            return;
        };
        for family in families.values() {
            let desc = family.desc;
            let kind = match desc.kind {
                Type::Counter => "counter",
                Type::Gauge => "gauge",
                Type::Histogram(_) => "histogram",
            };
            let _ = writeln!(out, "# HELP {} {}", desc.name, desc.help);
            let _ = writeln!(out, "# TYPE {} {kind}", desc.name);
            for (values, value) in &family.series {
                let labels = label_text(desc.labels, values);
                match (value, desc.kind) {
                    (Value::Scalar(v), _) => {
                        let _ = writeln!(out, "{}{} {v}", desc.name, braced(&labels));
                    }
                    (
                        Value::Histogram {
                            buckets,
                            sum,
                            count,
                        },
                        Type::Histogram(bounds),
                    ) => {
                        let sep = if labels.is_empty() { "" } else { "," };
                        for (n, bound) in buckets.iter().zip(bounds) {
                            let _ = writeln!(
                                out,
                                "{}_bucket{{{labels}{sep}le=\"{bound}\"}} {n}",
                                desc.name
                            );
                        }
                        let _ = writeln!(
                            out,
                            "{}_bucket{{{labels}{sep}le=\"+Inf\"}} {count}",
                            desc.name
                        );
                        let _ = writeln!(out, "{}_sum{} {sum}", desc.name, braced(&labels));
                        let _ = writeln!(out, "{}_count{} {count}", desc.name, braced(&labels));
                    }
                    (Value::Histogram { .. }, _) => {}
                }
            }
        }
    }
}

/// Gauge samples counting how often each label tuple occurs in `keys` (objects by state).
pub fn counted(keys: impl IntoIterator<Item = Vec<String>>) -> Vec<(Vec<String>, f64)> {
    let mut counts: BTreeMap<Vec<String>, f64> = BTreeMap::new();
    for key in keys {
        *counts.entry(key).or_default() += 1.0;
    }
    counts.into_iter().collect()
}

/// `k="v",…` for the label names and values, values escaped as the exposition format says.
pub fn label_text(names: &[&str], values: &[String]) -> String {
    names
        .iter()
        .zip(values)
        .map(|(k, v)| {
            let v = v
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\n', "\\n");
            format!("{k}=\"{v}\"")
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `{labels}`, or nothing when there are none.
fn braced(labels: &str) -> String {
    if labels.is_empty() {
        String::new()
    } else {
        format!("{{{labels}}}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECONCILES: Desc = Desc::counter(
        "test_reconcile_total",
        "Reconciles.",
        &["controller", "result"],
    );
    const DEPTH: Desc = Desc::gauge("test_depth", "Depth.", &["name"]);
    const TIME: Desc = Desc::histogram("test_time_seconds", "Time.", &["controller"], &[0.1, 1.0]);
    const EMPTY: Desc = Desc::gauge("test_empty", "Declared, no samples.", &[]);

    #[test]
    fn counters_gauges_and_histograms_render_in_the_exposition_format() {
        let r = Registry::default();
        r.inc(&RECONCILES, &["placement", "success"]);
        r.add(&RECONCILES, &["placement", "success"], 2.0);
        r.set(&DEPTH, &["a\"b"], 4.0);
        r.observe(&TIME, &["placement"], 0.05);
        r.observe(&TIME, &["placement"], 0.5);
        r.record(&Observation {
            desc: &TIME,
            labels: vec!["placement".into()],
            value: 5.0,
        });
        r.describe(&EMPTY);
        let mut text = String::new();
        r.render(&mut text);
        for line in [
            "# TYPE test_reconcile_total counter",
            "test_reconcile_total{controller=\"placement\",result=\"success\"} 3",
            "test_depth{name=\"a\\\"b\"} 4",
            "# TYPE test_time_seconds histogram",
            "test_time_seconds_bucket{controller=\"placement\",le=\"0.1\"} 1",
            "test_time_seconds_bucket{controller=\"placement\",le=\"1\"} 2",
            "test_time_seconds_bucket{controller=\"placement\",le=\"+Inf\"} 3",
            "test_time_seconds_sum{controller=\"placement\"} 5.55",
            "test_time_seconds_count{controller=\"placement\"} 3",
            "# TYPE test_empty gauge",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
        assert_eq!(r.value(&RECONCILES, &["placement", "success"]), Some(3.0));
    }

    #[test]
    fn replacing_a_gauge_drops_series_that_are_gone() {
        let r = Registry::default();
        r.replace(&DEPTH, [(vec!["a".into()], 1.0), (vec!["b".into()], 2.0)]);
        r.replace(&DEPTH, [(vec!["b".into()], 3.0)]);
        assert_eq!(r.value(&DEPTH, &["a"]), None);
        assert_eq!(r.value(&DEPTH, &["b"]), Some(3.0));
    }
}
