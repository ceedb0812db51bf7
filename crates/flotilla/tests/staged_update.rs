//! Seed 004's staged update run end to end with the real kubectl, on
//! `examples/fleets/staged-rollout.yaml` (five members labelled
//! `environment=staging|canary|production` with `name`/`order` sorting labels) at 240 times
//! real time: the seed's placement, strategy and run are applied unchanged; stages run in
//! order, clusters within a stage in sorted order, the hour's TimedWait passes on the
//! simulated clock, the canary approval request appears and the seed's own patch command
//! approves it, production follows, and the run ends Succeeded with the seed's status layout.
//! Then the ways a run stops or fails, each explained in its status.

mod common;

use std::process::{Command, Stdio};

use common::{HubProcess, eventually, examples_dir, get_json, member_kubeconfig, on_member};
use serde_json::Value;

/// The simulated clock's speed: the one-hour wait takes 15 s.
const SPEED: &str = "240";

fn staged_fleet() -> HubProcess {
    let fleet = examples_dir().join("fleets/staged-rollout.yaml");
    let hub = HubProcess::start_with(&[
        "--fleet",
        fleet.to_str().unwrap(),
        "--readiness-delay",
        "1",
        "--clock-speed",
        SPEED,
    ]);
    eventually("5 members joined", 90, || {
        let list = get_json(&hub, &["memberclusters"]);
        let joined = list["items"]
            .as_array()?
            .iter()
            .filter(|m| condition(m, "Joined").is_some_and(|c| c["status"] == "True"))
            .count();
        (joined == 5).then_some(())
    });
    hub
}

fn apply_example(hub: &HubProcess, name: &str) {
    let path = examples_dir().join(name);
    hub.kubectl_ok(&["apply", "-f", path.to_str().unwrap()]);
}

fn condition<'v>(object: &'v Value, type_: &str) -> Option<&'v Value> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

