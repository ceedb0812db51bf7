//! `flotilla bench`: the performance figures of the embedded store and the hub API server,
//! measured against etcd side by side when etcd is installed (absolute figures otherwise).
//!
//! Every figure is measured in several runs and the median is reported, in a table that also
//! shows etcd's figure from the same runs, the ratio, the target and whether it was reached.
//! Missed targets are reported, not treated as errors: only setup failures end with an error.

mod api;
mod etcd;
mod fanout;
mod https;
mod kube_peer;
mod measure;
mod store;
mod table;
mod watch;

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};

use etcd::Etcd;
use table::{Report, Row, median_rows};

/// What to measure.
#[derive(Debug, Clone, Subcommand)]
pub enum BenchCommand {
    /// Durable writes/s of the embedded SQLite store against etcd's put throughput.
    Store(BenchArgs),
    /// HTTPS creates/s against etcd's put throughput, listing 10,000 objects, watch fan-out.
    Api(BenchArgs),
}

/// Options of every benchmark.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Concurrent writers (clients).
    #[arg(long, default_value_t = 64)]
    pub writers: usize,
    /// Seconds per throughput measurement [default: 5, or 0.2 with --quick].
    #[arg(long)]
    pub seconds: Option<f64>,
    /// Runs; the median of each figure is reported [default: 3, or 1 with --quick].
    #[arg(long)]
    pub runs: Option<usize>,
    /// Smoke test (CI): short measurements, small list and watcher counts.
    #[arg(long)]
    pub quick: bool,
    /// Do not run etcd side by side even if it is installed.
    #[arg(long)]
    pub no_etcd: bool,
    /// `bench api`: do not run the real kube-apiserver side by side (it runs on the same etcd
    /// when etcd runs, built by `tools/peers/build` on first use).
    #[arg(long)]
    pub no_kube: bool,
    /// The store behind the benchmarked hub (`api` only): the embedded SQLite store, or the
    /// etcd run side by side (the hub's keys under their own prefix).
    #[arg(long, value_enum, default_value_t = HubStore::Sqlite)]
    pub hub_store: HubStore,
    /// Client connections the etcd writers are spread over (gRPC multiplexes them; on the
    /// reference machine one connection gave etcd its best throughput).
    #[arg(long, default_value_t = 1)]
    pub etcd_connections: usize,
}

/// Which store the benchmarked hub runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HubStore {
    /// The embedded, durable SQLite store (`flotilla up`'s).
    Sqlite,
    /// The side-by-side etcd (`flotilla hub --store etcd:…`'s).
    Etcd,
}

/// The parameters of a benchmark, resolved from [`BenchArgs`].
#[derive(Debug, Clone)]
pub struct Plan {
    /// Concurrent writers.
    pub writers: usize,
    /// Length of each throughput measurement.
    pub duration: Duration,
    /// Runs to take the median of.
    pub runs: usize,
    /// Whether to run etcd side by side (if installed).
    pub etcd: bool,
    /// Client connections to etcd.
    pub etcd_connections: usize,
    /// ConfigMaps in the listed namespace.
    pub list_objects: usize,
    /// Lists measured per run.
    pub lists: usize,
    /// The two idle-watcher counts whose watch latencies are compared.
    pub idle_watchers: [usize; 2],
    /// Writes measured per watcher count.
    pub watch_writes: usize,
}

impl Plan {
    /// Resolves and checks the options.
    pub fn new(args: &BenchArgs) -> Result<Plan> {
        let seconds = args.seconds.unwrap_or(if args.quick { 0.2 } else { 5.0 });
        if !(seconds > 0.0 && seconds.is_finite()) {
            bail!("--seconds must be a positive number");
        }
        if args.writers == 0 || args.runs == Some(0) || args.etcd_connections == 0 {
            bail!("--writers, --runs and --etcd-connections must be at least 1");
        }
        Ok(Plan {
            writers: args.writers,
            duration: Duration::from_secs_f64(seconds),
            runs: args.runs.unwrap_or(if args.quick { 1 } else { 3 }),
            etcd: !args.no_etcd,
            etcd_connections: args.etcd_connections,
            list_objects: if args.quick { 200 } else { 10_000 },
            lists: 10,
            idle_watchers: if args.quick { [10, 100] } else { [10, 1_000] },
            watch_writes: if args.quick { 10 } else { 200 },
        })
    }
}

/// Runs a benchmark and prints its report.
pub async fn run(what: BenchCommand) -> Result<()> {
    let report = measure(&what).await?;
    println!("\n{report}");
    Ok(())
}

