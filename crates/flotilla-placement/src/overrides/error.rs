//! Why an override could not be applied to a manifest for a cluster: a value the placement
//! reports as `Overridden=False` with reason `OverriddenFailed` and this error's text.

use std::fmt;

/// The two kinds of override.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OverrideKind {
    /// A `ClusterResourceOverride` (its snapshots are `ClusterResourceOverrideSnapshot`s).
    Cluster,
    /// A `ResourceOverride` (its snapshots are `ResourceOverrideSnapshot`s).
    Namespaced,
}

impl OverrideKind {
    /// The kind of the snapshots that record overrides of this kind.
    pub fn snapshot_kind(self) -> &'static str {
        match self {
            OverrideKind::Cluster => "ClusterResourceOverrideSnapshot",
            OverrideKind::Namespaced => "ResourceOverrideSnapshot",
        }
    }
}

/// What went wrong in one rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// A label selector of the rule's cluster selector is invalid.
    InvalidClusterSelector(String),
    /// A value uses `${MEMBER-CLUSTER-LABEL-KEY-<key>}` and the cluster has no label `key`.
    MissingLabel {
        /// The label key.
        key: String,
        /// The cluster.
        cluster: String,
    },
    /// A value has `${MEMBER-CLUSTER-LABEL-KEY-` without the closing `}`.
    UnclosedVariable(String),
    /// The JSON patch operation failed (for example, the path does not exist).
    PatchFailed(String),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::InvalidClusterSelector(why) => write!(f, "invalid cluster selector: {why}"),
            Problem::MissingLabel { key, cluster } => {
                write!(f, "label key {key:?} not found on cluster {cluster:?}")
            }
            Problem::UnclosedVariable(value) => {
                write!(
                    f,
                    "value {value:?} is missing the closing '}}' of a variable"
                )
            }
            Problem::PatchFailed(why) => write!(f, "{why}"),
        }
    }
}

/// An override that failed on one manifest for one cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverrideError {
    /// The kind of the override.
    pub kind: OverrideKind,
    /// The override snapshot's namespace (ResourceOverride snapshots only).
    pub namespace: Option<String>,
    /// The override snapshot's name (`<override>-<index>`).
    pub snapshot: String,
    /// Index of the failing rule in `policy.overrideRules`.
    pub rule: usize,
    /// The JSON patch path of the failing operation (none for a cluster selector problem).
    pub path: Option<String>,
    /// The overridden resource, e.g. `Deployment "web" in namespace "app"` (none when the
    /// rule failed before any resource was looked at).
    pub resource: Option<String>,
    /// What went wrong.
    pub problem: Problem,
}

impl fmt::Display for OverrideError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match &self.namespace {
            Some(namespace) => format!("{namespace}/{}", self.snapshot),
            None => self.snapshot.clone(),
        };
        write!(
            f,
            "{} {name:?} rule {}",
            self.kind.snapshot_kind(),
            self.rule
        )?;
        if let Some(path) = &self.path {
            write!(f, " at path {path:?}")?;
        }
        f.write_str(" failed")?;
        if let Some(resource) = &self.resource {
            write!(f, " on {resource}")?;
        }
        write!(f, ": {}", self.problem)
    }
}

impl std::error::Error for OverrideError {}
