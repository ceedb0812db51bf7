//! The pass state machine: the seed's scenario step by step, stop and resume, failures,
//! stuck clusters, before-stage approvals and changes under a running run.

use flotilla_api::conditions::find;
use flotilla_api::placement::staged_update_run::{UpdateRunState, UpdateRunStatus};
use flotilla_api::placement::staged_update_strategy::UpdateStrategySpec;
use flotilla_placement::update_run::drift::{Observed, changed};
use flotilla_placement::update_run::execute::{BindingOutcome, RunAction};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::fixtures::*;

const RUN: UpdateRunState = UpdateRunState::Run;

/// `(status, reason)` of the run condition `type_`.
fn run_condition(status: &UpdateRunStatus, type_: &str) -> Option<(String, String)> {
    find(status.conditions.as_deref()?, type_).map(|c| (c.status.clone(), c.reason.clone()))
}

fn message(status: &UpdateRunStatus, type_: &str) -> String {
    find(status.conditions.as_deref().unwrap_or_default(), type_)
        .map(|c| c.message.clone())
        .unwrap_or_default()
}

/// Each stage's clusters as `name:state`, state one of `-` (not started), `started`,
/// `done`, `failed`.
fn board(status: &UpdateRunStatus) -> Vec<String> {
    status
        .stages_status
        .iter()
        .flatten()
        .chain(status.deletion_stage_status.iter())
        .map(|stage| {
            let clusters: Vec<String> = stage
                .clusters
                .iter()
                .map(|c| {
                    let conditions = c.conditions.as_deref().unwrap_or_default();
                    let state = match (find(conditions, "Started"), find(conditions, "Succeeded")) {
                        (_, Some(s)) if s.status == "True" => "done",
                        (_, Some(_)) => "failed",
                        (Some(_), None) => "started",
                        (None, None) => "-",
                    };
                    format!("{}:{state}", c.cluster_name)
                })
                .collect();
            format!("{} [{}]", stage.stage_name, clusters.join(" "))
        })
        .collect()
}

fn binds(actions: &[RunAction]) -> Vec<&str> {
    actions
        .iter()
        .filter_map(|a| match a {
            RunAction::Bind { cluster } => Some(cluster.as_str()),
            _ => None,
        })
        .collect()
}

fn pair(a: &str, b: &str) -> Option<(String, String)> {
    Some((a.to_string(), b.to_string()))
}

