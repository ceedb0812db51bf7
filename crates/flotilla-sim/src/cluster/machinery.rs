//! The one task that runs a simulated member's controllers: it reads the member's state at one
//! revision, runs [`reconcile::plan`], writes what the plan asks, then sleeps until the store
//! changes under a kind the controllers read, or until the plan's wake-up time on the
//! injected clock.

use std::sync::{Arc, RwLock};

use flotilla_apiserver::Clock;
use flotilla_apiserver::status::ApiResult;
use flotilla_store::{ListRequest, StoreError, WatchStream};
use futures::{FutureExt, StreamExt};
use jiff::Timestamp;
use k8s_openapi::Metadata;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::DeserializeOwned;

use super::writer::Writer;
use crate::fleet::MemberSpec;
use crate::karpenter;
use crate::reconcile::{self, ClusterState, Settings};

/// Every key the engine stores lives under this prefix.
const ROOT: &str = "/registry/";

/// Why the task woke up.
enum Wake {
    /// Something the controllers read changed, or a wake-up time came.
    Work,
    /// The watch ended (fell behind, or history was compacted): watch again from now.
    Rewatch,
}

/// A member's controllers.
pub(crate) struct Machinery {
    writer: Writer,
    settings: Settings,
    clock: Arc<dyn Clock>,
    /// The member as it is now (its Kubernetes version follows upgrades).
    spec: Arc<RwLock<MemberSpec>>,
    /// What Karpenter's controllers keep between passes.
    memory: karpenter::Memory,
    /// Storage prefixes of the kinds the controllers read (everything but events).
    watched: Vec<String>,
}

impl Machinery {
    /// The controllers of the member `writer` writes to.
    pub(crate) fn new(
        writer: Writer,
        settings: Settings,
        clock: Arc<dyn Clock>,
        spec: Arc<RwLock<MemberSpec>>,
    ) -> Machinery {
        let watched = [
            "Node",
            "Pod",
            "Service",
            "Deployment",
            "ReplicaSet",
            "StatefulSet",
            "DaemonSet",
            "Job",
            "PodDisruptionBudget",
            "NodePool",
            "NodeClaim",
            "AKSNodeClass",
            "NodeOverlay",
        ]
        .iter()
        .filter_map(|k| writer.info(k).ok().map(|i| i.prefix()))
        .collect();
        Machinery {
            writer,
            settings,
            clock,
            spec,
            memory: karpenter::Memory::default(),
            watched,
        }
    }

    /// Runs until the task is aborted.
    pub(crate) async fn run(mut self) {
        loop {
            let store = self.writer.engine().store().clone();
            let mut stream = store.watch(ROOT, store.current_revision());
            loop {
                let wake_at = match self.pass().await {
                    Ok(at) => at,
                    Err(e) => {
                        tracing::warn!(error = %e, "simulated member controllers could not read state");
                        None
                    }
                };
                match self.wait(&mut stream, wake_at).await {
                    Wake::Work => {}
                    Wake::Rewatch => break,
                }
            }
        }
    }

    /// Whether a change to `key` concerns the controllers.
    fn relevant(&self, key: &str) -> bool {
        self.watched.iter().any(|p| key.starts_with(p.as_str()))
    }

    async fn wait(&self, stream: &mut WatchStream, wake_at: Option<Timestamp>) -> Wake {
        loop {
            let timer = match wake_at {
                Some(at) => self.clock.sleep_until(at),
                None => futures::future::pending().boxed(),
            };
            tokio::select! {
                event = stream.next() => match event {
                    Some(Ok(e)) if self.relevant(&e.kv.key) => return self.drain(stream),
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => {
                        if !matches!(e, StoreError::WatcherTooSlow | StoreError::Compacted { .. }) {
                            tracing::warn!(error = %e, "simulated member watch failed");
                        }
                        return Wake::Rewatch;
                    }
                    None => return Wake::Rewatch,
                },
                () = timer => return Wake::Work,
            }
        }
    }

    /// Consumes the events already waiting, so one pass answers a burst of writes.
    fn drain(&self, stream: &mut WatchStream) -> Wake {
        while let Some(next) = stream.next().now_or_never() {
            match next {
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return Wake::Rewatch,
            }
        }
        Wake::Work
    }