/// Runs a benchmark: starts etcd if wanted and installed, measures every run (printing
/// progress), and reduces the runs to their medians.
async fn measure(what: &BenchCommand) -> Result<Report> {
    let (name, args) = match what {
        BenchCommand::Store(args) => ("store", args),
        BenchCommand::Api(args) => ("api", args),
    };
    let plan = Plan::new(args)?;
    let etcd = match (plan.etcd, etcd::locate()) {
        (false, _) => {
            println!("etcd: not run (--no-etcd); absolute figures only");
            None
        }
        (true, None) => {
            println!("etcd: not installed (no `etcd` on PATH); absolute figures only");
            None
        }
        (true, Some(binary)) => {
            let etcd = Etcd::start(&binary).await?;
            println!("etcd: {}", etcd.describe());
            Some(etcd)
        }
    };
    let dir = tempfile::Builder::new()
        .prefix("flotilla-bench-")
        .tempdir()?;
    println!("flotilla data in {}", dir.path().display());
    let hub = match what {
        BenchCommand::Store(_) => None,
        BenchCommand::Api(args) => {
            let store: flotilla_store::SharedStorage = match (args.hub_store, &etcd) {
                (HubStore::Sqlite, _) => Arc::new(store::open(dir.path().join("store.db")).await?),
                (HubStore::Etcd, Some(etcd)) => {
                    let options = flotilla_store::EtcdOptions {
                        prefix: "/bench-hub/".into(),
                        ..flotilla_store::EtcdOptions::new([etcd.endpoint()])
                    };
                    Arc::new(
                        flotilla_store::EtcdStore::connect(options)
                            .await
                            .map_err(|e| anyhow::anyhow!("connecting the hub to etcd: {e}"))?,
                    )
                }
                (HubStore::Etcd, None) => {
                    bail!("--hub-store etcd needs etcd (installed, without --no-etcd)")
                }
            };
            let hub = api::prepare(&plan, dir.path(), store).await?;
            println!(
                "hub: serving HTTPS on {} over {:?}, {} ConfigMaps to list",
                hub.address(),
                args.hub_store,
                plan.list_objects
            );
            Some(hub)
        }
    };
    let peer = match (what, &etcd) {
        (BenchCommand::Api(args), Some(etcd)) if !args.no_kube => {
            let peer = api::prepare_peer(&plan, &dir.path().join("kube"), etcd.endpoint()).await?;
            println!(
                "kube-apiserver: serving HTTPS on {} over the same etcd, {} ConfigMaps to list",
                peer.kube.address(),
                plan.list_objects
            );
            Some(peer)
        }
        (BenchCommand::Api(_), _) => {
            println!("kube-apiserver: not run (needs etcd; --no-kube skips it)");
            None
        }
        _ => None,
    };
    let mut runs = Vec::with_capacity(plan.runs);
    for run in 1..=plan.runs {
        let rows = match &hub {
            None => store::run_once(&plan, run, dir.path(), etcd.as_ref()).await?,
            Some(hub) => api::run_once(&plan, run, hub, etcd.as_ref(), peer.as_ref()).await?,
        };
        let summary: Vec<String> = rows.iter().map(Row::summary).collect();
        println!("run {run}/{}: {}", plan.runs, summary.join(", "));
        runs.push(rows);
    }
    let title = format!(
        "flotilla bench {name}: {} writers, {:.1} s per throughput measurement, median of {} run(s)",
        plan.writers,
        plan.duration.as_secs_f64(),
        plan.runs
    );
    Ok(Report {
        title,
        rows: median_rows(&runs),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick() -> BenchArgs {
        BenchArgs {
            writers: 4,
            seconds: None,
            runs: None,
            quick: true,
            no_etcd: true,
            no_kube: true,
            etcd_connections: 1,
            hub_store: HubStore::Sqlite,
        }
    }

    fn assert_measured(report: &Report, figures: usize) {
        assert_eq!(report.rows.len(), figures, "{report}");
        for row in &report.rows {
            // A share (%) of two noisy latencies may come out at or below zero.
            let positive = row.value > 0.0 || row.unit == "%";
            assert!(row.value.is_finite() && positive, "{report}");
            assert_eq!(row.etcd, None, "{report}");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn store_bench_runs_quick() {
        let report = measure(&BenchCommand::Store(quick()))
            .await
            .expect("bench store");
        assert_measured(&report, 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn api_bench_runs_quick() {
        let report = measure(&BenchCommand::Api(quick()))
            .await
            .expect("bench api");
        assert_measured(&report, 16);
        for watchers in [10, 100] {
            let fanout = format!("create → ADDED at all {watchers} watchers");
            assert!(
                report.rows.iter().any(|r| r.figure.contains(&fanout)),
                "no fan-out row for {watchers} watchers: {report}"
            );
        }
    }

    #[test]
    fn plan_rejects_nonsense() {
        assert!(
            Plan::new(&BenchArgs {
                seconds: Some(0.0),
                ..quick()
            })
            .is_err()
        );
        assert!(
            Plan::new(&BenchArgs {
                writers: 0,
                ..quick()
            })
            .is_err()
        );
        let plan = Plan::new(&BenchArgs {
            quick: false,
            ..quick()
        })
        .expect("plan");
        assert_eq!(
            (plan.runs, plan.list_objects, plan.idle_watchers),
            (3, 10_000, [10, 1_000])
        );
    }
}
