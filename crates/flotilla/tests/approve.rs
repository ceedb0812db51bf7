//! The staged-update-run conveniences end to end against a real hub: `flotilla approve` sets
//! a ClusterApprovalRequest's `Approved` condition as the seed's `kubectl patch` does (keeping
//! the request's other conditions), and `flotilla status updaterun` draws a run whose status
//! kubectl wrote, once or `--watch`ing it until it succeeds. The runs name a placement that
//! does not exist, which no controller acts on.

mod common;

use std::io::{BufRead as _, BufReader, Read as _};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use common::{HubProcess, eventually, get_json};
use serde_json::{Value, json};

const REQUEST: &str = "example-staged-update-run-canary";

/// `flotilla ARGS --kubeconfig <the hub's>`.
fn flotilla(hub: &HubProcess, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_flotilla"));
    cmd.args(args).arg("--kubeconfig").arg(hub.kubeconfig());
    cmd
}

fn run(hub: &HubProcess, args: &[&str]) -> Output {
    flotilla(hub, args).output().expect("run flotilla")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A ClusterApprovalRequest for stage canary of run `example-staged-update-run`, labelled
/// as the run labels it.
fn create_request(hub: &HubProcess) {
    hub.create(&format!(
        r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterApprovalRequest
metadata:
  name: {REQUEST}
  labels:
    kubernetes-fleet.io/targetupdaterun: example-staged-update-run
    kubernetes-fleet.io/targetUpdatingStage: canary
    kubernetes-fleet.io/taskType: afterStage
spec:
  parentStageRollout: example-staged-update-run
  targetStage: canary
"#
    ));
}

/// `kubectl patch KIND NAME --subresource=status --type=merge -p {"status": STATUS}`.
fn patch_status(hub: &HubProcess, kind: &str, name: &str, status: &Value) {
    let patch = json!({ "status": status }).to_string();
    hub.kubectl_ok(&[
        "patch",
        kind,
        name,
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch,
    ]);
}

/// A `metav1.Condition`.
fn condition(type_: &str, status: &str, reason: &str, message: &str) -> Value {
    json!({
        "type": type_, "status": status, "reason": reason, "message": message,
        "lastTransitionTime": "2025-03-12T07:00:00Z", "observedGeneration": 1,
    })
}

#[test]
fn approve_sets_approved_keeps_other_conditions_and_says_when_already_done() {
    let hub = HubProcess::start();
    create_request(&hub);
    // A condition someone else wrote: a merge patch of the list alone would drop it.
    patch_status(
        &hub,
        "clusterapprovalrequests",
        REQUEST,
        &json!({"conditions": [condition("Reviewed", "True", "ChecksPassed", "checks passed")]}),
    );

    let out = run(
        &hub,
        &[
            "approve",
            REQUEST,
            "--reason",
            "testPassed",
            "--message",
            "lgtm",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout(&out),
        format!("clusterapprovalrequest.placement.kubernetes-fleet.io/{REQUEST} approved\n")
    );
    let request = get_json(&hub, &["clusterapprovalrequest", REQUEST]);
    let conditions = request["status"]["conditions"].as_array().unwrap();
    let approved = conditions
        .iter()
        .find(|c| c["type"] == "Approved")
        .expect("an Approved condition");
    assert_eq!(approved["status"], "True");
    assert_eq!(approved["reason"], "testPassed");
    assert_eq!(approved["message"], "lgtm");
    assert_eq!(
        approved["observedGeneration"],
        request["metadata"]["generation"]
    );
    assert!(
        approved["lastTransitionTime"]
            .as_str()
            .is_some_and(|t| t.parse::<jiff::Timestamp>().is_ok()),
        "{approved}"
    );
    assert!(
        conditions
            .iter()
            .any(|c| c["type"] == "Reviewed" && c["status"] == "True"),
        "the other condition was dropped: {conditions:?}"
    );
    // The APPROVED column of the seed's table.
    let table = hub.kubectl_ok(&["get", "clusterapprovalrequest", REQUEST, "--no-headers"]);
    assert_eq!(
        table.split_whitespace().nth(3),
        Some("True"),
        "APPROVED column: {table}"
    );

    let again = run(&hub, &["approve", REQUEST]);
    assert!(again.status.success());
    assert_eq!(
        stdout(&again),
        format!(
            "clusterapprovalrequest.placement.kubernetes-fleet.io/{REQUEST} already approved\n"
        )
    );

    let missing = run(&hub, &["approve", "no-such-request"]);
    assert!(!missing.status.success());
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(
        stderr.contains(r#"ClusterApprovalRequest "no-such-request" not found"#),
        "{stderr}"
    );
}

/// Run `example-staged-update-run` of a placement that does not exist.
const RUN: &str = r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateRun
metadata:
  name: example-staged-update-run
spec:
  placementName: no-such-placement
  resourceSnapshotIndex: "0"
  stagedRolloutStrategyName: example-staged-strategy
  state: Run
"#;

/// A stage's status: its clusters with the given conditions, and the stage's own conditions.
fn stage(name: &str, clusters: &[(&str, Vec<Value>)], conditions: Vec<Value>) -> Value {
    let clusters: Vec<Value> = clusters
        .iter()
        .map(|(cluster, conditions)| json!({"clusterName": cluster, "conditions": conditions}))
        .collect();
    json!({"stageName": name, "clusters": clusters, "conditions": conditions})
}

fn started() -> Value {
    condition(
        "Started",
        "True",
        "ClusterUpdatingStarted",
        "Cluster update started",
    )
}

fn cluster_done() -> Value {
    condition(
        "Succeeded",
        "True",
        "ClusterUpdatingSucceeded",
        "Cluster update completed successfully",
    )
}

fn stage_done() -> Value {
    condition(
        "Succeeded",
        "True",
        "StageUpdatingSucceeded",
        "Stage update completed successfully",
    )
}

/// The run's status: staging done, canary updating member-cluster-03 and waiting for
/// approval after it, production not started.
fn in_progress() -> Value {
    json!({
        "conditions": [
            condition("Initialized", "True", "UpdateRunInitializedSuccessfully", "ClusterStagedUpdateRun initialized successfully"),
            condition("Progressing", "True", "UpdateRunProgressing", "The update run is making progress"),
        ],
        "stagedUpdateStrategySnapshot": {"stages": [
            {"name": "staging"},
            {"name": "canary", "afterStageTasks": [{"type": "Approval"}]},
            {"name": "production"},
        ]},
        "stagesStatus": [
            stage("staging", &[("member-cluster-02", vec![started(), cluster_done()])], vec![stage_done()]),
            stage("canary", &[
                ("member-cluster-01", vec![started(), cluster_done()]),
                ("member-cluster-03", vec![started()]),
            ], vec![condition("Progressing", "True", "StageUpdatingStarted", "Clusters in the stage started updating")]),
            stage("production", &[("member-cluster-04", vec![])], vec![]),
        ],
        "deletionStageStatus": {"stageName": "kubernetes-fleet.io/deleteStage", "clusters": []},
    })
}

#[test]
fn status_draws_a_run_and_watches_it_until_it_succeeds() {
    let hub = HubProcess::start();
    let missing = run(&hub, &["status", "updaterun", "example-staged-update-run"]);
    assert!(!missing.status.success());
    assert!(
        String::from_utf8_lossy(&missing.stderr)
            .contains(r#"ClusterStagedUpdateRun "example-staged-update-run" not found"#)
    );

    hub.create(RUN);
    let mut status = in_progress();
    patch_status(
        &hub,
        "clusterstagedupdaterun",
        "example-staged-update-run",
        &status,
    );
    let out = run(&hub, &["status", "updaterun", "example-staged-update-run"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    for line in [
        "Update run example-staged-update-run: placement no-such-placement, resource snapshot 0, state Run",
        "Progressing: The update run is making progress",
        "  staging                          [##########] 1/1 clusters  Succeeded",
        "  canary                           [#####-----] 1/2 clusters  Updating, in flight: member-cluster-03",
        "  production                       [----------] 0/1 clusters  Pending",
        "  kubernetes-fleet.io/deleteStage  [----------] 0/0 clusters  Pending",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "no line {line:?} in:\n{text}"
        );
    }

    // Watching: the canary's clusters finish, its approval is asked for, then the run succeeds.
    let mut watch = flotilla(
        &hub,
        &[
            "status",
            "updaterun",
            "example-staged-update-run",
            "--watch",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("flotilla status --watch");
    let drawn = Arc::new(Mutex::new(String::new()));
    let reader = {
        let drawn = drawn.clone();
        let out = watch.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let mut text = drawn.lock().unwrap();
                text.push_str(&line.unwrap());
                text.push('\n');
            }
        })
    };
    create_request(&hub);
    status["stagesStatus"][1] = stage(
        "canary",
        &[
            ("member-cluster-01", vec![started(), cluster_done()]),
            ("member-cluster-03", vec![started(), cluster_done()]),
        ],
        vec![condition(
            "Progressing",
            "False",
            "StageUpdatingWaiting",
            "All clusters in the stage are updated, waiting for after-stage tasks to complete",
        )],
    );
    status["stagesStatus"][1]["afterStageTaskStatus"] =
        json!([{"type": "Approval", "approvalRequestName": REQUEST}]);
    patch_status(
        &hub,
        "clusterstagedupdaterun",
        "example-staged-update-run",
        &status,
    );
    let approval_asked = [
        "  canary                           [##########] 2/2 clusters  Waiting for approval (after the stage)",
        "      approve: flotilla approve example-staged-update-run-canary",
    ];
    eventually("--watch to draw the approval asked for", 30, || {
        let text = drawn.lock().unwrap();
        approval_asked
            .iter()
            .all(|line| text.lines().any(|l| l == *line))
            .then_some(())
    });
    assert!(
        watch.try_wait().unwrap().is_none(),
        "--watch ended before the run did"
    );
    status["conditions"][1] = condition(
        "Progressing",
        "False",
        "UpdateRunSucceeded",
        "The update run has completed successfully",
    );
    status["conditions"].as_array_mut().unwrap().push(condition(
        "Succeeded",
        "True",
        "UpdateRunSucceeded",
        "The update run has completed successfully",
    ));
    patch_status(
        &hub,
        "clusterstagedupdaterun",
        "example-staged-update-run",
        &status,
    );
    let exit = eventually("--watch to end with the run", 30, || {
        watch.try_wait().unwrap()
    });
    reader.join().unwrap();
    let mut errors = String::new();
    watch
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut errors)
        .unwrap();
    let text = drawn.lock().unwrap();
    assert!(exit.success(), "{errors}\n{text}");
    assert!(
        text.lines()
            .any(|l| l == "Succeeded: The update run has completed successfully"),
        "{text}"
    );
    assert!(
        !text.contains('\x1b'),
        "the screen is cleared only on a terminal:\n{text}"
    );
}
