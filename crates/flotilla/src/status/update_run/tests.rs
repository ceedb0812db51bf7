//! Table tests of the drawing: every case of `cases.yaml` drawn at its `now`, compared with the
//! whole expected text.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::*;

/// One case of `cases.yaml`.
#[derive(Deserialize)]
struct Case {
    now: Timestamp,
    run: ClusterStagedUpdateRun,
    #[serde(default)]
    requests: Vec<ClusterApprovalRequest>,
}

#[derive(Deserialize)]
struct Cases {
    cases: BTreeMap<String, Case>,
}

fn case(name: &str) -> Case {
    let mut cases: Cases = serde_saphyr::from_str(include_str!("cases.yaml")).unwrap();
    cases
        .cases
        .remove(name)
        .unwrap_or_else(|| panic!("no case {name}"))
}

const HEADER: &str = "Update run example-staged-update-run: placement crp-staged-update-sample, resource snapshot 0, state Run";

#[test]
fn drawings() {
    let table: [(&str, Overall, String); 6] = [
        (
            "initialized",
            Overall::Initializing,
            "\
Update run example-staged-update-run: placement crp-staged-update-sample, resource snapshot 0, state Run
Initializing: ClusterStagedUpdateRun initialized successfully

  staging                          [----------] 0/1 clusters  Pending
  canary                           [----------] 0/2 clusters  Pending
  production                       [----------] 0/0 clusters  Pending
  kubernetes-fleet.io/deleteStage  [----------] 0/0 clusters  Pending
"
            .to_string(),
        ),
        (
            "two-in-flight",
            Overall::Progressing,
            format!(
                "\
{HEADER}
Progressing: The update run is making progress

  staging                          [##########] 1/1 clusters  Succeeded
  canary                           [##--------] 1/4 clusters  Updating, in flight: member-cluster-03, member-cluster-04
  production                       [----------] 0/0 clusters  Pending
  kubernetes-fleet.io/deleteStage  [----------] 0/0 clusters  Pending
"
            ),
        ),
        (
            "timed-wait",
            Overall::Progressing,
            format!(
                "\
{HEADER}
Progressing: The update run is waiting for after-stage tasks in stage staging to complete

  staging                          [##########] 1/1 clusters  Waiting, TimedWait: 37m left
  canary                           [----------] 0/2 clusters  Pending
  production                       [----------] 0/0 clusters  Pending
  kubernetes-fleet.io/deleteStage  [----------] 0/0 clusters  Pending
"
            ),
        ),
        (
            "pending-approval",
            Overall::Progressing,
            format!(
                r#"{HEADER}
Progressing: The update run is making progress

  staging                          [##########] 1/1 clusters  Succeeded
  canary                           [##########] 2/2 clusters  Waiting for approval (after the stage)
      approve: flotilla approve example-staged-update-run-canary
      or:      kubectl patch clusterapprovalrequests example-staged-update-run-canary --type=merge -p '{{"status":{{"conditions":[{{"type":"Approved","status":"True","reason":"ClusterApprovalRequestApproved","message":"ClusterApprovalRequest has been approved","lastTransitionTime":"'$(date --utc +%Y-%m-%dT%H:%M:%SZ)'","observedGeneration":1}}]}}}}' --subresource=status
  production                       [----------] 0/0 clusters  Pending
  kubernetes-fleet.io/deleteStage  [----------] 0/0 clusters  Pending
"#
            ),
        ),
        (
            "failed",
            Overall::Failed,
            format!(
                "\
{HEADER}
Failed: cluster member-cluster-03 in stage canary failed: its binding is no longer bound

  staging                          [##########] 1/1 clusters  Succeeded
  canary                           [#####-----] 1/2 clusters  Failed: cluster member-cluster-03 failed: its binding is no longer bound
  production                       [----------] 0/0 clusters  Pending
  kubernetes-fleet.io/deleteStage  [----------] 0/0 clusters  Pending
"
            ),
        ),
        (
            "succeeded",
            Overall::Succeeded,
            format!(
                "\
{HEADER}
Succeeded: The update run has completed successfully

  staging                          [##########] 1/1 clusters  Succeeded
  canary                           [##########] 2/2 clusters  Succeeded
  production                       [----------] 0/0 clusters  Succeeded
  kubernetes-fleet.io/deleteStage  [----------] 0/0 clusters  Succeeded
"
            ),
        ),
    ];
    for (name, want_overall, want) in table {
        let case = case(name);
        assert_eq!(overall(&case.run).0, want_overall, "{name}");
        let drawn = draw(&case.run, &case.requests, case.now);
        assert_eq!(drawn, want, "{name}:\n{drawn}");
    }
}

#[test]
fn an_approved_request_is_no_longer_pending() {
    let mut case = case("pending-approval");
    case.requests[0].status = Some(
        serde_json::from_value(serde_json::json!({
            "conditions": [{"type": "Approved", "status": "True", "reason": "lgtm", "message": "",
                "lastTransitionTime": "2025-03-12T07:06:00Z", "observedGeneration": 1}]
        }))
        .unwrap(),
    );
    let drawn = draw(&case.run, &case.requests, case.now);
    assert!(!drawn.contains("approve"), "{drawn}");
    assert!(
        drawn.contains("2/2 clusters  Updating\n"),
        "approved, not yet accepted by the run:\n{drawn}"
    );
}

#[test]
fn a_wait_the_run_has_not_started_counting_shows_its_whole_time() {
    let mut case = case("timed-wait");
    let stages = case
        .run
        .status
        .as_mut()
        .unwrap()
        .stages_status
        .as_mut()
        .unwrap();
    stages[0].conditions = None;
    let drawn = draw(&case.run, &case.requests, case.now);
    assert!(drawn.contains("Waiting, TimedWait: 1h left"), "{drawn}");
}

#[test]
fn go_durations_and_time_left() {
    for (wait, want) in [
        ("1h0m0s", 3600),
        ("90m", 5400),
        ("1h30m", 5400),
        ("45s", 45),
    ] {
        let parsed: SignedDuration = wait.parse().unwrap();
        assert_eq!(parsed.as_secs(), want, "{wait}");
    }
    for (seconds, want) in [
        (45, "45s"),
        (60, "1m"),
        (36 * 60 + 30, "37m"),
        (37 * 60, "37m"),
        (59 * 60 + 1, "1h"),
        (3600 + 5 * 60, "1h 5m"),
    ] {
        assert_eq!(remaining(SignedDuration::from_secs(seconds)), want);
    }
}
