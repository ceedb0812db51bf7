//! Builders for strategies, runs and bindings.

use std::collections::BTreeMap;

use flotilla_api::placement::BindingState;
use flotilla_api::placement::staged_update_run::{UpdateRunState, UpdateRunStatus};
use flotilla_api::placement::staged_update_strategy::{
    StageConfig, StageTask, StageTaskType, UpdateStrategySpec,
};
use flotilla_placement::overrides::ClusterOverrides;
use flotilla_placement::update_run::assignment::ClusterLabels;
use flotilla_placement::update_run::execute::{
    ApprovalState, BindingOutcome, ClusterBinding, Progress, RunContext, advance,
};
use flotilla_placement::update_run::init::{InitInput, initialize};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;

/// A member cluster's name and labels.
pub type Cluster = (String, BTreeMap<String, String>);

/// A cluster named `name` with `labels` (`key=value` pairs).
pub fn cluster(name: &str, labels: &[(&str, &str)]) -> Cluster {
    (
        name.to_string(),
        labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

/// A stage selecting `environment=<env>`.
pub fn stage(name: &str, env: &str) -> StageConfig {
    StageConfig {
        name: name.to_string(),
        label_selector: Some(LabelSelector {
            match_labels: Some([("environment".to_string(), env.to_string())].into()),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// `stage` ordered by `key`.
pub fn sorted(mut stage: StageConfig, key: &str) -> StageConfig {
    stage.sorting_label_key = Some(key.to_string());
    stage
}

/// `stage` with `maxConcurrency`.
pub fn concurrency(mut stage: StageConfig, value: IntOrString) -> StageConfig {
    stage.max_concurrency = Some(value);
    stage
}

/// `stage` with after-stage tasks.
pub fn after(mut stage: StageConfig, tasks: Vec<StageTask>) -> StageConfig {
    stage.after_stage_tasks = Some(tasks);
    stage
}

/// `stage` with a before-stage approval.
pub fn approve_before(mut stage: StageConfig) -> StageConfig {
    stage.before_stage_tasks = Some(vec![approval()]);
    stage
}

/// A TimedWait task.
pub fn wait(time: &str) -> StageTask {
    StageTask {
        type_: StageTaskType::TimedWait,
        wait_time: Some(time.to_string()),
    }
}

/// An Approval task.
pub fn approval() -> StageTask {
    StageTask {
        type_: StageTaskType::Approval,
        wait_time: None,
    }
}

/// The seed's three-stage strategy: staging (1h wait), canary by `name` (approval),
/// production by `order`.
pub fn seed_strategy() -> UpdateStrategySpec {
    UpdateStrategySpec {
        stages: vec![
            after(stage("staging", "staging"), vec![wait("1h")]),
            after(sorted(stage("canary", "canary"), "name"), vec![approval()]),
            sorted(stage("production", "production"), "order"),
        ],
    }
}

/// The seed's clusters: one staging, two canary (name 1, 3), two production.
pub fn seed_clusters() -> Vec<Cluster> {
    vec![
        cluster(
            "member-cluster-01",
            &[("environment", "canary"), ("name", "1")],
        ),
        cluster("member-cluster-02", &[("environment", "staging")]),
        cluster(
            "member-cluster-03",
            &[("environment", "canary"), ("name", "3")],
        ),
        cluster(
            "member-cluster-04",
            &[("environment", "production"), ("order", "2")],
        ),
        cluster(
            "member-cluster-05",
            &[("environment", "production"), ("order", "1")],
        ),
    ]
}

/// `clusters` as the assignment takes them.
pub fn labels(clusters: &[Cluster]) -> Vec<ClusterLabels<'_>> {
    clusters
        .iter()
        .map(|(name, labels)| ClusterLabels { name, labels })
        .collect()
}

/// The time `secs` seconds into the test.
pub fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + secs).expect("valid time")
}

/// A run named `run` over `clusters`, initialized at time 0, with `leaving` in the deletion
/// stage.
pub fn initialized(
    run: &str,
    strategy: &UpdateStrategySpec,
    clusters: &[Cluster],
    leaving: &[String],
) -> UpdateRunStatus {
    let clusters = labels(clusters);
    initialize(&InitInput {
        kind: "ClusterStagedUpdateRun",
        run,
        generation: 1,
        strategy,
        policy_index: "0",
        observed_cluster_count: clusters.len() as i64,
        resource_index: "0",
        apply_strategy: None,
        clusters: &clusters,
        overrides: &|_| ClusterOverrides::default(),
        leaving,
        now: at(0),
    })
    .expect("the clusters fit the stages")
}

/// The simulated hub a run works against: bindings and approval requests.
#[derive(Clone, Debug, Default)]
pub struct World {
    /// Bindings by cluster.
    pub bindings: BTreeMap<String, ClusterBinding>,
    /// Approval requests by name.
    pub approvals: BTreeMap<String, ApprovalState>,
}

impl World {
    /// Every cluster of `clusters` Scheduled, not yet on the run's resources.
    pub fn scheduled(clusters: &[Cluster]) -> World {
        World {
            bindings: clusters
                .iter()
                .map(|(name, _)| {
                    (
                        name.clone(),
                        ClusterBinding {
                            state: BindingState::Scheduled,
                            deleting: false,
                            on_target: false,
                            outcome: BindingOutcome::Pending,
                        },
                    )
                })
                .collect(),
            approvals: BTreeMap::new(),
        }
    }

    /// One pass at `now` in `state`; the pass's writes are carried out on the world.
    pub fn pass(
        &mut self,
        status: &mut UpdateRunStatus,
        state: UpdateRunState,
        now: Timestamp,
    ) -> Progress {
        let progress = advance(
            status,
            &RunContext {
                generation: 1,
                namespace: None,
                state,
                bindings: &self.bindings,
                approvals: &self.approvals,
                now,
            },
        );
        use flotilla_placement::update_run::execute::RunAction::*;
        for action in &progress.actions {
            match action {
                Bind { cluster } => {
                    let binding = self
                        .bindings
                        .get_mut(cluster)
                        .expect("bound cluster exists");
                    binding.state = BindingState::Bound;
                    binding.on_target = true;
                    binding.outcome = BindingOutcome::Pending;
                }
                Delete { cluster } => {
                    self.bindings.remove(cluster);
                }
                RequestApproval { name, .. } => {
                    self.approvals.entry(name.clone()).or_default();
                }
                AcceptApproval { name } => {
                    self.approvals
                        .get_mut(name)
                        .expect("request exists")
                        .accepted = true;
                }
            }
        }
        progress
    }

    /// Every bound binding becomes Available.
    pub fn all_available(&mut self) {
        for binding in self.bindings.values_mut() {
            if binding.on_target {
                binding.outcome = BindingOutcome::Succeeded;
            }
        }
    }

    /// A user approves request `name`.
    pub fn approve(&mut self, name: &str) {
        self.approvals
            .get_mut(name)
            .expect("request exists")
            .approved = true;
    }
}
