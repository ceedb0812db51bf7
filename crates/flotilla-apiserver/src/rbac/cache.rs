//! Keeps a [`Policy`] in step with the stored RBAC objects: one list-then-watch per kind,
//! straight from the store, so a replica sees bindings written through any replica. A watch
//! that fails (compaction, a slow consumer) re-lists that kind.

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use flotilla_store::{EventKind, ListRequest};
use futures::StreamExt;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::{Attributes, Decision, Policy, PolicyRule, RbacKind};
use crate::auth::UserInfo;
use crate::engine::{Engine, decode};
use crate::registry::ResourceInfo;

/// A shared, store-fed [`Policy`]. Dropping it stops the watches.
#[derive(Debug)]
pub struct PolicyCache {
    policy: Arc<RwLock<Policy>>,
    changed: Arc<Notify>,
    tasks: Vec<JoinHandle<()>>,
}

impl PolicyCache {
    /// Lists the four kinds, then keeps following them. Returns once the first lists are
    /// applied, so the first request is authorized against the stored policy.
    pub async fn start(engine: &Engine) -> Self {
        let policy = Arc::new(RwLock::new(Policy::default()));
        let changed = Arc::new(Notify::new());
        let snap = engine.registry().snapshot();
        let mut tasks = Vec::new();
        for (kind, plural) in RbacKind::ALL {
            let Some(info) = snap.get("rbac.authorization.k8s.io", "v1", plural) else {
                continue;
            };
            let revision = relist(engine, &info, kind, &policy).await;
            tasks.push(tokio::spawn(follow(
                engine.clone(),
                info,
                kind,
                (policy.clone(), changed.clone()),
                revision,
            )));
        }
        Self {
            policy,
            changed,
            tasks,
        }
    }

    /// Notified after each change to the stored RBAC objects this cache applies.
    pub fn changed(&self) -> Arc<Notify> {
        self.changed.clone()
    }

    /// [`Policy::authorize`] on the current policy.
    pub fn authorize(&self, user: &UserInfo, attrs: &Attributes) -> Decision {
        self.policy
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .authorize(user, attrs)
    }

    /// [`Policy::rules_for`] on the current policy.
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> Vec<PolicyRule> {
        self.policy
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .rules_for(user, namespace)
    }
}

impl Drop for PolicyCache {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// Replaces every object of `kind` with a fresh list; returns the list's revision (0 when the
/// store cannot be read, so the watch replays everything it retains).
async fn relist(
    engine: &Engine,
    info: &ResourceInfo,
    kind: RbacKind,
    policy: &RwLock<Policy>,
) -> i64 {
    let request = ListRequest {
        prefix: info.prefix(),
        ..ListRequest::default()
    };
    match engine.store().list(request).await {
        Ok(list) => {
            let objects: Vec<_> = list
                .items
                .iter()
                .filter_map(|kv| decode(info, kv).ok())
                .collect();
            let mut p = policy.write().unwrap_or_else(PoisonError::into_inner);
            p.clear(kind);
            for obj in &objects {
                p.upsert(kind, obj);
            }
            list.revision
        }
        Err(e) => {
            tracing::warn!(error = %e, resource = info.plural, "listing RBAC objects failed");
            0
        }
    }
}

async fn follow(
    engine: Engine,
    info: Arc<ResourceInfo>,
    kind: RbacKind,
    (policy, changed): (Arc<RwLock<Policy>>, Arc<Notify>),
    mut revision: i64,
) {
    loop {
        let mut events = engine.store().watch(&info.prefix(), revision);
        while let Some(event) = events.next().await {
            let Ok(event) = event else { break };
            let Ok(obj) = decode(&info, &event.kv) else {
                continue;
            };
            let mut p = policy.write().unwrap_or_else(PoisonError::into_inner);
            match event.kind {
                EventKind::Put => p.upsert(kind, &obj),
                EventKind::Delete => {
                    let key = |k: &str| obj["metadata"][k].as_str().unwrap_or_default().to_string();
                    p.remove(kind, &key("namespace"), &key("name"));
                }
            }
            drop(p);
            changed.notify_one();
        }
        // The watch ended (compaction, a slow consumer, a store restart): start over.
        tokio::time::sleep(Duration::from_millis(200)).await;
        revision = relist(&engine, &info, kind, &policy).await;
    }
}
