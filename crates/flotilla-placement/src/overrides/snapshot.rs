//! The override controller's snapshot decision (KubeFleet's `ensure*OverrideSnapshot`): an
//! override gets a new snapshot `<override>-<index>` when its spec's hash differs from the
//! latest snapshot's; exactly the newest snapshot carries `is-latest-snapshot: "true"`; the
//! oldest are pruned to the history limit.
//!
//! The hash is the caller's (the controller hashes the override's spec, as KubeFleet's
//! SHA-256 of the spec's JSON, and stores it in `spec.overrideHash`): the decision only
//! compares it with the hash each snapshot recorded, so a spec the API server defaulted on the
//! way back never looks changed.

use std::collections::BTreeMap;
use std::fmt;

use flotilla_api::placement::override_snapshots::{
    IS_LATEST_SNAPSHOT_LABEL, OVERRIDE_INDEX_LABEL, OVERRIDE_TRACKING_LABEL,
};
use flotilla_api::placement::{ClusterResourceOverrideSnapshot, ResourceOverrideSnapshot};

/// How many snapshots of one override KubeFleet keeps.
pub const OVERRIDE_HISTORY_LIMIT: usize = 10;

/// An existing snapshot of the override, as the decision reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapshotRecord<'a> {
    /// The snapshot's name.
    pub name: &'a str,
    /// The snapshot's labels (index and latest flag).
    pub labels: Option<&'a BTreeMap<String, String>>,
    /// The hash the snapshot recorded (`spec.overrideHash`).
    pub hash: &'a str,
}

impl<'a> From<&'a ClusterResourceOverrideSnapshot> for SnapshotRecord<'a> {
    fn from(snapshot: &'a ClusterResourceOverrideSnapshot) -> Self {
        SnapshotRecord {
            name: snapshot.metadata.name.as_deref().unwrap_or_default(),
            labels: snapshot.metadata.labels.as_ref(),
            hash: &snapshot.spec.override_hash,
        }
    }
}

impl<'a> From<&'a ResourceOverrideSnapshot> for SnapshotRecord<'a> {
    fn from(snapshot: &'a ResourceOverrideSnapshot) -> Self {
        SnapshotRecord {
            name: snapshot.metadata.name.as_deref().unwrap_or_default(),
            labels: snapshot.metadata.labels.as_ref(),
            hash: &snapshot.spec.override_hash,
        }
    }
}

impl SnapshotRecord<'_> {
    fn label(&self, key: &str) -> Option<&str> {
        self.labels.and_then(|l| l.get(key)).map(String::as_str)
    }

    fn is_latest(&self) -> bool {
        self.label(IS_LATEST_SNAPSHOT_LABEL) == Some("true")
    }
}

/// A snapshot to create.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewSnapshot {
    /// `<override>-<index>`.
    pub name: String,
    /// One more than the latest index, 0 for the first snapshot.
    pub index: u64,
    /// The tracking, index and latest labels.
    pub labels: BTreeMap<String, String>,
}

/// What to change so the override's snapshots match its spec. Apply in this order: create,
/// mark latest, unmark, delete (a crash in between leaves a state the next plan repairs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotPlan {
    /// The snapshot to create, if the spec's hash changed (or there is none yet).
    pub create: Option<NewSnapshot>,
    /// An existing snapshot that records the current spec but lacks the latest label.
    pub mark_latest: Option<String>,
    /// Snapshots that must lose the latest label (set it to `"false"`).
    pub unmark_latest: Vec<String>,
    /// The oldest snapshots beyond the history limit, to delete.
    pub delete: Vec<String>,
}

/// A snapshot whose index label is missing or not a number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotIndexError {
    /// The snapshot's name.
    pub snapshot: String,
    /// Its index label, if present.
    pub value: Option<String>,
}

impl fmt::Display for SnapshotIndexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Some(value) => write!(
                f,
                "override snapshot {:?} has an invalid {OVERRIDE_INDEX_LABEL} label {value:?}",
                self.snapshot
            ),
            None => write!(
                f,
                "override snapshot {:?} has no {OVERRIDE_INDEX_LABEL} label",
                self.snapshot
            ),
        }
    }
}

impl std::error::Error for SnapshotIndexError {}

/// Plans the snapshots of the override `name`, whose spec hashes to `spec_hash`, given its
/// `existing` snapshots, keeping at most `history_limit` of them (at least 1).
pub fn plan_snapshots(
    name: &str,
    spec_hash: &str,
    existing: &[SnapshotRecord<'_>],
    history_limit: usize,
) -> Result<SnapshotPlan, SnapshotIndexError> {
    let mut sorted = existing
        .iter()
        .map(|s| index_of(s).map(|index| (index, s)))
        .collect::<Result<Vec<_>, _>>()?;
    sorted.sort_by_key(|(index, s)| (*index, s.name));
    let latest = sorted.last().map(|(index, s)| (*index, *s));
    let mut plan = SnapshotPlan::default();
    let keep_latest = match latest {
        Some((_, s)) if s.hash == spec_hash => {
            if !s.is_latest() {
                plan.mark_latest = Some(s.name.to_string());
            }
            Some(s.name)
        }
        _ => {
            let index = latest.map_or(0, |(index, _)| index + 1);
            plan.create = Some(new_snapshot(name, index));
            None
        }
    };
    let total = sorted.len() + usize::from(plan.create.is_some());
    let excess = total.saturating_sub(history_limit.max(1));
    plan.delete = sorted[..excess]
        .iter()
        .map(|(_, s)| s.name.to_string())
        .collect();
    plan.unmark_latest = sorted[excess..]
        .iter()
        .filter(|(_, s)| s.is_latest() && Some(s.name) != keep_latest)
        .map(|(_, s)| s.name.to_string())
        .collect();
    Ok(plan)
}

fn index_of(snapshot: &SnapshotRecord<'_>) -> Result<u64, SnapshotIndexError> {
    let value = snapshot.label(OVERRIDE_INDEX_LABEL);
    value
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| SnapshotIndexError {
            snapshot: snapshot.name.to_string(),
            value: value.map(str::to_string),
        })
}

fn new_snapshot(name: &str, index: u64) -> NewSnapshot {
    NewSnapshot {
        name: format!("{name}-{index}"),
        index,
        labels: BTreeMap::from([
            (OVERRIDE_TRACKING_LABEL.to_string(), name.to_string()),
            (OVERRIDE_INDEX_LABEL.to_string(), index.to_string()),
            (IS_LATEST_SNAPSHOT_LABEL.to_string(), "true".to_string()),
        ]),
    }
}
