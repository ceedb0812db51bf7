//! The engine's level-triggered housekeeping controllers: namespace deletion (a deleted
//! namespace empties itself, then goes) and CRD cleanup (a deleted CRD deletes its objects,
//! then goes). Both wake on changes under a prefix; while a deletion is still emptying a
//! namespace or a CRD's objects they also look again every [`RESYNC`], and otherwise they
//! sleep until the next change (a cluster holds thousands of idle members in one process).

use std::collections::BTreeSet;
use std::time::Duration;

use flotilla_store::EventKind;

use futures::StreamExt;
use serde_json::Value;

use crate::engine::{DeleteOptions, Engine};
use crate::hooks::{CRD_CLEANUP_FINALIZER, NAMESPACE_FINALIZER};
use crate::object::{self, meta_str};
use crate::registry::ResourceInfo;
use crate::selectors::ListFilter;
use crate::status::ApiResult;

/// How often the housekeeping controllers look again while a deletion is in progress.
const RESYNC: Duration = Duration::from_secs(2);

/// Whether a reconcile left work that only time (other deletions finishing) will complete.
type Pending = bool;

/// What a housekeeping loop does next.
enum Next {
    /// Something changed.
    Event(flotilla_store::Event),
    /// Pending work is due another look.
    LookAgain,
    /// The watch ended (compaction or shutdown): start over.
    Ended,
}

/// Waits for the next change; with `pending` work, for at most [`RESYNC`].
async fn next_event(stream: &mut flotilla_store::WatchStream, pending: Pending) -> Next {
    let event = if pending {
        match tokio::time::timeout(RESYNC, stream.next()).await {
            Ok(event) => event,
            Err(_) => return Next::LookAgain,
        }
    } else {
        stream.next().await
    };
    match event {
        Some(Ok(event)) => Next::Event(event),
        Some(Err(_)) | None => Next::Ended,
    }
}

/// A reconcile's pending flag; a failed reconcile is logged and counts as pending (retried).
fn or_retry(result: ApiResult<Pending>, prefix: &str) -> Pending {
    result.unwrap_or_else(|e| {
        tracing::warn!(error = %e, prefix, "housekeeping reconcile failed");
        true
    })
}

/// Runs `reconcile` whenever something changes under `prefix`, and every [`RESYNC`] while it
/// reports pending work (or failed).
async fn level_loop<F, Fut>(engine: Engine, prefix: String, reconcile: F)
where
    F: Fn(Engine) -> Fut,
    Fut: std::future::Future<Output = ApiResult<Pending>>,
{
    loop {
        let mut stream = engine.store.watch(&prefix, engine.store.current_revision());
        loop {
            let pending = or_retry(reconcile(engine.clone()).await, &prefix);
            match next_event(&mut stream, pending).await {
                Next::Event(_) | Next::LookAgain => {}
                Next::Ended => break,
            }
        }
    }
}

/// Runs the namespace-deletion controller forever. It keeps the set of terminating
/// namespaces from the watch (reading only each changed namespace, so thousands of namespaces
/// cost nothing while none is deleted) and works only on those.
pub async fn run_namespaces(engine: Engine) {
    let Some(info) = engine.registry.snapshot().get("", "v1", "namespaces") else {
        return;
    };
    let prefix = info.prefix();
    loop {
        let revision = engine.store.current_revision();
        let mut stream = engine.store.watch(&prefix, revision);
        let mut terminating = match engine.list(&info, None, &ListFilter::default()).await {
            Ok(list) => list
                .items
                .iter()
                .filter(|n| meta_str(n, "deletionTimestamp").is_some())
                .filter_map(|n| meta_str(n, "name").map(String::from))
                .collect(),
            Err(e) => {
                tracing::warn!(error = %e, "listing namespaces");
                tokio::time::sleep(RESYNC).await;
                continue;
            }
        };
        loop {
            let pending = or_retry(finish_namespaces(&engine, &mut terminating).await, &prefix);
            match next_event(&mut stream, pending).await {
                Next::Event(event) => note_namespace(&event, &mut terminating),
                Next::LookAgain => {}
                Next::Ended => break,
            }
        }
    }
}

