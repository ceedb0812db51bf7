//! Events on hub objects, as controllers record them: through kube-runtime's recorder
//! (`events.k8s.io/v1`), which deduplicates like client-go's event recorder (the same event on
//! the same object again within its cache window becomes one event with a series count), so
//! `kubectl describe` and `kubectl events` show what a controller did and why.

use k8s_openapi::api::core::v1::ObjectReference;
use kube::Resource;
use kube::api::ObjectMeta;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};

/// A controller's event recorder.
#[derive(Clone)]
pub struct EventRecorder {
    inner: Recorder,
}

impl std::fmt::Debug for EventRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventRecorder").finish_non_exhaustive()
    }
}

impl EventRecorder {
    /// A recorder writing as `controller` (the events' reporting controller).
    pub fn new(client: kube::Client, controller: &str) -> Self {
        let reporter = Reporter {
            controller: controller.to_string(),
            instance: std::env::var("HOSTNAME").ok(),
        };
        Self {
            inner: Recorder::new(client, reporter),
        }
    }

    /// Records an event on `regarding`: a Warning or a Normal one, with `reason` (PascalCase),
    /// `note` for people, and `action` (what the controller did). A failed write is logged:
    /// an event is never worth failing a reconcile.
    pub async fn record(
        &self,
        regarding: &ObjectReference,
        warning: bool,
        reason: &str,
        note: &str,
        action: &str,
    ) {
        let event = Event {
            type_: if warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: reason.to_string(),
            note: Some(note.chars().take(1024).collect()),
            action: action.to_string(),
            secondary: None,
        };
        if let Err(e) = self.inner.publish(&event, regarding).await {
            tracing::debug!(error = %e, reason, "event not recorded");
        }
    }
}

/// A reference to the object of kind `K` whose metadata is `meta`.
pub fn reference<K: Resource<DynamicType = ()>>(meta: &ObjectMeta) -> ObjectReference {
    ObjectReference {
        api_version: Some(K::api_version(&()).to_string()),
        kind: Some(K::kind(&()).to_string()),
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        uid: meta.uid.clone(),
        ..ObjectReference::default()
    }
}