    /// Reads the state, runs the controllers once and writes what they ask; returns when to
    /// run again if nothing changes meanwhile.
    async fn pass(&mut self) -> ApiResult<Option<Timestamp>> {
        let now = self.clock.now();
        let state = self.read().await?;
        // Published every pass, so the series of a deleted pool disappear.
        let registry = self.writer.engine().metrics().families();
        karpenter::metrics::publish(registry, &state);
        self.settings.kubernetes_version = self
            .spec
            .read()
            .map(|s| s.kubernetes_version.clone())
            .unwrap_or_else(|e| e.into_inner().kubernetes_version.clone());
        let plan = reconcile::plan(&state, &self.settings, &mut self.memory, now);
        // A wake-up that is already due would only spin: every due change is written now.
        let wake_at = plan.wake_at.filter(|at| *at > now);
        for observation in &plan.observations {
            registry.record(observation);
        }
        for action in plan.actions {
            if let Err(e) = self.writer.execute(action, now).await {
                // Lost races (objects gone, conflicts, namespaces being deleted) are settled
                // by the next pass.
                if matches!(e.code, 403 | 404 | 409) {
                    tracing::debug!(error = %e, "simulated write lost a race");
                } else {
                    tracing::warn!(error = %e, "simulated write failed");
                }
            }
        }
        Ok(wake_at)
    }

    /// Everything the controllers read, listed at one revision.
    async fn read(&self) -> ApiResult<ClusterState> {
        let mut revision = None;
        Ok(ClusterState {
            nodes: self.list("Node", &mut revision).await?,
            pods: self.list("Pod", &mut revision).await?,
            services: self.list("Service", &mut revision).await?,
            deployments: self.list("Deployment", &mut revision).await?,
            replica_sets: self.list("ReplicaSet", &mut revision).await?,
            stateful_sets: self.list("StatefulSet", &mut revision).await?,
            daemon_sets: self.list("DaemonSet", &mut revision).await?,
            jobs: self.list("Job", &mut revision).await?,
            pod_disruption_budgets: self.list("PodDisruptionBudget", &mut revision).await?,
            node_pools: self.list_custom("NodePool", &mut revision).await?,
            node_claims: self.list_custom("NodeClaim", &mut revision).await?,
            node_classes: self.list_custom("AKSNodeClass", &mut revision).await?,
            node_overlays: self.list_custom("NodeOverlay", &mut revision).await?,
        })
    }

    /// Every stored object of the core `kind`, at `revision` (set by the first list).
    async fn list<T>(&self, kind: &str, revision: &mut Option<i64>) -> ApiResult<Vec<T>>
    where
        T: DeserializeOwned + Metadata<Ty = ObjectMeta>,
    {
        self.list_with(kind, revision, |obj: &mut T| obj.metadata_mut())
            .await
    }

    /// Every stored object of the custom `kind` (a kube-rs resource), at `revision`.
    async fn list_custom<T>(&self, kind: &str, revision: &mut Option<i64>) -> ApiResult<Vec<T>>
    where
        T: DeserializeOwned + kube::Resource,
    {
        self.list_with(kind, revision, |obj: &mut T| obj.meta_mut())
            .await
    }

    /// Every stored object of `kind`, at `revision`, with its resourceVersion set through
    /// `meta`.
    async fn list_with<T, M>(
        &self,
        kind: &str,
        revision: &mut Option<i64>,
        meta: M,
    ) -> ApiResult<Vec<T>>
    where
        T: DeserializeOwned,
        M: Fn(&mut T) -> &mut ObjectMeta,
    {
        let info = self.writer.info(kind)?;
        let page = self
            .writer
            .engine()
            .store()
            .list(ListRequest {
                prefix: info.prefix(),
                revision: *revision,
                ..Default::default()
            })
            .await?;
        *revision = Some(page.revision);
        Ok(page
            .items
            .iter()
            .filter_map(|kv| match serde_json::from_slice::<T>(&kv.value) {
                Ok(mut obj) => {
                    meta(&mut obj).resource_version = Some(kv.mod_revision.to_string());
                    Some(obj)
                }
                Err(e) => {
                    tracing::debug!(key = kv.key, error = %e, "skipping an object the simulation cannot read");
                    None
                }
            })
            .collect())
    }
}
