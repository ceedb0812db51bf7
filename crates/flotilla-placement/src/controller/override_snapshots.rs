//! The override snapshot controller: every `ClusterResourceOverride` and `ResourceOverride`
//! gets an immutable snapshot per version of its spec (`<override>-<index>`, the latest
//! labelled), planned by [`crate::overrides::plan_snapshots`]. Placements pick up the latest
//! snapshots at their next rollout, which a new snapshot triggers.

use std::sync::Arc;

use flotilla_api::placement::override_snapshots::{
    ClusterResourceOverrideSnapshotSpec, OVERRIDE_TRACKING_LABEL, ResourceOverrideSnapshotSpec,
};
use flotilla_api::placement::snapshots::IS_LATEST_SNAPSHOT_LABEL;
use flotilla_api::placement::{
    ClusterResourceOverride, ClusterResourceOverrideSnapshot, ResourceOverride,
    ResourceOverrideSnapshot,
};
use flotilla_apiserver::metrics::controller::Queue;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::ListParams;
use kube::runtime::controller::Action;
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt};

use super::family::{Object, api_in, owner_reference};
use super::{ControllerError, writes};
use crate::overrides::{NewSnapshot, OVERRIDE_HISTORY_LIMIT, SnapshotRecord, plan_snapshots};

/// An override kind and its snapshot kind.
trait Override: Object {
    /// The snapshot kind (namespaced as the override is).
    type Snapshot: Object;

    /// The override's spec, as hashed.
    fn spec_json(&self) -> serde_json::Value;

    /// The snapshot `new` of this override, with `metadata`.
    fn snapshot(&self, metadata: ObjectMeta, hash: String) -> Self::Snapshot;

    /// The snapshot as the planner reads it.
    fn record(snapshot: &Self::Snapshot) -> SnapshotRecord<'_>;
}

impl Override for ClusterResourceOverride {
    type Snapshot = ClusterResourceOverrideSnapshot;

    fn spec_json(&self) -> serde_json::Value {
        serde_json::to_value(&self.spec).unwrap_or_default()
    }

    fn snapshot(&self, metadata: ObjectMeta, hash: String) -> Self::Snapshot {
        ClusterResourceOverrideSnapshot {
            metadata,
            spec: ClusterResourceOverrideSnapshotSpec {
                override_spec: self.spec.clone(),
                override_hash: hash,
            },
        }
    }

    fn record(snapshot: &Self::Snapshot) -> SnapshotRecord<'_> {
        SnapshotRecord::from(snapshot)
    }
}

impl Override for ResourceOverride {
    type Snapshot = ResourceOverrideSnapshot;

    fn spec_json(&self) -> serde_json::Value {
        serde_json::to_value(&self.spec).unwrap_or_default()
    }

    fn snapshot(&self, metadata: ObjectMeta, hash: String) -> Self::Snapshot {
        ResourceOverrideSnapshot {
            metadata,
            spec: ResourceOverrideSnapshotSpec {
                override_spec: self.spec.clone(),
                override_hash: hash,
            },
        }
    }

    fn record(snapshot: &Self::Snapshot) -> SnapshotRecord<'_> {
        SnapshotRecord::from(snapshot)
    }
}

/// Runs the snapshot controllers of both override kinds until the client's API goes away.
pub async fn run(client: Client) {
    tokio::join!(
        run_kind::<ClusterResourceOverride>(client.clone()),
        run_kind::<ResourceOverride>(client),
    );
}

async fn run_kind<K: Override>(client: Client) {
    let queue = Queue::new(K::kind(&()).to_lowercase());
    let results = queue
        .controller(Api::<K>::all(client.clone()), watcher::Config::default())
        .run(
            queue.instrument(reconcile::<K>),
            error_policy::<K>,
            Arc::new(client),
        );
    queue.drive(results).await;
}

fn error_policy<K: Override>(o: Arc<K>, error: &ControllerError, _: Arc<Client>) -> Action {
    error.retry(&format!("override snapshot of {}", o.name_any()))
}

async fn reconcile<K: Override>(
    object: Arc<K>,
    client: Arc<Client>,
) -> Result<Action, ControllerError> {
    if object.meta().deletion_timestamp.is_some() {
        // Snapshots are owned by the override and go with it.
        return Ok(Action::await_change());
    }
    let name = object.name_any();
    // The override's snapshots: in its namespace, for a namespaced override.
    let api = api_in::<K::Snapshot>(&client, object.namespace().as_deref());
    let existing = api
        .list(&ListParams::default().labels(&format!("{OVERRIDE_TRACKING_LABEL}={name}")))
        .await?
        .items;
    let records: Vec<SnapshotRecord> = existing.iter().map(K::record).collect();
    let hash = crate::snapshot::hash(&object.spec_json());
    let plan = match plan_snapshots(&name, &hash, &records, OVERRIDE_HISTORY_LIMIT) {
        Ok(plan) => plan,
        Err(e) => {
            tracing::warn!(override_ = %name, error = %e, "override snapshots unreadable");
            return Ok(Action::await_change());
        }
    };
    if let Some(NewSnapshot { name, labels, .. }) = plan.create {
        let metadata = ObjectMeta {
            name: Some(name),
            namespace: object.namespace(),
            labels: Some(labels),
            owner_references: Some(vec![owner_reference(&*object)]),
            ..ObjectMeta::default()
        };
        writes::create(&api, &object.snapshot(metadata, hash)).await?;
    }
    if let Some(latest) = &plan.mark_latest {
        writes::label(&api, latest, IS_LATEST_SNAPSHOT_LABEL, "true").await?;
    }
    for old in &plan.unmark_latest {
        writes::label(&api, old, IS_LATEST_SNAPSHOT_LABEL, "false").await?;
    }
    for old in &plan.delete {
        writes::delete(&api, old).await?;
    }
    Ok(Action::await_change())
}
