//! `flotilla approve` end to end against a real hub: it sets a ClusterApprovalRequest's
//! `Approved` condition as the seed's `kubectl patch` does, keeping the request's other
//! conditions. (`flotilla status updaterun` is driven against a real run in
//! `staged_update.rs`.)

mod common;

use std::process::{Command, Output};

use common::{HubProcess, get_json};
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
