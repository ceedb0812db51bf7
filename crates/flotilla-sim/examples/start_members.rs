//! Starts many simulated members (default 1,000, three nodes each) in one process and reports
//! how long that took and the resident memory before and after:
//!
//! ```text
//! cargo run --release -p flotilla-sim --example start_members -- 1000
//! ```

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use flotilla_sim::cluster::{SimCluster, SimOptions};
use flotilla_sim::fleet::{MemberSpec, NodePoolSpec};

/// Resident memory of this process in MiB, from `/proc/self/status` (0 where unavailable).
fn resident_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kib| kib.parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / 1024.0)
}

/// CPU time (user + system) this process has used, from `/proc/self/stat` (zero where
/// unavailable; assumes the usual 100 ticks per second).
fn cpu_time() -> Duration {
    let ticks = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // After the command name: state, ppid, ..., utime (12th), stime (13th).
            let fields: Vec<&str> = s.rsplit(')').next()?.split_whitespace().collect();
            let field = |i: usize| fields.get(i)?.parse::<u64>().ok();
            Some(field(11)? + field(12)?)
        })
        .unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

fn member(i: usize) -> MemberSpec {
    let regions = ["eastus", "westeurope", "japaneast"];
    MemberSpec {
        name: format!("member-{i:05}"),
        region: regions[i % regions.len()].into(),
        labels: BTreeMap::new(),
        kubernetes_version: "1.30.3".into(),
        node_pools: vec![NodePoolSpec {
            name: "system".into(),
            instance_type: "Standard_D4s_v5".into(),
            count: 3,
            node_image_version: "AKSUbuntu-2204gen2containerd-202501.12.0".into(),
        }],
        properties: BTreeMap::new(),
        maintenance_windows: vec![],
        stopped: false,
        upgrade: None,
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let count: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(1000);
    let before = resident_mib();
    let started = Instant::now();
    let kinds = SimCluster::member_kinds();
    let kinds_took = started.elapsed();
    let mut members = Vec::with_capacity(count);
    for i in 0..count {
        members.push(SimCluster::start(&member(i), SimOptions::default(), &kinds).await?);
    }
    let took = started.elapsed();
    let after_start = resident_mib();
    // Let every member's machinery finish its first pass.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let settled = resident_mib();
    let (cpu_before, idle_from) = (cpu_time(), Instant::now());
    tokio::time::sleep(Duration::from_secs(10)).await;
    let idle_cpu = (cpu_time() - cpu_before).as_secs_f64() / idle_from.elapsed().as_secs_f64();
    let nodes: usize = members
        .iter()
        .map(|m| {
            m.spec()
                .node_pools
                .iter()
                .map(|p| p.count as usize)
                .sum::<usize>()
        })
        .sum();
    println!("members:          {count} ({nodes} nodes)");
    println!("member kinds:     {:.2} s", kinds_took.as_secs_f64());
    println!(
        "start (total):    {:.2} s ({:.2} ms per member)",
        took.as_secs_f64(),
        took.as_secs_f64() * 1000.0 / count as f64
    );
    println!("resident before:  {before:.0} MiB");
    println!("resident started: {after_start:.0} MiB");
    println!(
        "resident settled: {settled:.0} MiB ({:.1} KiB per member)",
        (settled - before) * 1024.0 / count as f64
    );
    println!("idle CPU:         {:.0}% of one core", idle_cpu * 100.0);
    Ok(())
}