#[test]
fn the_seed_scenario_runs_stage_by_stage_with_its_wait_and_approval() {
    let clusters = seed_clusters();
    let mut world = World::scheduled(&clusters);
    world.bindings.insert("retired".into(), {
        let mut b = world.bindings["member-cluster-01"].clone();
        b.state = flotilla_api::placement::BindingState::Unscheduled;
        b
    });
    let mut status = initialized("run", &seed_strategy(), &clusters, &["retired".to_string()]);
    let snapshot = status.staged_update_strategy_snapshot.as_ref().unwrap();
    assert_eq!(
        snapshot.stages[0].after_stage_tasks.as_ref().unwrap()[0]
            .wait_time
            .as_deref(),
        Some("1h0m0s")
    );
    let canary_tasks = status.stages_status.as_ref().unwrap()[1]
        .after_stage_task_status
        .clone()
        .unwrap();
    assert_eq!(
        canary_tasks[0].approval_request_name.as_deref(),
        Some("run-after-canary")
    );
    assert_eq!(
        run_condition(&status, "Initialized"),
        pair("True", "UpdateRunInitializedSuccessfully")
    );

    // Staging: its one cluster is bound, then becomes available; the hour's wait begins.
    let progress = world.pass(&mut status, RUN, at(0));
    assert_eq!(binds(&progress.actions), ["member-cluster-02"]);
    assert_eq!(
        run_condition(&status, "Progressing"),
        pair("True", "UpdateRunProgressing")
    );
    world.all_available();
    let progress = world.pass(&mut status, RUN, at(10));
    assert!(progress.actions.is_empty());
    assert_eq!(progress.recheck_at, Some(at(10 + 3600)));
    assert_eq!(
        run_condition(&status, "Progressing"),
        pair("False", "UpdateRunWaiting")
    );
    assert!(message(&status, "Progressing").contains("Stage staging is waiting 1h0m0s"));
    assert!(world.pass(&mut status, RUN, at(3609)).actions.is_empty());
    assert_eq!(
        board(&status)[1],
        "canary [member-cluster-01:- member-cluster-03:-]"
    );

    // The wait is over: canary starts with name=1, one cluster at a time.
    let progress = world.pass(&mut status, RUN, at(3610));
    assert_eq!(binds(&progress.actions), ["member-cluster-01"]);
    let staging = &status.stages_status.as_ref().unwrap()[0];
    let elapsed = &staging.after_stage_task_status.as_ref().unwrap()[0];
    assert_eq!(
        find(elapsed.conditions.as_deref().unwrap(), "WaitTimeElapsed").map(|c| c.reason.as_str()),
        Some("AfterStageTaskWaitTimeElapsed")
    );
    world.all_available();
    let progress = world.pass(&mut status, RUN, at(3620));
    assert_eq!(binds(&progress.actions), ["member-cluster-03"]);
    world.all_available();

    // Canary done: its approval request is created, once.
    let progress = world.pass(&mut status, RUN, at(3630));
    assert_eq!(
        progress.actions,
        [RunAction::RequestApproval {
            name: "run-after-canary".into(),
            stage: "canary".into(),
            position: flotilla_placement::update_run::TaskPosition::After,
        }]
    );
    assert!(message(&status, "Progressing").contains("flotilla approve run-after-canary"));
    assert!(world.pass(&mut status, RUN, at(3640)).actions.is_empty());
    assert_eq!(
        board(&status)[2],
        "production [member-cluster-05:- member-cluster-04:-]"
    );

    // Approved: accepted, and production starts with order=1.
    world.approve("run-after-canary");
    let progress = world.pass(&mut status, RUN, at(3650));
    assert_eq!(
        progress.actions,
        [
            RunAction::AcceptApproval {
                name: "run-after-canary".into()
            },
            RunAction::Bind {
                cluster: "member-cluster-05".into()
            },
        ]
    );
    world.all_available();
    assert_eq!(
        binds(&world.pass(&mut status, RUN, at(3660)).actions),
        ["member-cluster-04"]
    );
    world.all_available();

    // The deletion stage removes the unscheduled cluster's binding; then the run succeeds.
    let progress = world.pass(&mut status, RUN, at(3670));
    assert_eq!(
        progress.actions,
        [RunAction::Delete {
            cluster: "retired".into()
        }]
    );
    assert_eq!(run_condition(&status, "Succeeded"), None);
    world.pass(&mut status, RUN, at(3680));
    assert_eq!(
        run_condition(&status, "Succeeded"),
        pair("True", "UpdateRunSucceeded")
    );
    assert_eq!(
        run_condition(&status, "Progressing"),
        pair("False", "UpdateRunSucceeded")
    );
    assert_eq!(
        board(&status),
        [
            "staging [member-cluster-02:done]",
            "canary [member-cluster-01:done member-cluster-03:done]",
            "production [member-cluster-05:done member-cluster-04:done]",
            "kubernetes-fleet.io/deleteStage [retired:done]",
        ]
    );
    for stage in status.stages_status.iter().flatten() {
        assert!(
            stage.start_time.is_some() && stage.end_time.is_some(),
            "{}",
            stage.stage_name
        );
    }
    // A finished run does nothing more.
    assert!(world.pass(&mut status, RUN, at(3690)).actions.is_empty());
}

fn wide_strategy(limit: IntOrString) -> UpdateStrategySpec {
    UpdateStrategySpec {
        stages: vec![concurrency(stage("all", "prod"), limit)],
    }
}

fn prod_clusters(n: usize) -> Vec<Cluster> {
    (0..n)
        .map(|i| cluster(&format!("c{i}"), &[("environment", "prod")]))
        .collect()
}

