//! Laying a strategy over the fleet: which members are in which group of which stage, with
//! resolved concurrency and failure thresholds, gates and waits — the skeleton of the status.

use std::collections::{BTreeMap, HashMap};

use flotilla_api::updates::UPDATE_GROUP_LABEL;
use flotilla_api::updates::strategy::{
    GateConfiguration, STAGE_CONCURRENCY_MAX, UpdateGroup, UpdateRunStrategy, UpdateStage,
};
use flotilla_api::updates::update_run::{
    GateStatus, GroupStatus, MemberStatus, StageStatus, WaitStatus,
};
use thiserror::Error;

use crate::quota::{self, CountError, GROUP_CONCURRENCY_DEFAULT};

/// The name of the implicit stage and group of a run without a strategy.
pub const IMPLICIT: &str = "default";

/// A member as the plan sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanMember {
    /// Its name.
    pub name: String,
    /// Its MemberCluster labels (the update group is `updates.flotilla.dev/group`).
    pub labels: BTreeMap<String, String>,
}

/// Why a strategy cannot be laid over the fleet.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PlanError {
    /// A member is selected by two groups.
    #[error(
        "member {member} is selected by group {first} and by group {second}; a member may be in one group only"
    )]
    TwoGroups {
        /// The member.
        member: String,
        /// The first group.
        first: String,
        /// The second group.
        second: String,
    },
    /// A count does not parse.
    #[error("{field} of {segment}: {source}")]
    Count {
        /// The field.
        field: &'static str,
        /// The stage or group.
        segment: String,
        /// What is wrong.
        source: CountError,
    },
    /// A group's concurrency is larger than its stage's or its size.
    #[error("maxConcurrency of group {group} ({value}) exceeds {limit}")]
    GroupConcurrency {
        /// The group.
        group: String,
        /// Its resolved value.
        value: u32,
        /// What it exceeds, e.g. `the stage's maxConcurrency (2)`.
        limit: String,
    },
    /// No member is in any group.
    #[error("no member of the fleet is in any group of the strategy")]
    Empty,
    /// A `memberSelector.byLabel` is not a selector AKS takes. Flotilla's hub
    /// refuses such a strategy; a Kubernetes hub stores it (its CRD cannot check it).
    #[error("memberSelector.byLabel of {segment}: {problem}")]
    Selector {
        /// The stage or group.
        segment: String,
        /// What is wrong.
        problem: String,
    },
    /// A group name appears in two stages (Flotilla's hub refuses it; a Kubernetes hub
    /// stores it).
    #[error(
        "group {group} is in stage {first} and in stage {second}; a group may appear only once"
    )]
    RepeatedGroup {
        /// The group.
        group: String,
        /// The stage it is first in.
        first: String,
        /// The stage it is in again.
        second: String,
    },
    /// A Custom run names two images of one family (Flotilla's hub refuses it; a Kubernetes
    /// hub stores it).
    #[error(
        "customNodeImageVersions name {first} and {second}, both of family {family}; at most one version per image family"
    )]
    ImageFamily {
        /// The family.
        family: String,
        /// The first image of it.
        first: String,
        /// The second.
        second: String,
    },
}

