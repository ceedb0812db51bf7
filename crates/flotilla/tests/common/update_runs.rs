//! Cluster update runs seen from the outside: the six-member update fleet, the run's status
//! levels, and the `flotilla` command line.

use std::process::{Command, Output};

use serde_json::Value;

use super::{HubProcess, eventually, examples_dir, get_json};

/// `flotilla up` on `examples/fleets/cluster-updates.yaml` (six members in three regions and
/// four update groups, with its own release catalog), its clock `speed` times real time, once
/// every member reports its versions.
pub fn update_fleet(speed: &str) -> HubProcess {
    let fleet = examples_dir().join("fleets/cluster-updates.yaml");
    let hub = HubProcess::start_with(&["--fleet", fleet.to_str().unwrap(), "--clock-speed", speed]);
    eventually("6 members report their versions", 90, || {
        let list = get_json(&hub, &["memberclusters"]);
        let reported = list["items"]
            .as_array()?
            .iter()
            .filter(|m| m["status"]["versions"]["kubernetesVersion"].is_string())
            .count();
        (reported == 6).then_some(())
    });
    hub
}

/// `flotilla ARGS --kubeconfig <the hub's>`, run to completion.
pub fn flotilla(hub: &HubProcess, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(args)
        .arg("--kubeconfig")
        .arg(hub.kubeconfig())
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run flotilla")
}

/// Runs flotilla expecting success; returns stdout.
pub fn flotilla_ok(hub: &HubProcess, args: &[&str]) -> String {
    let out = flotilla(hub, args);
    assert!(
        out.status.success(),
        "flotilla {args:?} failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs flotilla expecting failure; returns stderr.
pub fn flotilla_err(hub: &HubProcess, args: &[&str]) -> String {
    let out = flotilla(hub, args);
    assert!(
        !out.status.success(),
        "flotilla {args:?} unexpectedly succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The run `name` as JSON.
pub fn run(hub: &HubProcess, name: &str) -> Value {
    get_json(hub, &["updaterun", name])
}

/// Waits up to `secs` for run `name` to reach `state`; returns the run.
pub fn wait_state(hub: &HubProcess, name: &str, state: &str, secs: u64) -> Value {
    eventually(&format!("run {name} {state}"), secs, || {
        let run = run(hub, name);
        (run["status"]["state"] == state).then_some(run)
    })
}

/// The status of stage `name` of a run.
pub fn stage<'v>(run: &'v Value, name: &str) -> &'v Value {
    run["status"]["stages"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == name))
        .unwrap_or_else(|| panic!("no stage {name}: {run}"))
}

/// Every group status of a run.
pub fn groups(run: &Value) -> impl Iterator<Item = &Value> {
    run["status"]["stages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["groups"].as_array().into_iter().flatten())
}

/// The status of group `name` of a run.
pub fn group<'v>(run: &'v Value, name: &str) -> &'v Value {
    groups(run)
        .find(|g| g["name"] == name)
        .unwrap_or_else(|| panic!("no group {name}: {run}"))
}

/// The status of member `name` of a run.
pub fn member<'v>(run: &'v Value, name: &str) -> &'v Value {
    groups(run)
        .flat_map(|g| g["members"].as_array().into_iter().flatten())
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in the run: {run}"))
}

/// The hub's time now (simulated under `--clock-speed`), from its `/clock` endpoint.
pub fn hub_now(hub: &HubProcess) -> jiff::Timestamp {
    let clock: Value = serde_json::from_str(&hub.kubectl_ok(&["get", "--raw", "/clock"]))
        .expect("/clock answers JSON");
    clock["now"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("/clock answered {clock}"))
}
