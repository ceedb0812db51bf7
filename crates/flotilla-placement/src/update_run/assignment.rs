//! Which stage each scheduled cluster belongs to, and in what order a stage updates its
//! clusters (KubeFleet's run initialization): a stage takes the clusters its label selector
//! matches (an unset selector matches none, an empty one every cluster); each cluster must
//! fall in exactly one stage; a stage with a sorting label orders its clusters by that
//! label's integer value and then by name, otherwise by name.

use std::collections::BTreeMap;
use std::fmt;

use flotilla_api::placement::staged_update_strategy::StageConfig;

use crate::scheduler::labels::LabelMatcher;

/// One scheduled cluster and its labels.
#[derive(Clone, Copy, Debug)]
pub struct ClusterLabels<'a> {
    /// The member cluster's name.
    pub name: &'a str,
    /// Its labels.
    pub labels: &'a BTreeMap<String, String>,
}

/// Why the clusters cannot be assigned to the stages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AssignError {
    /// Two stages select one cluster.
    InTwoStages {
        /// The cluster.
        cluster: String,
        /// The first stage selecting it.
        first: String,
        /// The second.
        second: String,
    },
    /// No stage selects a scheduled cluster.
    InNoStage {
        /// The cluster.
        cluster: String,
    },
    /// A cluster of a stage with a sorting label lacks the label.
    SortingLabelMissing {
        /// The cluster.
        cluster: String,
        /// The stage.
        stage: String,
        /// The sorting label key.
        key: String,
    },
    /// A cluster's sorting label is not an integer.
    SortingLabelNotInteger {
        /// The cluster.
        cluster: String,
        /// The stage.
        stage: String,
        /// The sorting label key.
        key: String,
        /// The label's value.
        value: String,
    },
    /// A TimedWait's `waitTime` is not a duration.
    InvalidWaitTime {
        /// The stage.
        stage: String,
        /// The value.
        value: String,
    },
    /// A stage's label selector is invalid.
    InvalidSelector {
        /// The stage.
        stage: String,
        /// What is wrong with it.
        message: String,
    },
}

impl fmt::Display for AssignError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AssignError::InTwoStages {
                cluster,
                first,
                second,
            } => write!(
                f,
                "cluster {cluster} is selected by two stages, {first} and {second}; each cluster must be in exactly one stage"
            ),
            AssignError::InNoStage { cluster } => write!(
                f,
                "cluster {cluster} is scheduled but no stage selects it; each cluster must be in exactly one stage"
            ),
            AssignError::SortingLabelMissing {
                cluster,
                stage,
                key,
            } => write!(
                f,
                "cluster {cluster} in stage {stage} has no label {key}, the stage's sorting label"
            ),
            AssignError::SortingLabelNotInteger {
                cluster,
                stage,
                key,
                value,
            } => write!(
                f,
                "cluster {cluster} in stage {stage} has label {key}={value:?}, which is not an integer (the stage's sorting label must be)"
            ),
            AssignError::InvalidWaitTime { stage, value } => write!(
                f,
                "stage {stage} has an after-stage TimedWait whose waitTime {value:?} is not a duration"
            ),
            AssignError::InvalidSelector { stage, message } => {
                write!(f, "stage {stage} has an invalid labelSelector: {message}")
            }
        }
    }
}

/// The clusters of each stage of `stages`, in update order.
pub fn assign(
    stages: &[StageConfig],
    clusters: &[ClusterLabels<'_>],
) -> Result<Vec<Vec<String>>, AssignError> {
    let mut owner: BTreeMap<&str, &str> = BTreeMap::new();
    let mut assigned = Vec::with_capacity(stages.len());
    for stage in stages {
        let members = select(stage, clusters)?;
        for cluster in &members {
            if let Some(first) = owner.insert(cluster.name, &stage.name) {
                return Err(AssignError::InTwoStages {
                    cluster: cluster.name.to_string(),
                    first: first.to_string(),
                    second: stage.name.clone(),
                });
            }
        }
        assigned.push(order(stage, members)?);
    }
    if let Some(lost) = clusters.iter().find(|c| !owner.contains_key(c.name)) {
        return Err(AssignError::InNoStage {
            cluster: lost.name.to_string(),
        });
    }
    Ok(assigned)
}

/// The clusters `stage`'s selector matches.
fn select<'c, 'a>(
    stage: &StageConfig,
    clusters: &'c [ClusterLabels<'a>],
) -> Result<Vec<&'c ClusterLabels<'a>>, AssignError> {
    let Some(selector) = &stage.label_selector else {
        return Ok(Vec::new());
    };
    let matcher = LabelMatcher::new(selector);
    if let Err(message) = matcher.validity() {
        return Err(AssignError::InvalidSelector {
            stage: stage.name.clone(),
            message: message.to_string(),
        });
    }
    Ok(clusters
        .iter()
        .filter(|c| matcher.mismatch(c.labels).is_none())
        .collect())
}

/// `members` in update order: by the sorting label's integer value, then by name.
fn order(
    stage: &StageConfig,
    members: Vec<&ClusterLabels<'_>>,
) -> Result<Vec<String>, AssignError> {
    let mut keyed = Vec::with_capacity(members.len());
    for cluster in members {
        let rank = match &stage.sorting_label_key {
            None => 0,
            Some(key) => rank(stage, cluster, key)?,
        };
        keyed.push((rank, cluster.name));
    }
    keyed.sort_unstable();
    Ok(keyed
        .into_iter()
        .map(|(_, name)| name.to_string())
        .collect())
}

/// The integer value of `cluster`'s sorting label `key`.
fn rank(stage: &StageConfig, cluster: &ClusterLabels<'_>, key: &str) -> Result<i64, AssignError> {
    let Some(value) = cluster.labels.get(key) else {
        return Err(AssignError::SortingLabelMissing {
            cluster: cluster.name.to_string(),
            stage: stage.name.clone(),
            key: key.to_string(),
        });
    };
    value
        .parse()
        .map_err(|_| AssignError::SortingLabelNotInteger {
            cluster: cluster.name.to_string(),
            stage: stage.name.clone(),
            key: key.to_string(),
            value: value.clone(),
        })
}
