//! KubeFleet's overrides as pure functions (`pkg/controllers/overrider/`,
//! `pkg/utils/overrider/`, the work generator's override step):
//!
//! - [`ApplicableOverrides::select`]: which latest override snapshots apply to a placement —
//!   those selecting one of its resources whose `placement` reference is unset or names it;
//!   [`ApplicableOverrides::for_cluster`] lists the ones with a rule for one cluster (what a
//!   binding records);
//! - [`render`]: one selected manifest as one member cluster receives it — the matching rules
//!   of every ClusterResourceOverride, then of every ResourceOverride (so a ResourceOverride
//!   wins), JSON patches with the override variables filled in, or no manifest at all when a
//!   `Delete` rule matches; a failure is an [`OverrideError`] naming the override, the rule
//!   and the patch path, for the placement's `Overridden=False / OverriddenFailed`;
//! - [`plan_snapshots`]: whether an override needs a new snapshot, and which old snapshots lose
//!   the latest label or are pruned.
//!
//! Departures from KubeFleet:
//! - a resource is namespaced exactly when its manifest has a `metadata.namespace` (KubeFleet
//!   asks API discovery);
//! - variables are substituted inside JSON string values only, nested ones included (KubeFleet
//!   replaces text in the raw JSON of the value, keys and quoting included);
//! - a matching `Delete` rule wins over every other rule of every override, even one that would
//!   fail (KubeFleet stops at the first failure or the first `Delete`, in order);
//! - a ResourceOverride referencing a `Namespaced` placement never applies to a
//!   ClusterResourcePlacement of the same name, nor one referencing a `Cluster` placement to
//!   a ResourcePlacement (KubeFleet compares `name` with `namespace/name` keys, to the same
//!   effect), and a ClusterResourceOverride's reference names a ClusterResourcePlacement only;
//! - [`plan_snapshots`] keeps at most the history limit whether or not it creates a snapshot
//!   (KubeFleet prunes to one less than the limit before it compares hashes).

mod applicable;
mod error;
mod render;
mod snapshot;
mod source;
mod variables;

use std::collections::BTreeMap;

use flotilla_api::cluster::MemberCluster;

pub use applicable::{ApplicableOverrides, ClusterOverrides};
pub use error::{OverrideError, OverrideKind, Problem};
pub use render::{Deleted, Rendered, render};
pub use snapshot::{
    NewSnapshot, OVERRIDE_HISTORY_LIMIT, SnapshotIndexError, SnapshotPlan, SnapshotRecord,
    plan_snapshots,
};
pub use variables::{CLUSTER_LABEL_VARIABLE_PREFIX, CLUSTER_NAME_VARIABLE};

/// A member cluster as override rules see it: its name (for `${MEMBER-CLUSTER-NAME}`) and its
/// labels (for cluster selectors and `${MEMBER-CLUSTER-LABEL-KEY-<key>}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClusterView<'a> {
    /// The MemberCluster's name.
    pub name: &'a str,
    /// The MemberCluster's labels.
    pub labels: &'a BTreeMap<String, String>,
}

impl<'a> From<&'a MemberCluster> for ClusterView<'a> {
    fn from(cluster: &'a MemberCluster) -> Self {
        static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();
        ClusterView {
            name: cluster.metadata.name.as_deref().unwrap_or_default(),
            labels: cluster.metadata.labels.as_ref().unwrap_or(&NO_LABELS),
        }
    }
}