/// Selectors AKS takes, and each group in one stage only: what Flotilla's hub checks
/// on writes and a Kubernetes hub's CRD cannot.
fn check_layout(strategy: &UpdateRunStrategy) -> Result<(), PlanError> {
    let mut stage_of: HashMap<&str, &str> = HashMap::new();
    for stage in &strategy.stages {
        let selectors = std::iter::once((&stage.name, &stage.member_selector))
            .chain(stage.groups.iter().map(|g| (&g.name, &g.member_selector)));
        for (segment, selector) in selectors {
            if let Some(Err(problem)) = selector.as_ref().map(|s| s.selector()) {
                return Err(PlanError::Selector {
                    segment: segment.clone(),
                    problem,
                });
            }
        }
        for group in &stage.groups {
            match stage_of.insert(&group.name, &stage.name) {
                Some(first) if first != stage.name => {
                    return Err(PlanError::RepeatedGroup {
                        group: group.name.clone(),
                        first: first.to_string(),
                        second: stage.name.clone(),
                    });
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// The strategy of a run without one: every member, one by one, in one stage whose one
/// implicit group (a stage without groups) takes every member.
pub fn implicit_strategy() -> UpdateRunStrategy {
    UpdateRunStrategy {
        stages: vec![UpdateStage {
            name: IMPLICIT.to_string(),
            ..Default::default()
        }],
    }
}

/// The stages of a run following `strategy` over `members` (sorted by name inside groups). A
/// stage without groups forms one implicit group, named after the stage, of the members its
/// `memberSelector` (or, without one, the whole fleet) selects.
pub fn plan(
    strategy: &UpdateRunStrategy,
    members: &[PlanMember],
) -> Result<Vec<StageStatus>, PlanError> {
    check_layout(strategy)?;
    let mut sorted: Vec<&PlanMember> = members.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut placed: HashMap<&str, String> = HashMap::new();
    let mut stages = Vec::with_capacity(strategy.stages.len());
    for stage in &strategy.stages {
        let in_stage: Vec<&PlanMember> = sorted
            .iter()
            .copied()
            .filter(|m| {
                stage
                    .member_selector
                    .as_ref()
                    .is_none_or(|s| s.matches(&m.labels))
            })
            .collect();
        let implicit_group;
        let groups: &[UpdateGroup] = if stage.groups.is_empty() {
            implicit_group = [UpdateGroup {
                name: stage.name.clone(),
                ..Default::default()
            }];
            &implicit_group
        } else {
            &stage.groups
        };
        let mut group_members = Vec::with_capacity(groups.len());
        for group in groups {
            let chosen: Vec<&PlanMember> = in_stage
                .iter()
                .copied()
                .filter(|m| {
                    stage.groups.is_empty()
                        || match &group.member_selector {
                            Some(selector) => selector.matches(&m.labels),
                            None => m.labels.get(UPDATE_GROUP_LABEL) == Some(&group.name),
                        }
                })
                .collect();
            for member in &chosen {
                if let Some(first) = placed.insert(&member.name, group.name.clone()) {
                    return Err(PlanError::TwoGroups {
                        member: member.name.clone(),
                        first,
                        second: group.name.clone(),
                    });
                }
            }
            group_members.push(chosen);
        }
        let size: u32 = group_members.iter().map(|g| g.len() as u32).sum();
        let stage_concurrency = quota::concurrency(
            stage.max_concurrency.as_deref(),
            size,
            STAGE_CONCURRENCY_MAX,
        )
        .map_err(count_error("maxConcurrency", &stage.name))?
        .min(STAGE_CONCURRENCY_MAX);
        let stage_failures = quota::allowed_failures(stage.max_allowed_failures.as_deref(), size)
            .map_err(count_error("maxAllowedFailures", &stage.name))?;
        let mut group_statuses = Vec::with_capacity(groups.len());
        for (group, chosen) in groups.iter().zip(group_members) {
            let group_size = chosen.len() as u32;
            let concurrency = quota::concurrency(
                group.max_concurrency.as_deref(),
                group_size,
                GROUP_CONCURRENCY_DEFAULT,
            )
            .map_err(count_error("maxConcurrency", &group.name))?;
            let limit = if concurrency > stage_concurrency {
                Some(format!("the stage's maxConcurrency ({stage_concurrency})"))
            } else if group.max_concurrency.is_some() && concurrency > group_size.max(1) {
                Some(format!("the group's size ({group_size})"))
            } else {
                None
            };
            if let Some(limit) = limit {
                return Err(PlanError::GroupConcurrency {
                    group: group.name.clone(),
                    value: concurrency,
                    limit,
                });
            }
            group_statuses.push(GroupStatus {
                name: group.name.clone(),
                max_concurrency: concurrency,
                max_allowed_failures: quota::allowed_failures(
                    group.max_allowed_failures.as_deref(),
                    group_size,
                )
                .map_err(count_error("maxAllowedFailures", &group.name))?,
                members: chosen
                    .iter()
                    .map(|m| MemberStatus {
                        name: m.name.clone(),
                        ..Default::default()
                    })
                    .collect(),
                before_gates: gates(&group.before_gates),
                after_gates: gates(&group.after_gates),
                ..Default::default()
            });
        }
        stages.push(StageStatus {
            name: stage.name.clone(),
            max_concurrency: stage_concurrency,
            max_allowed_failures: stage_failures,
            groups: group_statuses,
            before_gates: gates(&stage.before_gates),
            after_gates: gates(&stage.after_gates),
            after_stage_wait_status: stage.after_stage_wait_in_seconds.filter(|s| *s > 0).map(
                |seconds| WaitStatus {
                    wait_duration_in_seconds: seconds,
                    ..Default::default()
                },
            ),
            ..Default::default()
        });
    }
    if placed.is_empty() {
        return Err(PlanError::Empty);
    }
    Ok(stages)
}

/// Turns a count error of `field` in `segment` into a plan error.
fn count_error(field: &'static str, segment: &str) -> impl FnOnce(CountError) -> PlanError {
    let segment = segment.to_string();
    move |source| PlanError::Count {
        field,
        segment,
        source,
    }
}

/// Gate statuses for configured gates, not yet reached.
fn gates(configs: &[GateConfiguration]) -> Vec<GateStatus> {
    configs
        .iter()
        .map(|c| GateStatus {
            display_name: c.display_name.clone(),
            gate_type: c.gate_type,
            ..Default::default()
        })
        .collect()
}