fn conditions_of<'v>(object: &'v Value, type_: &str) -> Option<&'v Value> {
    object["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// The transition time (simulated clock) of condition `type_` of `cluster` in `stage`.
fn cluster_time(run: &Value, stage: &str, cluster: &str, type_: &str) -> Option<jiff::Timestamp> {
    let stage = run["status"]["stagesStatus"]
        .as_array()?
        .iter()
        .find(|s| s["stageName"] == stage)?;
    let entry = stage["clusters"]
        .as_array()?
        .iter()
        .find(|c| c["clusterName"] == cluster)?;
    conditions_of(entry, type_)?["lastTransitionTime"]
        .as_str()?
        .parse()
        .ok()
}

fn run_json(hub: &HubProcess, name: &str) -> Value {
    get_json(hub, &["clusterstagedupdaterun", name])
}

fn wait_run_condition(hub: &HubProcess, name: &str, type_: &str, status: &str, secs: u64) -> Value {
    eventually(&format!("{name} {type_}={status}"), secs, || {
        let run = run_json(hub, name);
        condition(&run, type_)
            .is_some_and(|c| c["status"] == status)
            .then_some(run)
    })
}

#[test]
fn the_seed_scenario_runs_stage_by_stage_with_its_wait_and_approval() {
    let hub = staged_fleet();
    hub.kubectl_ok(&["create", "namespace", "test-namespace"]);
    for file in [
        "crp-staged-update.yaml",
        "staged-update-strategy.yaml",
        "staged-update-run.yaml",
    ] {
        apply_example(&hub, file);
    }
    let run = wait_run_condition(&hub, "example-staged-update-run", "Initialized", "True", 60);
    let status = &run["status"];
    assert_eq!(status["policySnapshotIndexUsed"], "0");
    assert_eq!(status["resourceSnapshotIndexUsed"], "0");
    assert_eq!(status["policyObservedClusterCount"], 5);
    assert_eq!(
        status["stagedUpdateStrategySnapshot"]["stages"][0]["afterStageTasks"][0]["waitTime"],
        "1h0m0s"
    );
    assert_eq!(
        status["deletionStageStatus"]["stageName"],
        "kubernetes-fleet.io/deleteStage"
    );
    let order: Vec<Vec<&str>> = status["stagesStatus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s["clusters"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["clusterName"].as_str().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(
        order,
        [
            vec!["member-cluster-02"],
            vec!["member-cluster-01", "member-cluster-03"],
            vec!["member-cluster-05", "member-cluster-04"],
        ]
    );
    let table = hub.kubectl_ok(&["get", "clusterstagedupdaterun", "example-staged-update-run"]);
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        row[..5],
        [
            "example-staged-update-run",
            "crp-staged-update-sample",
            "0",
            "0",
            "True"
        ],
        "{table}"
    );

    // The canary stage finishes, then waits for its approval; production has not started.
    let request = "example-staged-update-run-after-canary";
    eventually("the canary approval request", 120, || {
        let out = hub.kubectl(&["get", "clusterapprovalrequest", request]);
        out.status.success().then_some(())
    });
    let listing = hub.kubectl_ok(&["get", "clusterapprovalrequest"]);
    let header: Vec<&str> = listing.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "NAME",
            "UPDATE-RUN",
            "STAGE",
            "APPROVED",
            "APPROVALACCEPTED",
            "AGE"
        ]
    );
    let row: Vec<&str> = listing.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        row[..3],
        [request, "example-staged-update-run", "canary"],
        "{listing}"
    );
    let run = wait_run_condition(
        &hub,
        "example-staged-update-run",
        "Progressing",
        "False",
        30,
    );
    assert_eq!(
        condition(&run, "Progressing").unwrap()["reason"],
        "UpdateRunWaiting"
    );
    for cluster in ["member-cluster-05", "member-cluster-04"] {
        assert!(
            cluster_time(&run, "production", cluster, "Started").is_none(),
            "{cluster} started before the approval"
        );
    }

    // Order and timing, on the simulated clock: staging, an hour, canary 01 then 03.
    let staging_done = cluster_time(&run, "staging", "member-cluster-02", "Succeeded").unwrap();
    let canary_first = cluster_time(&run, "canary", "member-cluster-01", "Started").unwrap();
    let canary_first_done = cluster_time(&run, "canary", "member-cluster-01", "Succeeded").unwrap();
    let canary_second = cluster_time(&run, "canary", "member-cluster-03", "Started").unwrap();
    let waited = canary_first.duration_since(staging_done);
    assert!(
        waited.as_secs() >= 3600,
        "canary started {waited:?} after staging"
    );
    assert!(
        canary_second >= canary_first_done,
        "member-cluster-03 started before 01 finished"
    );
    let staging = &run["status"]["stagesStatus"][0];
    let elapsed = conditions_of(&staging["afterStageTaskStatus"][0], "WaitTimeElapsed").unwrap();
    assert_eq!(elapsed["reason"], "AfterStageTaskWaitTimeElapsed");
    assert_eq!(
        conditions_of(staging, "Succeeded").unwrap()["reason"],
        "StageUpdatingSucceeded"
    );
    assert_eq!(
        run["status"]["stagesStatus"][1]["afterStageTaskStatus"][0]["approvalRequestName"],
        request
    );

    // `flotilla status` shows the wait and the command that ends it; a `--watch` follows the
    // run to its end.
    let drawn = flotilla(&hub, &["status", "updaterun", "example-staged-update-run"])
        .output()
        .unwrap();
    let drawn = String::from_utf8_lossy(&drawn.stdout).into_owned();
    for line in [
        "staging",
        "1/1 clusters",
        "2/2 clusters",
        "Waiting for approval (after the stage)",
        "flotilla approve example-staged-update-run-after-canary",
        "0/2 clusters",
    ] {
        assert!(drawn.contains(line), "no {line:?} in:\n{drawn}");
    }
    let watch = flotilla(
        &hub,
        &[
            "status",
            "updaterun",
            "example-staged-update-run",
            "--watch",
        ],
    )
    .stdout(Stdio::piped())
    .spawn()
    .unwrap();

    // The seed's approval command, verbatim but for the request's name.
    let patch = format!(
        r#"kubectl patch clusterapprovalrequests {request} --type=merge -p '{{"status":{{"conditions":[{{"type":"Approved","status":"True","reason":"testPassed","message":"lgtm","lastTransitionTime":"'$(date --utc +%Y-%m-%dT%H:%M:%SZ)'","observedGeneration":1}}]}}}}' --subresource=status"#
    );
    let out = Command::new("bash")
        .args(["-c", &patch])
        .env("KUBECONFIG", hub.kubeconfig())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("clusterapprovalrequest.placement.kubernetes-fleet.io/{request} patched")
    );

    let run = wait_run_condition(&hub, "example-staged-update-run", "Succeeded", "True", 120);
    assert_eq!(
        condition(&run, "Succeeded").unwrap()["reason"],
        "UpdateRunSucceeded"
    );
    let production_first =
        cluster_time(&run, "production", "member-cluster-05", "Succeeded").unwrap();
    let production_second =
        cluster_time(&run, "production", "member-cluster-04", "Started").unwrap();
    assert!(
        production_second >= production_first,
        "order=2 started before order=1 finished"
    );
    let listing = hub.kubectl_ok(&["get", "clusterapprovalrequest", request]);
    let row: Vec<&str> = listing.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(row[3..5], ["True", "True"], "{listing}");
    for member in [
        "member-cluster-01",
        "member-cluster-02",
        "member-cluster-03",
        "member-cluster-04",
        "member-cluster-05",
    ] {
        let kubeconfig = member_kubeconfig(&hub, member);
        assert!(
            on_member(&hub, &kubeconfig, &["get", "namespace", "test-namespace"]).is_some(),
            "test-namespace not placed on {member}"
        );
    }
    let table = hub.kubectl_ok(&["get", "csur", "example-staged-update-run"]);
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(row[4..6], ["True", "True"], "{table}");
    let watched = watch.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&watched.stdout);
    assert!(watched.status.success(), "{text}");
    assert!(text.lines().any(|l| l.starts_with("Succeeded")), "{text}");
}

/// `flotilla ARGS --kubeconfig <the hub's>`.
fn flotilla(hub: &HubProcess, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_flotilla"));
    cmd.args(args).arg("--kubeconfig").arg(hub.kubeconfig());
    cmd
}
