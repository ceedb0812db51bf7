//! Carries out [`Action`]s against a member's engine, in process, as the cluster's own
//! controllers would through its API.

use std::collections::HashMap;
use std::sync::Arc;

use flotilla_apiserver::Engine;
use flotilla_apiserver::engine::{DeleteOptions, WriteOptions};
use flotilla_apiserver::registry::ResourceInfo;
use flotilla_apiserver::status::{ApiError, ApiResult};
use jiff::Timestamp;
use serde_json::Value;

use crate::actions::{Action, EventNote};
use crate::events;
use crate::objects::ObjectRef;

/// The kinds the simulated controllers read and write: `(group, version, plural, kind)`.
const KINDS: &[(&str, &str, &str, &str)] = &[
    ("", "v1", "nodes", "Node"),
    ("", "v1", "pods", "Pod"),
    ("", "v1", "services", "Service"),
    ("apps", "v1", "deployments", "Deployment"),
    ("apps", "v1", "replicasets", "ReplicaSet"),
    ("apps", "v1", "statefulsets", "StatefulSet"),
    ("apps", "v1", "daemonsets", "DaemonSet"),
    ("batch", "v1", "jobs", "Job"),
    ("", "v1", "events", "Event"),
    (
        "policy",
        "v1",
        "poddisruptionbudgets",
        "PodDisruptionBudget",
    ),
    ("karpenter.sh", "v1", "nodepools", "NodePool"),
    ("karpenter.sh", "v1", "nodeclaims", "NodeClaim"),
    ("karpenter.sh", "v1alpha1", "nodeoverlays", "NodeOverlay"),
    (
        "karpenter.azure.com",
        "v1beta1",
        "aksnodeclasses",
        "AKSNodeClass",
    ),
];

/// How many times a status write re-reads and retries after losing a race.
const STATUS_RETRIES: usize = 8;

/// Writes to one member's engine.
pub(crate) struct Writer {
    engine: Engine,
    kinds: HashMap<&'static str, Arc<ResourceInfo>>,
    events_recorded: u64,
}

fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj.get("metadata")?.get(field)?.as_str()
}

fn namespace(ns: &str) -> Option<&str> {
    (!ns.is_empty()).then_some(ns)
}

impl Writer {
    /// A writer for `engine`, which must serve every kind in [`KINDS`].
    pub(crate) fn new(engine: Engine) -> Result<Writer, ApiError> {
        let snapshot = engine.registry().snapshot();
        let mut kinds = HashMap::new();
        for (group, version, plural, kind) in KINDS {
            let info = snapshot.get(group, version, plural).ok_or_else(|| {
                ApiError::internal(format!("the member does not serve {plural}.{group}"))
            })?;
            kinds.insert(*kind, info);
        }
        Ok(Writer {
            engine,
            kinds,
            events_recorded: 0,
        })
    }

    /// The engine written to.
    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }

    /// How `kind` is stored and served.
    pub(crate) fn info(&self, kind: &str) -> ApiResult<&Arc<ResourceInfo>> {
        self.kinds
            .get(kind)
            .ok_or_else(|| ApiError::bad_request(format!("the simulation does not write {kind}")))
    }

    fn info_of(&self, obj: &Value) -> ApiResult<&Arc<ResourceInfo>> {
        self.info(obj.get("kind").and_then(Value::as_str).unwrap_or_default())
    }

    /// Carries out one action at `now`.
    pub(crate) async fn execute(&mut self, action: Action, now: Timestamp) -> ApiResult<()> {
        let opts = WriteOptions::default();
        match action {
            Action::Create(obj) => {
                let info = self.info_of(&obj)?.clone();
                let ns = meta_str(&obj, "namespace").map(String::from);
                self.engine.create(&info, ns.as_deref(), obj, &opts).await?;
            }
            Action::CreatePod { pod, owner } => {
                let info = self.info("Pod")?.clone();
                let ns = meta_str(&pod, "namespace").map(String::from);
                let created = self.engine.create(&info, ns.as_deref(), pod, &opts).await?;
                let name = meta_str(&created.object, "name")
                    .unwrap_or_default()
                    .to_string();
                self.record(&events::created_pod(&owner, &name), now)
                    .await?;
            }
            Action::Update(obj) => {
                let info = self.info_of(&obj)?.clone();
                let ns = meta_str(&obj, "namespace").map(String::from);
                let name = meta_str(&obj, "name").unwrap_or_default().to_string();
                self.engine
                    .update(&info, ns.as_deref(), &name, obj, None, &opts)
                    .await?;
            }
            Action::WriteStatus { target, status } => self.write_status(&target, status).await?,
            Action::Delete(target) => self.delete(&target).await?,
            Action::DeletePod { pod, owner } => {
                self.delete(&pod).await?;
                self.record(&events::deleted_pod(&owner, &pod.name), now)
                    .await?;
            }
            Action::Record(note) => self.record(&note, now).await?,
        }
        Ok(())
    }

    /// Replaces the status of `target` (if it still has the same uid), re-reading and retrying
    /// when another write gets in between.
    async fn write_status(&self, target: &ObjectRef, status: Value) -> ApiResult<()> {
        let info = self.info(&target.kind)?;
        let ns = namespace(&target.namespace);
        let mut last = None;
        for _ in 0..STATUS_RETRIES {
            let mut current = self.engine.get(info, ns, &target.name).await?;
            if meta_str(&current, "uid") != Some(target.uid.as_str()) {
                return Ok(());
            }
            current["status"] = status.clone();
            match self
                .engine
                .update(
                    info,
                    ns,
                    &target.name,
                    current,
                    Some("status"),
                    &WriteOptions::default(),
                )
                .await
            {
                Err(e) if e.code == 409 => last = Some(e),
                other => return other.map(|_| ()),
            }
        }
        Err(last.unwrap_or_else(|| ApiError::internal("status write kept conflicting")))
    }

    async fn delete(&self, target: &ObjectRef) -> ApiResult<()> {
        let info = self.info(&target.kind)?;
        let opts = DeleteOptions {
            precondition_uid: Some(target.uid.clone()),
            ..Default::default()
        };
        self.engine
            .delete(info, namespace(&target.namespace), &target.name, &opts)
            .await?;
        Ok(())
    }

    /// Records an event.
    async fn record(&mut self, note: &EventNote, now: Timestamp) -> ApiResult<()> {
        self.events_recorded += 1;
        let event = events::event(note, now, self.events_recorded);
        let obj = serde_json::to_value(&event)
            .map_err(|e| ApiError::internal(format!("event does not serialize: {e}")))?;
        let ns = event.metadata.namespace.clone();
        let info = self.info("Event")?.clone();
        self.engine
            .create(&info, ns.as_deref(), obj, &WriteOptions::default())
            .await?;
        Ok(())
    }
}
