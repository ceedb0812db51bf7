//! The binding statuses the work generator wrote that its watch has not brought back yet.
//!
//! The generator reconciles a binding again as soon as the binding's Work changes, often
//! before the watch delivers the status it wrote a moment ago; writing over the stale copy is
//! refused as a conflict. So each status written is kept, with the resourceVersion the write
//! returned, and a reconcile builds on whichever of it and the cached binding is newer. An
//! entry goes once a reconcile finds the cache at its version or later, or when the binding
//! is deleted, so there is at most one per binding.

use std::collections::HashMap;
use std::sync::Mutex;

use flotilla_api::placement::binding::ResourceBindingStatus;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// A binding's identity: its namespace (none for a `ClusterResourceBinding`) and name.
type Key = (Option<String>, String);

/// A status as written, and the resourceVersion the write returned.
struct Written {
    revision: u64,
    status: ResourceBindingStatus,
}

/// The statuses written and not yet seen back, by binding.
#[derive(Default)]
pub(crate) struct WrittenStatuses(Mutex<HashMap<Key, Written>>);

impl WrittenStatuses {
    /// The binding's metadata and status to build on: as cached (`meta`, `status`), or as
    /// last written if that is newer (the metadata then carries the written resourceVersion).
    pub fn latest(
        &self,
        meta: &ObjectMeta,
        status: Option<&ResourceBindingStatus>,
    ) -> (ObjectMeta, ResourceBindingStatus) {
        let cached = revision_of(meta);
        let mut written = self.lock();
        let key = key_of(meta);
        match written.get(&key) {
            Some(w) if w.revision > cached => {
                let mut meta = meta.clone();
                meta.resource_version = Some(w.revision.to_string());
                (meta, w.status.clone())
            }
            Some(_) => {
                // The watch has caught up: the cache is as new as the write, or newer.
                written.remove(&key);
                (meta.clone(), status.cloned().unwrap_or_default())
            }
            None => (meta.clone(), status.cloned().unwrap_or_default()),
        }
    }

    /// Records that the status of the binding with metadata `meta` was written as `status`,
    /// the write returning resourceVersion `revision`.
    pub fn remember(&self, meta: &ObjectMeta, revision: u64, status: ResourceBindingStatus) {
        self.lock()
            .insert(key_of(meta), Written { revision, status });
    }

    /// Forgets the binding with metadata `meta` (it is being deleted).
    pub fn forget(&self, meta: &ObjectMeta) {
        self.lock().remove(&key_of(meta));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Written>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn key_of(meta: &ObjectMeta) -> Key {
    (
        meta.namespace.clone(),
        meta.name.clone().unwrap_or_default(),
    )
}

fn revision_of(meta: &ObjectMeta) -> u64 {
    meta.resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(name: &str, version: u64) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.into()),
            resource_version: Some(version.to_string()),
            ..ObjectMeta::default()
        }
    }

    fn status(marker: &str) -> ResourceBindingStatus {
        serde_json::from_value(serde_json::json!({"conditions": [{
            "type": marker, "status": "True", "reason": "R", "message": "",
            "lastTransitionTime": "2026-11-22T00:00:00Z"}]}))
        .unwrap()
    }

    #[test]
    fn the_newer_of_the_cache_and_the_last_write_is_built_on() {
        let statuses = WrittenStatuses::default();
        let cached = status("Cached");
        let (m, s) = statuses.latest(&meta("a", 5), Some(&cached));
        assert_eq!(
            (m.resource_version.as_deref(), s),
            (Some("5"), cached.clone())
        );

        statuses.remember(&meta("a", 5), 7, status("Written"));
        let (m, s) = statuses.latest(&meta("a", 5), Some(&cached));
        assert_eq!(
            (m.resource_version.as_deref(), s),
            (Some("7"), status("Written")),
            "the watch has not brought the write back yet"
        );
        let (m, _) = statuses.latest(&meta("b", 5), None);
        assert_eq!(m.resource_version.as_deref(), Some("5"), "other bindings");

        let (m, s) = statuses.latest(&meta("a", 8), Some(&cached));
        assert_eq!(
            (m.resource_version.as_deref(), s),
            (Some("8"), cached.clone()),
            "the cache caught up and went past the write"
        );
        statuses.remember(&meta("a", 8), 9, status("Written"));
        statuses.forget(&meta("a", 8));
        let (m, _) = statuses.latest(&meta("a", 8), Some(&cached));
        assert_eq!(m.resource_version.as_deref(), Some("8"), "forgotten");
    }
}
