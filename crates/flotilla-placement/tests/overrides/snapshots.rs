//! The override snapshot decision.

use std::collections::BTreeMap;

use flotilla_placement::overrides::{
    NewSnapshot, OVERRIDE_HISTORY_LIMIT, SnapshotIndexError, SnapshotPlan, SnapshotRecord,
    plan_snapshots,
};
use serde_json::json;

use crate::fixtures::{cro_at, cro_spec, delete_rule};

/// An existing snapshot: name, labels, hash.
pub struct Existing {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub hash: String,
}

/// Snapshot `index` of override `cro` recording `hash`, latest or not.
pub fn existing(index: u64, hash: &str, latest: bool) -> Existing {
    Existing {
        name: format!("cro-{index}"),
        labels: BTreeMap::from([
            (
                "kubernetes-fleet.io/parent-resource-override".to_string(),
                "cro".to_string(),
            ),
            (
                "kubernetes-fleet.io/override-index".to_string(),
                index.to_string(),
            ),
            (
                "kubernetes-fleet.io/is-latest-snapshot".to_string(),
                latest.to_string(),
            ),
        ]),
        hash: hash.to_string(),
    }
}

/// The records the decision reads.
pub fn records(existing: &[Existing]) -> Vec<SnapshotRecord<'_>> {
    existing
        .iter()
        .map(|e| SnapshotRecord {
            name: &e.name,
            labels: Some(&e.labels),
            hash: &e.hash,
        })
        .collect()
}

fn plan(hash: &str, existing: &[Existing]) -> SnapshotPlan {
    plan_snapshots("cro", hash, &records(existing), OVERRIDE_HISTORY_LIMIT).unwrap()
}

fn new(index: u64) -> Option<NewSnapshot> {
    Some(NewSnapshot {
        name: format!("cro-{index}"),
        index,
        labels: BTreeMap::from([
            (
                "kubernetes-fleet.io/parent-resource-override".to_string(),
                "cro".to_string(),
            ),
            (
                "kubernetes-fleet.io/override-index".to_string(),
                index.to_string(),
            ),
            (
                "kubernetes-fleet.io/is-latest-snapshot".to_string(),
                "true".to_string(),
            ),
        ]),
    })
}

fn names(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

#[test]
fn snapshot_plan_table() {
    let cases = [
        // The first snapshot.
        (
            "h1",
            vec![],
            SnapshotPlan {
                create: new(0),
                ..SnapshotPlan::default()
            },
        ),
        // Nothing changed.
        (
            "h1",
            vec![existing(0, "h0", false), existing(1, "h1", true)],
            SnapshotPlan::default(),
        ),
        // The spec changed: a new snapshot, the old latest demoted.
        (
            "h2",
            vec![existing(0, "h0", false), existing(1, "h1", true)],
            SnapshotPlan {
                create: new(2),
                unmark_latest: names(&["cro-1"]),
                ..SnapshotPlan::default()
            },
        ),
        // Unchanged, but a crash left the latest label off the newest and on an older one.
        (
            "h1",
            vec![existing(0, "h0", true), existing(1, "h1", false)],
            SnapshotPlan {
                mark_latest: Some("cro-1".into()),
                unmark_latest: names(&["cro-0"]),
                ..SnapshotPlan::default()
            },
        ),
        // Indexes need not be contiguous nor listed in order; a changed-back spec is new.
        (
            "h0",
            vec![existing(7, "h7", true), existing(3, "h0", false)],
            SnapshotPlan {
                create: new(8),
                unmark_latest: names(&["cro-7"]),
                ..SnapshotPlan::default()
            },
        ),
    ];
    for (i, (hash, existing, want)) in cases.into_iter().enumerate() {
        assert_eq!(plan(hash, &existing), want, "case {i}");
    }
}

#[test]
fn history_is_pruned_oldest_first() {
    let full: Vec<_> = (0..10)
        .map(|i| existing(i, &format!("h{i}"), i == 9))
        .collect();
    // A new snapshot makes 11: the oldest goes.
    let changed = plan("new", &full);
    assert_eq!(changed.create, new(10));
    assert_eq!(changed.delete, names(&["cro-0"]));
    assert_eq!(changed.unmark_latest, names(&["cro-9"]));
    // Unchanged at the limit: nothing goes.
    assert_eq!(plan("h9", &full), SnapshotPlan::default());
    // Over the limit (the limit was lowered): the oldest beyond it go, never the latest.
    let over: Vec<_> = (0..12)
        .map(|i| existing(i, &format!("h{i}"), i == 11))
        .collect();
    let pruned = plan("h11", &over);
    assert_eq!(pruned.delete, names(&["cro-0", "cro-1"]));
    assert_eq!(pruned.create, None);
    // A limit of 0 still keeps the snapshot in use.
    let minimal = plan_snapshots("cro", "x", &records(&full[..2]), 0).unwrap();
    assert_eq!(minimal.create, new(2));
    assert_eq!(minimal.delete, names(&["cro-0", "cro-1"]));
    assert_eq!(minimal.unmark_latest, Vec::<String>::new());
}

#[test]
fn a_bad_index_label_is_an_error() {
    let mut bad = existing(0, "h", true);
    bad.labels
        .insert("kubernetes-fleet.io/override-index".into(), "zero".into());
    let error = plan_snapshots("cro", "h", &records(&[bad]), 10).unwrap_err();
    assert_eq!(
        error,
        SnapshotIndexError {
            snapshot: "cro-0".into(),
            value: Some("zero".into())
        }
    );
    assert_eq!(
        error.to_string(),
        "override snapshot \"cro-0\" has an invalid kubernetes-fleet.io/override-index label \"zero\""
    );
    let unlabelled = SnapshotRecord {
        name: "cro-0",
        labels: None,
        hash: "h",
    };
    assert_eq!(
        plan_snapshots("cro", "h", &[unlabelled], 10)
            .unwrap_err()
            .to_string(),
        "override snapshot \"cro-0\" has no kubernetes-fleet.io/override-index label"
    );
}

#[test]
fn records_read_both_snapshot_kinds() {
    let snapshot = cro_at(
        "cro",
        4,
        true,
        cro_spec(
            json!([{"group": "", "version": "v1", "kind": "Namespace", "name": "app"}]),
            json!([delete_rule(json!({"clusterSelectorTerms": []}))]),
        ),
    );
    let record = SnapshotRecord::from(&snapshot);
    assert_eq!((record.name, record.hash), ("cro-4", "h"));
    let plan = plan_snapshots("cro", "h", &[record], 10).unwrap();
    assert_eq!(plan, SnapshotPlan::default());
    let namespaced =
        crate::fixtures::ro("app", "ro", crate::fixtures::ro_spec(json!([]), json!([])));
    assert_eq!(SnapshotRecord::from(&namespaced).name, "ro-0");
}