#[test]
fn stop_lets_clusters_in_flight_finish_and_run_resumes() {
    let clusters = prod_clusters(5);
    let mut world = World::scheduled(&clusters);
    let mut status = initialized("run", &wide_strategy(IntOrString::Int(2)), &clusters, &[]);
    assert_eq!(
        binds(&world.pass(&mut status, RUN, at(0)).actions),
        ["c0", "c1"]
    );

    let progress = world.pass(&mut status, UpdateRunState::Stop, at(1));
    assert!(progress.actions.is_empty());
    assert_eq!(
        run_condition(&status, "Progressing"),
        pair("True", "UpdateRunStopping")
    );
    world.all_available();
    let progress = world.pass(&mut status, UpdateRunState::Stop, at(2));
    assert!(
        progress.actions.is_empty(),
        "nothing new starts while stopped"
    );
    assert_eq!(
        run_condition(&status, "Progressing"),
        pair("False", "UpdateRunStopped")
    );
    assert_eq!(board(&status)[0], "all [c0:done c1:done c2:- c3:- c4:-]");

    assert_eq!(
        binds(&world.pass(&mut status, RUN, at(3)).actions),
        ["c2", "c3"]
    );
    assert_eq!(
        run_condition(&status, "Progressing"),
        pair("True", "UpdateRunProgressing")
    );
}

#[test]
fn a_failed_binding_fails_the_run_naming_cluster_and_stage() {
    let clusters = prod_clusters(3);
    let mut world = World::scheduled(&clusters);
    let mut status = initialized("run", &wide_strategy(IntOrString::Int(1)), &clusters, &[]);
    world.pass(&mut status, RUN, at(0));
    world.bindings.get_mut("c0").unwrap().outcome =
        BindingOutcome::Failed("Applied is False (ApplyFailed): manifest rejected".into());
    let progress = world.pass(&mut status, RUN, at(5));
    assert!(progress.actions.is_empty(), "no other cluster starts");
    assert_eq!(
        run_condition(&status, "Succeeded"),
        pair("False", "UpdateRunFailed")
    );
    let text = message(&status, "Succeeded");
    assert!(
        text.contains("stage all")
            && text.contains("cluster c0")
            && text.contains("manifest rejected"),
        "{text}"
    );
    assert_eq!(board(&status)[0], "all [c0:failed c1:- c2:-]");
    assert!(
        world.pass(&mut status, RUN, at(6)).actions.is_empty(),
        "a failed run is final"
    );
}

#[test]
fn a_cluster_taken_over_or_unscheduled_fails_the_run() {
    for (change, expect) in [
        ("another run", "another update run or a user changed it"),
        ("unscheduled", "was unscheduled while the run was updating"),
        ("gone", "has no binding any more"),
    ] {
        let clusters = prod_clusters(2);
        let mut world = World::scheduled(&clusters);
        let mut status = initialized("run", &wide_strategy(IntOrString::Int(1)), &clusters, &[]);
        world.pass(&mut status, RUN, at(0));
        match change {
            "another run" => world.bindings.get_mut("c0").unwrap().on_target = false,
            "unscheduled" => {
                world.bindings.get_mut("c0").unwrap().state =
                    flotilla_api::placement::BindingState::Unscheduled
            }
            _ => {
                world.bindings.remove("c0");
            }
        }
        world.pass(&mut status, RUN, at(1));
        assert_eq!(
            run_condition(&status, "Succeeded"),
            pair("False", "UpdateRunFailed"),
            "{change}"
        );
        assert!(
            message(&status, "Succeeded").contains(expect),
            "{change}: {}",
            message(&status, "Succeeded")
        );
    }
}

