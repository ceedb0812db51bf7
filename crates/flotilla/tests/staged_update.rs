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
    staged_fleet_with("1")
}

/// The staged fleet whose pods become Ready `readiness_delay` simulated seconds after their
/// scheduling.
fn staged_fleet_with(readiness_delay: &str) -> HubProcess {
    let fleet = examples_dir().join("fleets/staged-rollout.yaml");
    let hub = HubProcess::start_with(&[
        "--fleet",
        fleet.to_str().unwrap(),
        "--readiness-delay",
        readiness_delay,
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
    assert_eq!(
        hub.shell_ok(&patch),
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

/// The five members of `examples/fleets/staged-rollout.yaml`, by name.
const MEMBERS: [&str; 5] = [
    "member-cluster-01",
    "member-cluster-02",
    "member-cluster-03",
    "member-cluster-04",
    "member-cluster-05",
];

/// A PickAll ClusterResourcePlacement `name` of namespace `namespace` under the External
/// strategy, with `apply_strategy` (YAML under `spec.strategy`, indented by 4) if any.
fn external_placement(name: &str, namespace: &str, apply_strategy: &str) -> String {
    format!(
        r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: {name}
spec:
  resourceSelectors:
    - group: ""
      kind: Namespace
      version: v1
      name: {namespace}
  policy:
    placementType: PickAll
  strategy:
    type: External
{apply_strategy}
"#
    )
}

/// A ClusterStagedUpdateRun `name` of `placement` following `strategy`, at `index` if given
/// (else the latest resource snapshot).
fn update_run(name: &str, placement: &str, strategy: &str, index: Option<&str>) -> String {
    let index = index.map_or(String::new(), |i| {
        format!("  resourceSnapshotIndex: \"{i}\"\n")
    });
    format!(
        r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateRun
metadata:
  name: {name}
spec:
  placementName: {placement}
  stagedRolloutStrategyName: {strategy}
{index}"#
    )
}

/// The placement's bindings.
fn bindings_of(hub: &HubProcess, placement: &str) -> Vec<Value> {
    let selector = format!("kubernetes-fleet.io/parent-CRP={placement}");
    get_json(hub, &["clusterresourcebindings", "-l", &selector])["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Waits until the scheduler made a binding of `placement` for each of the five members.
fn wait_bindings(hub: &HubProcess, placement: &str) -> Vec<Value> {
    eventually(&format!("5 bindings of {placement}"), 60, || {
        let bindings = bindings_of(hub, placement);
        (bindings.len() == 5).then_some(bindings)
    })
}

/// The clusters of the run's stages whose condition `type_` has `status`, in stage order.
fn clusters_with(run: &Value, type_: &str, status: &str) -> Vec<String> {
    run["status"]["stagesStatus"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["clusters"].as_array().into_iter().flatten())
        .filter(|c| conditions_of(c, type_).is_some_and(|c| c["status"] == status))
        .map(|c| c["clusterName"].as_str().unwrap().to_string())
        .collect()
}

/// `(status, reason, message)` of the run's condition `type_`.
fn run_condition(run: &Value, type_: &str) -> (String, String, String) {
    let c = condition(run, type_).unwrap_or_else(|| panic!("no {type_} condition in {run}"));
    let text = |k: &str| c[k].as_str().unwrap_or_default().to_string();
    (text("status"), text("reason"), text("message"))
}

/// `kubectl patch csur NAME --type=merge -p '{"spec":{"state":STATE}}'`.
fn set_state(hub: &HubProcess, run: &str, state: &str) {
    let patch = format!(r#"{{"spec":{{"state":"{state}"}}}}"#);
    let out = hub.kubectl_ok(&["patch", "csur", run, "--type=merge", "-p", &patch]);
    assert_eq!(
        out.trim(),
        format!("clusterstagedupdaterun.placement.kubernetes-fleet.io/{run} patched")
    );
}

#[test]
fn a_cluster_without_the_stages_sorting_label_fails_the_initialization_and_binds_nothing() {
    let hub = staged_fleet();
    hub.kubectl_ok(&["create", "namespace", "unsorted"]);
    hub.create(&external_placement("unsorted-crp", "unsorted", ""));
    // Stage `early` takes staging and canary, sorted by `name`: member-cluster-02 (staging)
    // has no `name` label, the canary members do.
    hub.create(
        r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateStrategy
metadata:
  name: unsorted-strategy
spec:
  stages:
    - name: early
      labelSelector:
        matchExpressions:
          - {key: environment, operator: In, values: [staging, canary]}
      sortingLabelKey: name
    - name: late
      labelSelector:
        matchLabels:
          environment: production
      sortingLabelKey: order
"#,
    );
    wait_bindings(&hub, "unsorted-crp");
    hub.create(&update_run(
        "unsorted-run",
        "unsorted-crp",
        "unsorted-strategy",
        Some("0"),
    ));
    let run = wait_run_condition(&hub, "unsorted-run", "Initialized", "False", 60);
    let (_, reason, message) = run_condition(&run, "Initialized");
    assert_eq!(reason, "UpdateRunInitializedFailed", "{run}");
    for culprit in ["cluster member-cluster-02", "stage early", "label name"] {
        assert!(message.contains(culprit), "{culprit:?} not in {message:?}");
    }
    assert!(condition(&run, "Progressing").is_none(), "{run}");
    assert!(run["status"]["stagesStatus"].is_null(), "{run}");

    // The failure is final, and the run never moved a binding: all five stay Scheduled and
    // nothing reaches a member.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let later = run_json(&hub, "unsorted-run");
    assert_eq!(
        run_condition(&later, "Initialized"),
        run_condition(&run, "Initialized")
    );
    let bindings = bindings_of(&hub, "unsorted-crp");
    assert_eq!(bindings.len(), 5);
    for binding in &bindings {
        assert_eq!(binding["spec"]["state"], "Scheduled", "{binding}");
    }
    for member in ["member-cluster-01", "member-cluster-02"] {
        let kubeconfig = member_kubeconfig(&hub, member);
        assert!(
            on_member(&hub, &kubeconfig, &["get", "namespace", "unsorted"]).is_none(),
            "namespace unsorted reached {member}"
        );
    }
}

#[test]
fn a_stopped_run_starts_no_cluster_until_it_runs_again() {
    // Pods become Ready 600 simulated seconds (2.5 s) after scheduling, so each cluster's
    // Deployment keeps it in flight for a while.
    let hub = staged_fleet_with("600");
    hub.create(&common::app("halting", 1));
    hub.create(&external_placement("halting-crp", "halting", ""));
    // One stage of all five members, one at a time, held at the end by an approval.
    hub.create(
        r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateStrategy
metadata:
  name: halting-strategy
spec:
  stages:
    - name: everyone
      labelSelector: {}
      maxConcurrency: 1
      afterStageTasks:
        - type: Approval
"#,
    );
    wait_bindings(&hub, "halting-crp");
    hub.create(&update_run(
        "halting-run",
        "halting-crp",
        "halting-strategy",
        None,
    ));
    eventually("the first cluster started", 60, || {
        let run = run_json(&hub, "halting-run");
        (!clusters_with(&run, "Started", "True").is_empty()).then_some(())
    });
    set_state(&hub, "halting-run", "Stop");

    // The cluster in flight finishes (Stopping), then the run is Stopped.
    let mut seen = Vec::new();
    let run = eventually("halting-run stopped", 60, || {
        let run = run_json(&hub, "halting-run");
        let (status, reason, message) = run_condition(&run, "Progressing");
        if seen.last() != Some(&(status.clone(), reason.clone(), message.clone())) {
            seen.push((status, reason.clone(), message));
        }
        (reason == "UpdateRunStopped").then_some(run)
    });
    assert!(
        seen.iter().any(|(status, reason, message)| status == "True"
            && reason == "UpdateRunStopping"
            && message.contains("1 cluster(s) in flight")),
        "never seen stopping: {seen:?}"
    );
    assert_eq!(
        run_condition(&run, "Progressing"),
        (
            "False".to_string(),
            "UpdateRunStopped".to_string(),
            "The update run is stopped: set spec.state to Run to resume it".to_string()
        )
    );
    assert!(condition(&run, "Succeeded").is_none(), "{run}");
    let started = clusters_with(&run, "Started", "True");
    assert!(
        !started.is_empty() && started.len() < 5,
        "started at the stop: {started:?}"
    );
    assert_eq!(
        clusters_with(&run, "Succeeded", "True"),
        started,
        "a cluster still in flight while stopped"
    );
    assert_eq!(started[..], MEMBERS[..started.len()], "not in name order");

    // Five seconds (20 simulated minutes, two clusters' worth) later nothing else
    // started and no other binding moved.
    let bound = |hub: &HubProcess| {
        bindings_of(hub, "halting-crp")
            .iter()
            .filter(|b| b["spec"]["state"] == "Bound")
            .count()
    };
    assert_eq!(bound(&hub), started.len());
    for _ in 0..10 {
        std::thread::sleep(std::time::Duration::from_millis(500));
        let run = run_json(&hub, "halting-run");
        assert_eq!(clusters_with(&run, "Started", "True"), started);
        assert_eq!(run_condition(&run, "Progressing").1, "UpdateRunStopped");
    }
    assert_eq!(bound(&hub), started.len());

    // Run resumes it: the next cluster starts, and the stage reaches its approval.
    set_state(&hub, "halting-run", "Run");
    eventually("a cluster started after the resume", 30, || {
        let run = run_json(&hub, "halting-run");
        (clusters_with(&run, "Started", "True").len() > started.len()).then_some(())
    });
    let run = eventually("halting-run waits for its approval", 90, || {
        let run = run_json(&hub, "halting-run");
        (run_condition(&run, "Progressing").1 == "UpdateRunWaiting").then_some(run)
    });
    let request = "halting-run-after-everyone";
    let (status, _, message) = run_condition(&run, "Progressing");
    assert_eq!(status, "False");
    assert!(
        message.contains(&format!("flotilla approve {request}")),
        "{message}"
    );
    assert_eq!(clusters_with(&run, "Succeeded", "True"), MEMBERS);
    let out = flotilla(&hub, &["approve", request]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("clusterapprovalrequest.placement.kubernetes-fleet.io/{request} approved")
    );
    let run = wait_run_condition(&hub, "halting-run", "Succeeded", "True", 30);
    assert_eq!(run_condition(&run, "Succeeded").1, "UpdateRunSucceeded");
    assert_eq!(run_condition(&run, "Progressing").1, "UpdateRunSucceeded");
    assert_eq!(bound(&hub), 5);
}

/// The resource snapshot each binding of `placement` carries, by cluster.
fn snapshots_bound(hub: &HubProcess, placement: &str) -> Vec<(String, String, String)> {
    let mut rows: Vec<(String, String, String)> = bindings_of(hub, placement)
        .iter()
        .map(|b| {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
            (
                text(&b["spec"]["targetCluster"]),
                text(&b["spec"]["state"]),
                text(&b["spec"]["resourceSnapshotName"]),
            )
        })
        .collect();
    rows.sort();
    rows
}

/// Every member's binding Bound to `snapshot`.
fn all_bound_to(snapshot: &str) -> Vec<(String, String, String)> {
    MEMBERS
        .iter()
        .map(|m| (m.to_string(), "Bound".to_string(), snapshot.to_string()))
        .collect()
}

#[test]
fn a_second_run_rolls_out_new_resources_and_a_third_rolls_them_back() {
    let hub = staged_fleet();
    hub.kubectl_ok(&["create", "namespace", "rerun"]);
    hub.create(&external_placement("rerun-crp", "rerun", ""));
    hub.create(
        r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateStrategy
metadata:
  name: rerun-strategy
spec:
  stages:
    - name: everyone
      labelSelector: {}
      maxConcurrency: "100%"
"#,
    );
    wait_bindings(&hub, "rerun-crp");
    hub.create(&update_run(
        "rerun-first",
        "rerun-crp",
        "rerun-strategy",
        Some("0"),
    ));
    let run = wait_run_condition(&hub, "rerun-first", "Succeeded", "True", 60);
    assert_eq!(run_condition(&run, "Succeeded").1, "UpdateRunSucceeded");
    assert_eq!(
        snapshots_bound(&hub, "rerun-crp"),
        all_bound_to("rerun-crp-0-snapshot")
    );

    // A ConfigMap in the namespace makes resource snapshot 1; under the External strategy
    // nothing rolls it out until a run does.
    hub.create(&common::settings("rerun"));
    eventually("resource snapshot 1", 30, || {
        let out = hub.kubectl_ok(&[
            "get",
            "clusterresourcesnapshots",
            "-l",
            "kubernetes-fleet.io/parent-CRP=rerun-crp",
            "-o",
            "name",
        ]);
        out.lines()
            .any(|l| l.ends_with("/rerun-crp-1-snapshot"))
            .then_some(())
    });
    let kubeconfigs: Vec<_> = MEMBERS
        .iter()
        .map(|m| (*m, member_kubeconfig(&hub, m)))
        .collect();
    let settings_on = |kubeconfig: &std::path::Path| {
        on_member(
            &hub,
            kubeconfig,
            &["get", "configmap", "settings", "-n", "rerun", "-o", "json"],
        )
    };
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(
        snapshots_bound(&hub, "rerun-crp"),
        all_bound_to("rerun-crp-0-snapshot")
    );
    for (member, kubeconfig) in &kubeconfigs {
        assert!(
            settings_on(kubeconfig).is_none(),
            "settings reached {member} without a run"
        );
    }

    // A second run, at the latest snapshot: every binding moves to index 1 and the ConfigMap
    // reaches every member.
    hub.create(&update_run(
        "rerun-second",
        "rerun-crp",
        "rerun-strategy",
        None,
    ));
    let run = wait_run_condition(&hub, "rerun-second", "Succeeded", "True", 60);
    assert_eq!(run_condition(&run, "Succeeded").1, "UpdateRunSucceeded");
    assert_eq!(run["status"]["resourceSnapshotIndexUsed"], "1");
    assert_eq!(clusters_with(&run, "Succeeded", "True"), MEMBERS);
    assert_eq!(
        snapshots_bound(&hub, "rerun-crp"),
        all_bound_to("rerun-crp-1-snapshot")
    );
    for (member, kubeconfig) in &kubeconfigs {
        let found = eventually(&format!("settings on {member}"), 30, || {
            settings_on(kubeconfig)
        });
        let found: Value = serde_json::from_str(&found).unwrap();
        assert_eq!(found["data"]["greeting"], "hello", "{member}");
    }
    let first = run_json(&hub, "rerun-first");
    assert_eq!(run_condition(&first, "Succeeded").1, "UpdateRunSucceeded");

    // A rollback run to index 0: the bindings move back and the ConfigMap leaves the members.
    hub.create(&update_run(
        "rerun-rollback",
        "rerun-crp",
        "rerun-strategy",
        Some("0"),
    ));
    let run = wait_run_condition(&hub, "rerun-rollback", "Succeeded", "True", 60);
    assert_eq!(run_condition(&run, "Succeeded").1, "UpdateRunSucceeded");
    assert_eq!(run["status"]["resourceSnapshotIndexUsed"], "0");
    assert_eq!(
        snapshots_bound(&hub, "rerun-crp"),
        all_bound_to("rerun-crp-0-snapshot")
    );
    for (member, kubeconfig) in &kubeconfigs {
        eventually(&format!("settings removed from {member}"), 30, || {
            settings_on(kubeconfig).is_none().then_some(())
        });
        assert!(
            on_member(&hub, kubeconfig, &["get", "namespace", "rerun"]).is_some(),
            "the namespace left {member} too"
        );
    }
}

#[test]
fn a_cluster_that_refuses_the_resources_fails_the_run_naming_it_and_its_stage() {
    let hub = staged_fleet();
    // member-cluster-04 already has the namespace and a ConfigMap `settings` of its own, and
    // the placement may not take objects over.
    let own = member_kubeconfig(&hub, "member-cluster-04");
    let mine = r#"
apiVersion: v1
kind: Namespace
metadata:
  name: guarded
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: guarded
data:
  greeting: mine
"#;
    let out = hub.kubectl_stdin(
        &["--kubeconfig", own.to_str().unwrap(), "create", "-f", "-"],
        mine,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    hub.kubectl_ok(&["create", "namespace", "guarded"]);
    hub.create(&common::settings("guarded"));
    hub.create(&external_placement(
        "guarded-crp",
        "guarded",
        "    applyStrategy:\n      whenToTakeOver: Never",
    ));
    // Staging first, then the other four one at a time by name: 01, 03, 04, 05.
    hub.create(
        r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateStrategy
metadata:
  name: guarded-strategy
spec:
  stages:
    - name: first
      labelSelector:
        matchLabels:
          environment: staging
    - name: rest
      labelSelector:
        matchExpressions:
          - {key: environment, operator: In, values: [canary, production]}
"#,
    );
    wait_bindings(&hub, "guarded-crp");
    hub.create(&update_run(
        "guarded-run",
        "guarded-crp",
        "guarded-strategy",
        None,
    ));
    let run = wait_run_condition(&hub, "guarded-run", "Succeeded", "False", 60);
    let (_, reason, message) = run_condition(&run, "Succeeded");
    assert_eq!(reason, "UpdateRunFailed", "{run}");
    // The binding's own explanation follows: its Applied condition and the member's refusal.
    for culprit in [
        "stage rest",
        "cluster member-cluster-04",
        "Applied is False",
        "whenToTakeOver is Never",
    ] {
        assert!(message.contains(culprit), "{culprit:?} not in {message:?}");
    }
    assert_eq!(
        run_condition(&run, "Progressing"),
        ("False".to_string(), reason.clone(), message.clone())
    );
    let stages = run["status"]["stagesStatus"].as_array().unwrap();
    assert_eq!(
        conditions_of(&stages[0], "Succeeded").unwrap()["reason"],
        "StageUpdatingSucceeded"
    );
    let rest = conditions_of(&stages[1], "Succeeded").unwrap();
    assert_eq!(
        (&rest["status"], &rest["reason"]),
        (&Value::from("False"), &Value::from("StageUpdatingFailed"))
    );
    assert_eq!(
        clusters_with(&run, "Succeeded", "True"),
        [
            "member-cluster-02",
            "member-cluster-01",
            "member-cluster-03"
        ]
    );
    assert_eq!(
        clusters_with(&run, "Succeeded", "False"),
        ["member-cluster-04"]
    );
    let failed = run["status"]["stagesStatus"][1]["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["clusterName"] == "member-cluster-04")
        .and_then(|c| conditions_of(c, "Succeeded"))
        .unwrap();
    assert_eq!(failed["reason"], "ClusterUpdatingFailed");
    assert!(
        message.ends_with(failed["message"].as_str().unwrap()),
        "{failed} vs {message:?}"
    );
    assert!(
        cluster_time(&run, "rest", "member-cluster-05", "Started").is_none(),
        "member-cluster-05 started after the failure"
    );

    // The member kept its own ConfigMap.
    let kept = on_member(
        &hub,
        &own,
        &[
            "get",
            "configmap",
            "settings",
            "-n",
            "guarded",
            "-o",
            "json",
        ],
    )
    .unwrap();
    let kept: Value = serde_json::from_str(&kept).unwrap();
    assert_eq!(kept["data"]["greeting"], "mine");
}
