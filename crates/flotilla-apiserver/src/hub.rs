//! The hub: the engine over a store, with its housekeeping controllers running.

use std::sync::Arc;
use std::time::Duration;

use flotilla_store::SharedStorage;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::clock::{Clock, SystemClock};
use crate::engine::{Engine, WriteOptions};
use crate::http::{ServerConfig, router, secured_router};
use crate::registry::Registry;
use crate::security::{Security, SecurityOptions};
use crate::status::ApiError;
use crate::{controllers, gc, hooks};

/// How the store's history is compacted (kube-apiserver compacts every 5 minutes).
#[derive(Debug, Clone, Copy)]
pub struct Compaction {
    /// How often to compact.
    pub interval: Duration,
    /// How many recent revisions stay watchable.
    pub retain: i64,
}

impl Default for Compaction {
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(300),
            retain: 10_000,
        }
    }
}

/// Everything a hub needs besides its store.
#[derive(Clone)]
pub struct HubOptions {
    /// HTTP-level settings (tokens, timeouts).
    pub server: ServerConfig,
    /// History compaction policy.
    pub compaction: Compaction,
    /// The clock.
    pub clock: Arc<dyn Clock>,
    /// Built-in kinds to serve, as a registry whose [`Registry::sibling`] this hub uses;
    /// `None` serves Flotilla's kinds and the core Kubernetes kinds.
    pub kinds: Option<Arc<Registry>>,
    /// Namespaces created at start.
    pub system_namespaces: &'static [&'static str],
    /// Authentication, RBAC, limits and audit of [`Hub::router`]; `None` trusts every caller.
    pub security: Option<SecurityOptions>,
}

impl Default for HubOptions {
    fn default() -> Self {
        Self {
            server: ServerConfig::default(),
            compaction: Compaction::default(),
            clock: Arc::new(SystemClock),
            kinds: None,
            system_namespaces: SYSTEM_NAMESPACES,
            security: None,
        }
    }
}

/// Namespaces every hub has (a Kubernetes cluster's four, plus `fleet-system`).
pub const SYSTEM_NAMESPACES: &[&str] = &[
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "fleet-system",
];

/// A running hub: engine plus controllers. Dropping it stops the controllers.
pub struct Hub {
    engine: Engine,
    server: ServerConfig,
    security: Option<Arc<Security>>,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub").field("engine", &self.engine).finish()
    }
}

/// Every built-in kind (Flotilla's and the core Kubernetes kinds) as CRD JSON.
pub fn builtin_definitions() -> Vec<Value> {
    flotilla_api::fleet_crds()
        .into_iter()
        .chain(flotilla_api::core_crds())
        .filter_map(|crd| serde_json::to_value(crd).ok())
        .collect()
}

impl Hub {
    /// Starts a hub over `store`: registers kinds, loads stored CRDs, creates the system
    /// namespaces, and spawns the controllers. Must run inside a tokio runtime.
    pub async fn start(store: SharedStorage, options: HubOptions) -> Result<Self, ApiError> {
        let registry = Arc::new(match &options.kinds {
            Some(template) => template.sibling(),
            None => Registry::new(builtin_definitions()),
        });
        let engine = Engine::new(registry, store, options.clock.clone());
        hooks::refresh_registry(&engine).await;
        let snap = engine.registry().snapshot();
        if let Some(ns) = snap.get("", "v1", "namespaces") {
            for name in options.system_namespaces {
                let obj =
                    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
                match engine
                    .create(&ns, None, obj, &WriteOptions::default())
                    .await
                {
                    Ok(_) => {}
                    Err(e) if e.reason == "AlreadyExists" => {}
                    Err(e) => return Err(e),
                }
            }
        }
        let security = match &options.security {
            Some(opts) => Some(Security::start(&engine, opts).await?),
            None => None,
        };
        let tasks = vec![
            tokio::spawn(gc::run(engine.clone())),
            tokio::spawn(hooks::follow_crds(engine.clone())),
            tokio::spawn(controllers::run_namespaces(engine.clone())),
            tokio::spawn(controllers::run_crd_cleanup(engine.clone())),
            tokio::spawn(compact_forever(engine.clone(), options.compaction)),
        ];
        Ok(Self {
            engine,
            server: options.server,
            security,
            tasks,
        })
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The API as an axum router, with this hub's server settings and, when configured, its
    /// security gate.
    pub fn router(&self) -> axum::Router {
        match &self.security {
            Some(security) => {
                secured_router(self.engine.clone(), self.server.clone(), security.clone())
            }
            None => router(self.engine.clone(), self.server.clone()),
        }
    }

    /// The hub's security gate, when it has one (for routes mounted beside the API).
    pub fn security(&self) -> Option<&Arc<Security>> {
        self.security.as_ref()
    }

    /// A kube-rs client talking to this hub in-process (trusted: no authentication, no TCP).
    pub fn client(&self) -> kube::Client {
        crate::client::in_process(router(self.engine.clone(), self.server.clone()), "default")
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

async fn compact_forever(engine: Engine, policy: Compaction) {
    let mut ticker = tokio::time::interval(policy.interval);
    ticker.tick().await;
    loop {
        ticker.tick().await;
        let store = engine.store();
        let target = store.current_revision() - policy.retain;
        if target > store.compacted_revision() {
            if let Err(e) = store.compact(target).await {
                tracing::warn!(error = %e, "compaction failed");
            } else {
                tracing::debug!(revision = target, "compacted store history");
            }
        }
    }
}