#[test]
fn a_cluster_updating_for_five_minutes_makes_the_run_stuck() {
    let clusters = prod_clusters(2);
    let mut world = World::scheduled(&clusters);
    let mut status = initialized("run", &wide_strategy(IntOrString::Int(1)), &clusters, &[]);
    world.pass(&mut status, RUN, at(0));
    let progress = world.pass(&mut status, RUN, at(299));
    assert_eq!(progress.recheck_at, Some(at(300)));
    assert_eq!(
        run_condition(&status, "Progressing"),
        pair("True", "UpdateRunProgressing")
    );
    world.pass(&mut status, RUN, at(300));
    assert_eq!(
        run_condition(&status, "Progressing"),
        pair("False", "UpdateRunStuck")
    );
    assert!(message(&status, "Progressing").contains("cluster c0 in stage all"));
    assert_eq!(
        run_condition(&status, "Succeeded"),
        None,
        "stuck is not failed"
    );
    world.all_available();
    world.pass(&mut status, RUN, at(301));
    assert_eq!(
        run_condition(&status, "Progressing"),
        pair("True", "UpdateRunProgressing")
    );
}

#[test]
fn a_before_stage_approval_holds_the_stage_until_approved() {
    let clusters = prod_clusters(1);
    let strategy = UpdateStrategySpec {
        stages: vec![approve_before(stage("prod", "prod"))],
    };
    let mut world = World::scheduled(&clusters);
    let mut status = initialized("run", &strategy, &clusters, &[]);
    let progress = world.pass(&mut status, RUN, at(0));
    assert!(
        matches!(&progress.actions[..], [RunAction::RequestApproval { name, .. }] if name == "run-before-prod")
    );
    assert_eq!(board(&status)[0], "prod [c0:-]");
    assert!(
        status.stages_status.as_ref().unwrap()[0]
            .start_time
            .is_none()
    );
    world.approve("run-before-prod");
    let progress = world.pass(&mut status, RUN, at(1));
    assert_eq!(binds(&progress.actions), ["c0"]);
}

#[test]
fn initialize_state_computes_stages_but_starts_nothing() {
    let clusters = prod_clusters(2);
    let mut world = World::scheduled(&clusters);
    let mut status = initialized("run", &wide_strategy(IntOrString::Int(1)), &clusters, &[]);
    let progress = world.pass(&mut status, UpdateRunState::Initialize, at(0));
    assert!(progress.actions.is_empty());
    assert_eq!(
        run_condition(&status, "Progressing"),
        pair("False", "UpdateRunNotStarted")
    );
}

#[test]
fn clusters_already_on_the_runs_resources_succeed_without_a_write() {
    let clusters = prod_clusters(3);
    let mut world = World::scheduled(&clusters);
    for binding in world.bindings.values_mut() {
        binding.on_target = true;
        binding.state = flotilla_api::placement::BindingState::Bound;
        binding.outcome = BindingOutcome::Succeeded;
    }
    let mut status = initialized("run", &wide_strategy(IntOrString::Int(1)), &clusters, &[]);
    let progress = world.pass(&mut status, RUN, at(0));
    assert!(progress.actions.is_empty());
    assert_eq!(
        run_condition(&status, "Succeeded"),
        pair("True", "UpdateRunSucceeded")
    );
}

#[test]
fn changes_under_a_running_run_are_named() {
    let clusters = prod_clusters(2);
    let status = initialized("run", &wide_strategy(IntOrString::Int(1)), &clusters, &[]);
    let scheduled = ["c0", "c1"];
    let same = Observed {
        policy_index: "0",
        cluster_count: 2,
        scheduled: &scheduled,
    };
    assert_eq!(changed(&status, &same), None);
    let policy = Observed {
        policy_index: "1",
        ..same
    };
    assert!(
        changed(&status, &policy)
            .unwrap()
            .contains("policy snapshot index 0 → 1")
    );
    let count = Observed {
        cluster_count: 3,
        ..same
    };
    assert!(
        changed(&status, &count)
            .unwrap()
            .contains("cluster count changed")
    );
    let newcomer = ["c0", "c9"];
    let extra = Observed {
        scheduled: &newcomer,
        ..same
    };
    assert!(
        changed(&status, &extra)
            .unwrap()
            .contains("cluster c9 was scheduled after")
    );
}