/// The fields of a stored namespace the controller needs.
#[derive(serde::Deserialize)]
struct NamespaceMeta {
    metadata: NamespaceMetaFields,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct NamespaceMetaFields {
    name: String,
    #[serde(default)]
    deletion_timestamp: Option<serde::de::IgnoredAny>,
}

/// Adds a namespace to `terminating` when an event shows it being deleted; drops it when gone.
fn note_namespace(event: &flotilla_store::Event, terminating: &mut BTreeSet<String>) {
    let Ok(ns) = serde_json::from_slice::<NamespaceMeta>(&event.kv.value) else {
        return;
    };
    match event.kind {
        EventKind::Delete => {
            terminating.remove(&ns.metadata.name);
        }
        EventKind::Put if ns.metadata.deletion_timestamp.is_some() => {
            terminating.insert(ns.metadata.name);
        }
        EventKind::Put => {}
    }
}

/// Empties each terminating namespace and releases those that are empty. Returns whether any
/// still has objects being deleted.
async fn finish_namespaces(
    engine: &Engine,
    terminating: &mut BTreeSet<String>,
) -> ApiResult<Pending> {
    let snap = engine.registry.snapshot();
    let Some(ns_info) = snap.get("", "v1", "namespaces") else {
        return Ok(false);
    };
    let mut pending = false;
    for name in terminating.clone() {
        let mut remaining = 0;
        for info in snap.storage_resources().iter().filter(|r| r.namespaced) {
            remaining += empty_collection(engine, info, Some(&name)).await?;
        }
        if remaining > 0 {
            pending = true;
            continue;
        }
        engine
            .update_existing(&ns_info, None, &name, |obj| {
                if let Some(f) = obj
                    .pointer_mut("/spec/finalizers")
                    .and_then(Value::as_array_mut)
                {
                    f.retain(|x| x != NAMESPACE_FINALIZER);
                }
            })
            .await
            .map(|_| ())
            .or_else(|e| if e.code == 404 { Ok(()) } else { Err(e) })?;
        // Its deletion event removes it from the set; until then, look again.
        pending = true;
    }
    Ok(pending)
}

/// Deletes every object of `info` in `ns` (all namespaces if None); returns how many remain.
async fn empty_collection(
    engine: &Engine,
    info: &ResourceInfo,
    ns: Option<&str>,
) -> ApiResult<usize> {
    let list = engine.list(info, ns, &ListFilter::default()).await?;
    let mut remaining = 0;
    for obj in &list.items {
        remaining += 1;
        if meta_str(obj, "deletionTimestamp").is_some() {
            continue;
        }
        let name = meta_str(obj, "name").unwrap_or_default();
        let opts = DeleteOptions {
            propagation: Some("Background".into()),
            ..Default::default()
        };
        match engine
            .delete(info, meta_str(obj, "namespace"), name, &opts)
            .await
        {
            Ok(d) if d.gone => remaining -= 1,
            Ok(_) => {}
            Err(e) if e.code == 404 => remaining -= 1,
            Err(e) => return Err(e),
        }
    }
    Ok(remaining)
}

/// Runs the CRD-cleanup controller forever.
pub async fn run_crd_cleanup(engine: Engine) {
    let Some(info) = crate::hooks::crd_info(&engine) else {
        return;
    };
    let prefix = info.prefix();
    level_loop(engine, prefix, reconcile_crds).await;
}

async fn reconcile_crds(engine: Engine) -> ApiResult<Pending> {
    let snap = engine.registry.snapshot();
    let Some(crd_info) = snap.get("apiextensions.k8s.io", "v1", "customresourcedefinitions") else {
        return Ok(false);
    };
    let mut pending = false;
    let crds = engine.list(&crd_info, None, &ListFilter::default()).await?;
    for crd in crds
        .items
        .iter()
        .filter(|c| meta_str(c, "deletionTimestamp").is_some())
    {
        if !object::finalizers(crd)
            .iter()
            .any(|f| f == CRD_CLEANUP_FINALIZER)
        {
            continue;
        }
        let name = meta_str(crd, "name").unwrap_or_default().to_string();
        let mut remaining = 0;
        if let Some(storage) = snap
            .crd_resources(&name)
            .iter()
            .find(|r| r.serves_storage_version())
        {
            remaining = empty_collection(&engine, storage, None).await?;
        }
        if remaining == 0 {
            engine
                .update_existing(&crd_info, None, &name, |obj| {
                    object::remove_finalizer(obj, CRD_CLEANUP_FINALIZER)
                })
                .await
                .map(|_| ())
                .or_else(|e| if e.code == 404 { Ok(()) } else { Err(e) })?;
        } else {
            pending = true;
        }
    }
    Ok(pending)
}
